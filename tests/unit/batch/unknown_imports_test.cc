// Function imports nothing provides, stood in for
// (BatchSpec::unknown_imports, runtime/unknown_imports.h): a call traps
// with a message naming the import, or returns zeros of its result types,
// on every backend and tier; an instance that never calls one runs as it
// would without; memories, tables and globals nothing provides stay an
// error. The CPU cases run everywhere; the GPU ones where a GPU is present.
#include <gtest/gtest.h>

#include "backend_ways.h"
#include "batch/batch.h"
#include "batch/resident.h"
#include "exec/gpu/gpu_backend.h"
#include "runtime/unknown_imports.h"

namespace ww::batch {
namespace {

/* wat2wasm of:
(module
  (type $ii (func (param i32) (result i32)))
  (import "env" "foo" (func $foo (type $ii)))
  (import "env" "i64s" (func $i64s (param f64) (result i64)))
  (import "env" "f32s" (func $f32s (result f32)))
  (import "env" "f64s" (func $f64s (param i64 i32) (result f64)))
  (import "env" "refs" (func $refs (result funcref externref)))
  (import "wbg" "__wbindgen_placeholder__" (func $hook (param i32)))
  (table 1 funcref)
  (elem (i32.const 0) $foo)
  ;; Odd instances call env.foo; even ones never do.
  (func (export "run") (param i32) (result i32)
    (if (result i32) (i32.and (local.get 0) (i32.const 1))
      (then (call $foo (local.get 0)))
      (else (i32.add (local.get 0) (i32.const 1)))))
  ;; The same through the table.
  (func (export "indirect") (param i32) (result i32)
    (call_indirect (type $ii) (local.get 0) (i32.const 0)))
  (func (export "i64") (result i64) (call $i64s (f64.const 1.5)))
  (func (export "f32") (result f32) (call $f32s))
  (func (export "f64") (result f64) (call $f64s (i64.const 7) (i32.const 8)))
  ;; 1 + 2 when both references are null.
  (func (export "nulls") (result i32)
    (local $e externref)
    (call $refs)
    (local.set $e)
    (ref.is_null)
    (i32.shl (ref.is_null (local.get $e)) (i32.const 1))
    (i32.or))
  ;; A notification hook that returns nothing: the instance goes on.
  (func (export "hooked") (param i32) (result i32)
    (call $hook (local.get 0))
    (i32.mul (local.get 0) (i32.const 3))))
*/
const std::vector<uint8_t> kUnknown = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x2a, 0x09, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7c,
    0x01, 0x7e, 0x60, 0x00, 0x01, 0x7d, 0x60, 0x02, 0x7e, 0x7f, 0x01, 0x7c, 0x60, 0x00, 0x02, 0x70, 0x6f, 0x60, 0x01,
    0x7f, 0x00, 0x60, 0x00, 0x01, 0x7e, 0x60, 0x00, 0x01, 0x7c, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x56, 0x06, 0x03, 0x65,
    0x6e, 0x76, 0x03, 0x66, 0x6f, 0x6f, 0x00, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x69, 0x36, 0x34, 0x73, 0x00, 0x01,
    0x03, 0x65, 0x6e, 0x76, 0x04, 0x66, 0x33, 0x32, 0x73, 0x00, 0x02, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x66, 0x36, 0x34,
    0x73, 0x00, 0x03, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x72, 0x65, 0x66, 0x73, 0x00, 0x04, 0x03, 0x77, 0x62, 0x67, 0x18,
    0x5f, 0x5f, 0x77, 0x62, 0x69, 0x6e, 0x64, 0x67, 0x65, 0x6e, 0x5f, 0x70, 0x6c, 0x61, 0x63, 0x65, 0x68, 0x6f, 0x6c,
    0x64, 0x65, 0x72, 0x5f, 0x5f, 0x00, 0x05, 0x03, 0x08, 0x07, 0x00, 0x00, 0x06, 0x02, 0x07, 0x08, 0x00, 0x04, 0x04,
    0x01, 0x70, 0x00, 0x01, 0x07, 0x35, 0x07, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x06, 0x08, 0x69, 0x6e, 0x64, 0x69, 0x72,
    0x65, 0x63, 0x74, 0x00, 0x07, 0x03, 0x69, 0x36, 0x34, 0x00, 0x08, 0x03, 0x66, 0x33, 0x32, 0x00, 0x09, 0x03, 0x66,
    0x36, 0x34, 0x00, 0x0a, 0x05, 0x6e, 0x75, 0x6c, 0x6c, 0x73, 0x00, 0x0b, 0x06, 0x68, 0x6f, 0x6f, 0x6b, 0x65, 0x64,
    0x00, 0x0c, 0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00, 0x0a, 0x59, 0x07, 0x14, 0x00, 0x20, 0x00, 0x41,
    0x01, 0x71, 0x04, 0x7f, 0x20, 0x00, 0x10, 0x00, 0x05, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x0b, 0x09, 0x00, 0x20,
    0x00, 0x41, 0x00, 0x11, 0x00, 0x00, 0x0b, 0x0d, 0x00, 0x44, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f, 0x10,
    0x01, 0x0b, 0x04, 0x00, 0x10, 0x02, 0x0b, 0x08, 0x00, 0x42, 0x07, 0x41, 0x08, 0x10, 0x03, 0x0b, 0x10, 0x01, 0x01,
    0x6f, 0x10, 0x04, 0x21, 0x00, 0xd1, 0x20, 0x00, 0xd1, 0x41, 0x01, 0x74, 0x72, 0x0b, 0x0b, 0x00, 0x20, 0x00, 0x10,
    0x05, 0x20, 0x00, 0x41, 0x03, 0x6c, 0x0b,
};

/* wat2wasm of:
(module
  (import "env" "vec" (func $vec (param v128) (result v128 i32)))
  (func (export "vec") (result v128 i32) (call $vec (v128.const i32x4 1 2 3 4))))
*/
const std::vector<uint8_t> kVec = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x02, 0x60, 0x01, 0x7b, 0x02, 0x7b, 0x7f, 0x60, 0x00,
    0x02, 0x7b, 0x7f, 0x02, 0x0b, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x76, 0x65, 0x63, 0x00, 0x00, 0x03, 0x02, 0x01,
    0x01, 0x07, 0x07, 0x01, 0x03, 0x76, 0x65, 0x63, 0x00, 0x01, 0x0a, 0x18, 0x01, 0x16, 0x00, 0xfd, 0x0c, 0x01, 0x00,
    0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x10, 0x00, 0x0b,
};

/* wat2wasm of:
(module
  (import "env" "mem" (memory 1))
  (func (export "run") (result i32) (i32.const 1)))
*/
const std::vector<uint8_t> kMemory = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x0c,
    0x01, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x01, 0x03, 0x02, 0x01, 0x00, 0x07,
    0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x01, 0x0b,
};

/* wat2wasm of:
(module
  (import "env" "tab" (table 1 funcref))
  (func (export "run") (result i32) (i32.const 1)))
*/
const std::vector<uint8_t> kTable = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x0d,
    0x01, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x74, 0x61, 0x62, 0x01, 0x70, 0x00, 0x01, 0x03, 0x02, 0x01, 0x00,
    0x07, 0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x01, 0x0b,
};

/* wat2wasm of:
(module
  (import "env" "g" (global i32))
  (func (export "run") (result i32) (global.get 0)))
*/
const std::vector<uint8_t> kGlobal = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x02,
    0x0a, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x01, 0x67, 0x03, 0x7f, 0x00, 0x03, 0x02, 0x01, 0x00, 0x07,
    0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x23, 0x00, 0x0b,
};

// A call of `name` on n instances, with the index as its argument when it
// takes one.
BatchSpec spec_of(const std::vector<uint8_t>& bytes, const char* name, uint64_t n, const Way& way, UnknownImports how) {
  auto cm = compile_module(bytes);
  EXPECT_TRUE(cm.ok()) << cm.error().message;
  BatchSpec s;
  s.module = *cm;
  s.export_name = name;
  s.instances = n;
  s.backend = way.backend;
  s.tier = way.tier;
  s.threads = 2;
  s.cache.dir = WW_BINARY_DIR "/test-code-cache";
  s.unknown_imports = how;
  if (!export_function_type((*cm)->module, name)->params.empty()) {
    s.args.resize(1);
    s.args[0].kind = ArgSource::Index;
  }
  return s;
}

// Instance i's trap message, as the API and the command line show it.
std::string message(const BatchSpec& s, const BatchResult& r, uint64_t i) {
  return trap_text(s.module->module, TrapCode(r.traps[i]), r.trap_func[i]);
}

// The run on `way`, which must have run on its tier (compiled code
// included: no quiet fallback to the interpreter).
Result<BatchResult> run_on(const BatchSpec& s, const Way& way) {
  Result<BatchResult> r = run(s);
  if (r.ok()) {
    EXPECT_EQ(r->backend, way.backend);
    EXPECT_EQ(r->segments.back().tier, way.tier) << r->compile.fallback;
  }
  return r;
}

TEST(UnknownImports, TrapNamesTheImportAndSparesTheOtherInstances) {
  const uint64_t n = 64;
  for (const Way& way : ways()) {
    SCOPED_TRACE(name_of(way));
    const BatchSpec s = spec_of(kUnknown, "run", n, way, UnknownImports::Trap);
    auto r = run_on(s, way);
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < n; ++i) {
      if (i % 2) {
        ASSERT_EQ(r->traps[i], uint8_t(TrapCode::UnknownImport)) << i;
        EXPECT_EQ(message(s, *r, i), "unknown import called: env.foo") << i;
        EXPECT_EQ(r->trap_func[i], 0u) << i;
        EXPECT_EQ(r->trap_pc[i], kNoTrapPc) << i;
      } else {
        ASSERT_EQ(r->traps[i], 0) << i << ": " << message(s, *r, i);
        EXPECT_EQ(r->result_bits(i, 0), i + 1) << i;
        EXPECT_EQ(r->finished[i], 1) << i;
      }
    }
    // Through a table, and an import of another module name.
    const BatchSpec ind = spec_of(kUnknown, "indirect", 3, way, UnknownImports::Trap);
    auto ri = run_on(ind, way);
    ASSERT_TRUE(ri.ok()) << ri.error().message;
    for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(message(ind, *ri, i), "unknown import called: env.foo") << i;
    const BatchSpec hook = spec_of(kUnknown, "hooked", 3, way, UnknownImports::Trap);
    auto rh = run_on(hook, way);
    ASSERT_TRUE(rh.ok()) << rh.error().message;
    EXPECT_EQ(message(hook, *rh, 2), "unknown import called: wbg.__wbindgen_placeholder__");
    EXPECT_EQ(rh->trap_func[2], 5u);
  }
}

TEST(UnknownImports, DefaultReturnsZerosOfEveryResultType) {
  const uint64_t n = 40;
  for (const Way& way : ways()) {
    SCOPED_TRACE(name_of(way));
    auto one = [&](const char* name, uint64_t instances) {
      const BatchSpec s = spec_of(kUnknown, name, instances, way, UnknownImports::Default);
      Result<BatchResult> r = run_on(s, way);
      EXPECT_TRUE(r.ok()) << name << ": " << r.error().message;
      if (r.ok())
        for (uint64_t i = 0; i < instances; ++i) EXPECT_EQ(r->traps[i], 0) << name << " " << i;
      return r;
    };
    auto r = one("run", n);
    ASSERT_TRUE(r.ok());
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(r->result_bits(i, 0), i % 2 ? 0 : i + 1) << i;
    auto hooked = one("hooked", n);  // a hook without results: the instance goes on
    ASSERT_TRUE(hooked.ok());
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(hooked->result_bits(i, 0), 3 * i) << i;
    auto ind = one("indirect", 2);
    ASSERT_TRUE(ind.ok());
    EXPECT_EQ(ind->result_bits(1, 0), 0u);
    // i64 0, f32 and f64 +0.0 (all bits clear), null funcref and externref.
    for (const char* name : {"i64", "f32", "f64"}) {
      auto z = one(name, 2);
      ASSERT_TRUE(z.ok());
      EXPECT_EQ(z->result_bits(0, 0), 0u) << name;
      EXPECT_EQ(z->result_bits(1, 0), 0u) << name;
    }
    auto nulls = one("nulls", 2);
    ASSERT_TRUE(nulls.ok());
    EXPECT_EQ(nulls->result_bits(1, 0), 3u);
  }
}

// A v128 result is a zero vector. The CPU only: calls out of the GPU carry
// one word a value, so the GPU refuses imports with v128 in their type.
TEST(UnknownImports, V128OnTheCpu) {
  for (const Way& way : ways()) {
    if (way.backend != Backend::Cpu) continue;
    SCOPED_TRACE(name_of(way));
    const BatchSpec s = spec_of(kVec, "vec", 3, way, UnknownImports::Default);
    auto r = run_on(s, way);
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < 3; ++i) {
      ASSERT_EQ(r->traps[i], 0) << i;
      EXPECT_EQ(r->result_bits(i, 0), 0u);
      EXPECT_EQ(r->results_hi[i * 2], 0u);
      EXPECT_EQ(r->result_bits(i, 1), 0u);
    }
    const BatchSpec t = spec_of(kVec, "vec", 1, way, UnknownImports::Trap);
    auto rt = run_on(t, way);
    ASSERT_TRUE(rt.ok()) << rt.error().message;
    EXPECT_EQ(message(t, *rt, 0), "unknown import called: env.vec");
  }
}

TEST(UnknownImports, AnErrorWithoutTheOption) {
  const BatchSpec s = spec_of(kUnknown, "run", 4, {Backend::Cpu, Tier::Interp}, UnknownImports::Error);
  auto r = run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "unsatisfied import env.foo (func)");
}

TEST(UnknownImports, MemoriesTablesAndGlobalsStayAnError) {
  struct Case {
    const std::vector<uint8_t>* bytes;
    const char* what;
  };
  for (const Case& c :
       {Case{&kMemory, "unsatisfied import env.mem (memory)"}, Case{&kTable, "unsatisfied import env.tab (table)"},
        Case{&kGlobal, "unsatisfied import env.g (global)"}})
    for (UnknownImports how : {UnknownImports::Trap, UnknownImports::Default}) {
      auto r = run(spec_of(*c.bytes, "run", 2, {Backend::Cpu, Tier::Interp}, how));
      ASSERT_FALSE(r.ok()) << c.what;
      EXPECT_EQ(r.error().message,
                std::string(c.what) + ": only function imports can be left unknown (trap or default)");
    }
}

// The embedder's host function serves its import; only the others are
// unknown.
TEST(UnknownImports, HostFunctionsStillServeTheirImports) {
  for (const Way& way : ways()) {
    SCOPED_TRACE(name_of(way));
    BatchSpec s = spec_of(kUnknown, "run", 8, way, UnknownImports::Trap);
    s.host_functions = {{"env", "foo", FuncType{{ValType::I32}, {ValType::I32}}, [](uint64_t, uint64_t* io) {
                           io[0] = uint32_t(io[0]) * 10;
                           return TrapCode::None;
                         }}};
    auto r = run_on(s, way);
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < 8; ++i) {
      ASSERT_EQ(r->traps[i], 0) << i << ": " << message(s, *r, i);
      EXPECT_EQ(r->result_bits(i, 0), i % 2 ? 10 * i : i + 1) << i;
    }
    s.export_name = "hooked";
    auto h = run_on(s, way);
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(message(s, *h, 1), "unknown import called: wbg.__wbindgen_placeholder__");
  }
}

// Chained calls stop at the trap; resident instances keep it, naming the
// import again in later batches.
TEST(UnknownImports, ChainsAndResidentInstances) {
  const uint64_t n = 6;
  for (const Way& way : ways()) {
    SCOPED_TRACE(name_of(way));
    BatchSpec chain = spec_of(kUnknown, "hooked", n, way, UnknownImports::Default);
    chain.then = {{"run", 1, {chain.args[0]}}};
    auto c = run_on(chain, way);
    ASSERT_TRUE(c.ok()) << c.error().message;
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(c->result_bits(i, 0), i % 2 ? 0 : i + 1) << i;
    chain.unknown_imports = UnknownImports::Trap;
    c = run_on(chain, way);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(message(chain, *c, 3), "unknown import called: wbg.__wbindgen_placeholder__");

    Resident res(n);
    BatchSpec base = spec_of(kUnknown, "run", n, way, UnknownImports::Trap);
    base.resident = &res;
    ASSERT_TRUE(start_resident(base, res).ok());
    for (int round = 0; round < 2; ++round) {
      auto r = run(base);
      ASSERT_TRUE(r.ok()) << r.error().message;
      for (uint64_t i = 0; i < n; ++i) {
        if (i % 2) EXPECT_EQ(message(base, *r, i), "unknown import called: env.foo") << round << " " << i;
        else EXPECT_EQ(r->result_bits(i, 0), i + 1) << round << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ww::batch
