// The compiled tier's parts: the code generator (what it compiles and how
// it writes ops), the code cache (hit, miss, corrupt entry, concurrent
// compiles, an unwritable directory), the host compiler failing in every
// way, and NVRTC compiling the GPU form (no GPU needed). Behaviour of
// compiled code is tests/unit/exec's (every test on both tiers), the spec
// suite's (spec_compiled_cpu) and the differential test's.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cache/code_cache.h"
#include "codegen/embedded.h"
#include "codegen/function_ops.h"
#include "codegen/generator.h"
#include "codegen/nan_blind.h"
#include "codegen/op_templates.h"
#include "common/build_id.h"
#include "compiled/compiled_tier.h"
#include "compiled/cpu_native.h"
#include "compiled/host_compiler.h"
#include "exec/gpu/gpu_backend.h"
#include "runtime/runtime.h"
#include "scratch.h"
#include "store/store.h"

namespace ww {
namespace {

// calls.wat:
//   (module
//     (type $ii (func (param i32) (result i32)))
//     (table 2 funcref)
//     (elem (i32.const 0) $twice)
//     (func $twice (type $ii) local.get 0 i32.const 2 i32.mul)
//     (func $helper (param i32) (result i32) local.get 0 i32.const 1 i32.add)
//     (func $unused (param i32) (result i32) local.get 0 call $helper)
//     (func $add (export "add") (param i32 i32) (result i32)
//       local.get 0 local.get 1 i32.add call $helper)
//     (func (export "ind") (param i32 i32) (result i32)
//       local.get 0 local.get 1 call_indirect (type $ii))
//     (func (export "loop") (param i32) (result i32) (local i32)
//       loop
//         local.get 1 local.get 0 i32.add local.set 1
//         local.get 0 i32.const 1 i32.sub local.tee 0
//         br_if 0
//       end
//       local.get 1))
const std::vector<uint8_t> kCalls = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02,
    0x7f, 0x7f, 0x01, 0x7f, 0x03, 0x07, 0x06, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x04, 0x04, 0x01, 0x70, 0x00,
    0x02, 0x07, 0x14, 0x03, 0x03, 0x61, 0x64, 0x64, 0x00, 0x03, 0x03, 0x69, 0x6e, 0x64, 0x00, 0x04, 0x04, 0x6c,
    0x6f, 0x6f, 0x70, 0x00, 0x05, 0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00, 0x0a, 0x46, 0x06, 0x07,
    0x00, 0x20, 0x00, 0x41, 0x02, 0x6c, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x06, 0x00, 0x20,
    0x00, 0x10, 0x01, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x10, 0x01, 0x0b, 0x09, 0x00, 0x20, 0x00,
    0x20, 0x01, 0x11, 0x00, 0x00, 0x0b, 0x19, 0x01, 0x01, 0x7f, 0x03, 0x40, 0x20, 0x01, 0x20, 0x00, 0x6a, 0x21,
    0x01, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b, 0x20, 0x01, 0x0b,
};

std::shared_ptr<const CompiledModule> calls_module() {
  auto cm = compile_module(kCalls);
  EXPECT_TRUE(cm.ok()) << cm.error().to_string();
  return cm.ok() ? *cm : nullptr;
}

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// ------------------------------------------------------------ the generator

TEST(Generator, CompilesWhatTheEntriesAndTablesReach) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  // add -> helper; unused, ind and loop are not reached, nor is twice: it
  // is in a table, but nothing reached makes an indirect call.
  std::vector<bool> r = codegen::reachable_functions(*cm, {3});
  EXPECT_EQ(r, (std::vector<bool>{false, true, false, true, false, false}));
  // ind's call_indirect of type $ii reaches the table's function of that type.
  r = codegen::reachable_functions(*cm, {4});
  EXPECT_EQ(r, (std::vector<bool>{true, false, false, false, true, false}));
  // No entries: every export.
  std::vector<bool> referenced;
  r = codegen::reachable_functions(*cm, {}, &referenced);
  EXPECT_EQ(r, (std::vector<bool>{true, true, false, true, true, true}));
  // Only twice is in a table: only a call_indirect can reach it.
  EXPECT_EQ(referenced, (std::vector<bool>{true, false, false, false, false, false}));
}

TEST(Generator, WritesOpsAsTheirOpsDefBodies) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  codegen::Options o;
  auto g = codegen::generate(*cm, o);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::string& src = g->source;
  // i32.add of locals 0 and 1 into slot 2: ops.def's body with the slots
  // filled in, the arithmetic still sem::i32_add.
  EXPECT_NE(src.find("W32(2, sem::i32_add(R32(0), R32(1)))"), std::string::npos) << src;
  EXPECT_NE(std::string(codegen::op_body_text(BcOp::I32Add)).find("sem::i32_add(R32(s1), R32(s2))"), std::string::npos);
  // A direct call is a C++ call with the depth check; the loop's branch
  // back is a counted back-edge; call_indirect calls its type's
  // dispatcher, defined once, which switches over the functions a table
  // can hold (twice, not helper: same type, but in no table) and leaves
  // the rest to the host.
  EXPECT_NE(src.find("auto res_ = f1(I, depth + 1, r2)"), std::string::npos);
  EXPECT_NE(src.find("WW_BACK_EDGE(); goto L"), std::string::npos);
  EXPECT_NE(src.find("auto res_ = dispatch_indirect0(I, depth, kFn, kPc, ref_, r2)"), std::string::npos) << src;
  const size_t def =
      src.find("dispatch_indirect0(Inst& I, uint32_t depth, uint32_t kFn, uint32_t kPc, uint64_t ref_, uint64_t a0) {");
  ASSERT_NE(def, std::string::npos) << src;
  const std::string body = src.substr(def, src.find("\n}\n", def) - def);
  EXPECT_NE(body.find("case 0u: "), std::string::npos) << body;
  EXPECT_NE(body.find("return f0(I, depth + 1, a0)"), std::string::npos) << body;
  EXPECT_EQ(body.find("f1("), std::string::npos) << body;
  EXPECT_NE(body.find("I.api->call_ref"), std::string::npos) << body;
  // Every exported function has an entry point; unreached code is absent.
  EXPECT_EQ(g->entries, (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(g->compiled, (std::vector<uint32_t>{0, 1, 3, 4, 5}));
  EXPECT_EQ(src.find(" f2("), std::string::npos);
}

TEST(Generator, MeteredCodeAndTheGpuFormDiffer) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  codegen::Options o;
  auto plain = codegen::generate(*cm, o);
  o.metered = true;
  auto metered = codegen::generate(*cm, o);
  o.target = codegen::Target::Gpu;
  auto gpu = codegen::generate(*cm, o);
  ASSERT_TRUE(plain.ok() && metered.ok() && gpu.ok());
  EXPECT_NE(plain->source.find("#define WW_METERED 0"), std::string::npos);
  EXPECT_NE(metered->source.find("#define WW_METERED 1"), std::string::npos);
  EXPECT_NE(gpu->source.find(codegen::kGpuKernelName), std::string::npos);
  EXPECT_EQ(gpu->source.find("call_ref"), std::string::npos);
}

TEST(Generator, TheTranslationUnitIsSelfContained) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  auto g = codegen::generate(*cm, {});
  ASSERT_TRUE(g.ok());
  auto unit = codegen::amalgamate(g->source, codegen::Toolchain::HostCxx);
  ASSERT_TRUE(unit.ok()) << unit.error().message;
  EXPECT_EQ(unit->find("#include \""), std::string::npos);
  auto bad = codegen::amalgamate("#include \"no/such/header.h\"\n", codegen::Toolchain::HostCxx);
  EXPECT_FALSE(bad.ok());
}

// nan.wat:
//   (module
//     (memory 1)
//     (func (export "stored") (param f32 f32) (result i32)
//       i32.const 0 local.get 0 local.get 1 f32.add f32.store
//       i32.const 0 i32.load)
//     (func (export "chained") (param f32 f32) (result f32)
//       local.get 0 local.get 1 f32.add f32.const 2 f32.mul)
//     (func (export "neg") (param f32 f32) (result i32)
//       local.get 0 local.get 1 f32.add f32.neg i32.reinterpret_f32)
//     (func (export "compare") (param f32 f32) (result i32)
//       local.get 0 local.get 1 f32.add local.get 0 f32.ne))
const std::vector<uint8_t> kNan = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0d, 0x02, 0x60, 0x02, 0x7d, 0x7d, 0x01, 0x7f, 0x60, 0x02,
    0x7d, 0x7d, 0x01, 0x7d, 0x03, 0x05, 0x04, 0x00, 0x01, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x24, 0x04,
    0x06, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x64, 0x00, 0x00, 0x07, 0x63, 0x68, 0x61, 0x69, 0x6e, 0x65, 0x64, 0x00, 0x01,
    0x03, 0x6e, 0x65, 0x67, 0x00, 0x02, 0x07, 0x63, 0x6f, 0x6d, 0x70, 0x61, 0x72, 0x65, 0x00, 0x03, 0x0a, 0x36, 0x04,
    0x11, 0x00, 0x41, 0x00, 0x20, 0x00, 0x20, 0x01, 0x92, 0x38, 0x02, 0x00, 0x41, 0x00, 0x28, 0x02, 0x00, 0x0b, 0x0d,
    0x00, 0x20, 0x00, 0x20, 0x01, 0x92, 0x43, 0x00, 0x00, 0x00, 0x40, 0x94, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01,
    0x92, 0x8c, 0xbc, 0x0b, 0x0a, 0x00, 0x20, 0x00, 0x20, 0x01, 0x92, 0x20, 0x00, 0x5c, 0x0b,
};

TEST(Generator, NaNsStayCanonicalWhereTheirBitsShow) {
  auto cm = compile_module(kNan);
  ASSERT_TRUE(cm.ok()) << cm.error().to_string();
  // Which arithmetic results may be written raw: "chained"'s add feeds a
  // mul (raw), the mul is returned (canonical); the others' adds are
  // stored, negated or compared against.
  const Module& m = (*cm)->module;
  for (uint32_t def = 0; def < m.funcs.size(); ++def) {
    auto ops = codegen::decode_function((*cm)->code.bytecode, def);
    ASSERT_TRUE(ops.ok());
    std::vector<bool> raw = codegen::raw_float_writes(m, (*cm)->code.bytecode, *ops, def);
    std::vector<BcOp> raw_ops, canon_ops;
    for (size_t i = 0; i < ops->size(); ++i) {
      BcOp op = (*ops)[i].d.op;
      if (op != BcOp::F32Add && op != BcOp::F32Mul) continue;
      (raw[i] ? raw_ops : canon_ops).push_back(op);
    }
    if (def == 1) {
      EXPECT_EQ(raw_ops, (std::vector<BcOp>{BcOp::F32Add}));
      EXPECT_EQ(canon_ops, (std::vector<BcOp>{BcOp::F32Mul}));
    } else if (def == 3) {
      EXPECT_EQ(raw_ops, (std::vector<BcOp>{BcOp::F32Add}));  // only compared
    } else {
      EXPECT_TRUE(raw_ops.empty()) << def;
    }
  }
  // And the bits: a NaN with a payload x86 would keep comes out canonical
  // wherever it shows, as from the interpreter.
  auto native = compiled::compile_cpu(
      [&] {
        compiled::Request r;
        r.module = *cm;
        r.cache.enabled = false;
        return r;
      }(),
      nullptr);
  ASSERT_TRUE(native.ok()) << native.error().message;
  for (bool use_native : {false, true}) {
    Store store;
    if (use_native) store.impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return *native; };
    auto inst = store.instantiate(*cm, {});
    ASSERT_EQ(inst.index(), 0u);
    auto call = [&](const char* name) {
      return store.invoke(store.get_export(std::get<0>(inst), name)->addr,
                          {Value::f32_bits(0x7fe00001u), Value::f32_bits(0x3f800000u)});
    };
    EXPECT_EQ(call("stored").results[0].bits, 0x7fc00000u) << use_native;
    EXPECT_EQ(call("chained").results[0].bits, 0x7fc00000u) << use_native;
    EXPECT_EQ(call("neg").results[0].bits, 0xffc00000u) << use_native;
    EXPECT_EQ(call("compare").results[0].bits, 1u) << use_native;
  }
}

// ------------------------------------------------------------ the cache

TEST(CodeCache, KeysSeparateTheirParts) {
  EXPECT_NE(cache_key({"ab", "c"}), cache_key({"a", "bc"}));
  EXPECT_EQ(cache_key({"x"}), cache_key({"x"}));
  EXPECT_EQ(cache_key({"x"}).size(), 32u);
}

TEST(CodeCache, HitMissAndCorruptEntry) {
  CacheOptions o;
  o.dir = scratch_dir("cache-basic");
  CodeCache c(o);
  std::string note;
  EXPECT_FALSE(c.get("k1", &note).has_value());
  EXPECT_TRUE(note.empty());
  std::vector<uint8_t> payload(1000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = uint8_t(i * 7);
  ASSERT_TRUE(c.put("k1", payload).ok());
  EXPECT_TRUE(c.contains("k1"));
  auto hit = c.get("k1", &note);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, payload);

  // One flipped byte, then a truncated file: detected, reported, rebuilt.
  const std::string path = c.entry_path("k1");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put(char(0x55));
  }
  EXPECT_FALSE(c.get("k1", &note).has_value());
  EXPECT_NE(note.find("corrupt"), std::string::npos);
  ASSERT_TRUE(c.put("k1", payload).ok());
  EXPECT_TRUE(c.get("k1", &note).has_value());
  ASSERT_EQ(truncate(path.c_str(), 500), 0);
  note.clear();
  EXPECT_FALSE(c.get("k1", &note).has_value());
  EXPECT_FALSE(note.empty());
}

TEST(CodeCache, ConcurrentWritersLeaveAWholeEntry) {
  CacheOptions o;
  o.dir = scratch_dir("cache-concurrent");
  CodeCache c(o);
  std::vector<uint8_t> payload(1 << 20, 0xAB);
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; ++i) ts.emplace_back([&] { EXPECT_TRUE(c.put("same", payload).ok()); });
  for (auto& t : ts) t.join();
  auto hit = c.get("same", nullptr);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, payload);
}

TEST(CodeCache, UnwritableDirectoryIsAnErrorNotACrash) {
  // A directory below a regular file cannot be created, even by root.
  std::string d = scratch_dir("cache-unwritable");
  std::ofstream(d + "/file") << "x";
  CacheOptions o;
  o.dir = d + "/file/cache";
  CodeCache c(o);
  Status s = c.put("k", {1, 2, 3});
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(c.get("k", nullptr).has_value());
}

// ------------------------------------------------------------ compiling

compiled::Request cpu_request(const std::shared_ptr<const CompiledModule>& cm, const std::string& dir) {
  compiled::Request r;
  r.module = cm;
  r.cache.dir = dir;
  return r;
}

// A call prepared once (a batch's export, input after input) gives what
// an ordinary call gives, results and traps with their places, whether
// the function is interpreted or compiled, and compiled code binds to its
// instance for it.
TEST(CompiledCpu, PreparedCallsMatchOrdinaryCalls) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  compiled::Request req;
  req.module = cm;
  req.cache.enabled = false;
  auto native = compiled::compile_cpu(req, nullptr);
  ASSERT_TRUE(native.ok()) << native.error().message;
  for (bool use_native : {false, true}) {
    Store store;
    if (use_native) store.impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return *native; };
    auto inst = store.instantiate(cm, {});
    ASSERT_EQ(inst.index(), 0u);
    const uint32_t instance = std::get<0>(inst);
    if (use_native) {
      const FuncInst& f = store.impl().funcs[store.get_export(instance, "add")->addr];
      EXPECT_NE((*native)->bind(store.impl(), store, instance, f.defined_index), nullptr);
    }
    for (const char* name : {"add", "ind", "loop"}) {
      const uint32_t addr = store.get_export(instance, name)->addr;
      auto prepared = store.prepare_call(addr);
      ASSERT_TRUE(prepared);
      // "ind" with index 1 or more traps (the table holds $twice at 0 only).
      for (uint64_t a : {0ull, 1ull, 5ull, 1000ull}) {
        uint64_t plain[2] = {a, a}, ready[2] = {a, a};
        const TrapCode t_plain = store.invoke_slots(addr, plain);
        const TrapInfo where_plain = store.last_trap();
        const TrapCode t_ready = store.invoke_slots(*prepared, ready);
        const TrapInfo where_ready = store.last_trap();
        EXPECT_EQ(t_plain, t_ready) << name << " " << a << " native " << use_native;
        EXPECT_EQ(where_plain.func_index, where_ready.func_index) << name << " " << a;
        EXPECT_EQ(where_plain.pc, where_ready.pc) << name << " " << a;
        if (t_plain == TrapCode::None) {
          EXPECT_EQ(plain[0], ready[0]) << name << " " << a;
        }
      }
    }
    // The trap cases did happen, and the loop's sum came out.
    auto ind = store.prepare_call(store.get_export(instance, "ind")->addr);
    uint64_t io[2] = {7, 5};
    EXPECT_EQ(store.invoke_slots(*ind, io), TrapCode::UndefinedElement) << use_native;
    uint64_t null_entry[2] = {7, 1};
    EXPECT_EQ(store.invoke_slots(*ind, null_entry), TrapCode::UninitializedElement) << use_native;
    uint64_t twice[2] = {7, 0};
    ASSERT_EQ(store.invoke_slots(*ind, twice), TrapCode::None);
    EXPECT_EQ(twice[0], 14u);
    auto loop = store.prepare_call(store.get_export(instance, "loop")->addr);
    uint64_t sum[1] = {100};
    ASSERT_EQ(store.invoke_slots(*loop, sum), TrapCode::None);
    EXPECT_EQ(sum[0], 5050u);
  }
  Store store;
  EXPECT_FALSE(store.prepare_call(12345));
}

TEST(CompiledCpu, SecondCompileHitsTheCache) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  auto req = cpu_request(cm, scratch_dir("compile-hit"));
  compiled::Outcome a, b;
  ASSERT_TRUE(compiled::compile_cpu(req, &a).ok());
  EXPECT_FALSE(a.cache_hit);
  EXPECT_TRUE(compiled::cached(req));
  ASSERT_TRUE(compiled::compile_cpu(req, &b).ok());
  EXPECT_TRUE(b.cache_hit);
  EXPECT_EQ(a.key, b.key);
  // Found through the cache's index, without generating the source.
  if (!build_id().empty()) {
    EXPECT_EQ(b.source_bytes, 0u);
  }
}

TEST(CompiledCpu, ConcurrentCompilesOfOneModuleBothSucceed) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  auto req = cpu_request(cm, scratch_dir("compile-concurrent"));
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; ++i) ts.emplace_back([&] { EXPECT_TRUE(compiled::compile_cpu(req, nullptr).ok()); });
  for (auto& t : ts) t.join();
  compiled::Outcome o;
  ASSERT_TRUE(compiled::compile_cpu(req, &o).ok());
  EXPECT_TRUE(o.cache_hit);
}

// Requests for code that another thread is compiling wait for its bytes:
// the compiler runs once for them, with the cache or without it.
TEST(CompiledCpu, ConcurrentRequestsForOneCodeCompileItOnce) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  const std::string d = scratch_dir("compile-once");
  const std::string runs = d + "/runs";
  // A compiler that notes each run and takes a second, so that the
  // requests overlap.
  std::ofstream(d + "/cxx") << "#!/bin/sh\n[ \"$1\" = --version ] && exec c++ --version\necho run >> " << runs
                            << "\nsleep 1\nexec c++ \"$@\"\n";
  chmod((d + "/cxx").c_str(), 0755);
  ScopedEnv env("CXX", (d + "/cxx").c_str());
  auto count_runs = [&] {
    std::ifstream in(runs);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  auto req = cpu_request(cm, "");
  req.cache.enabled = false;
  ASSERT_TRUE(compiled::compile_cpu(req, nullptr).ok());
  const int per_compile = count_runs();
  ASSERT_GT(per_compile, 0);
  for (bool cache : {false, true}) {
    req.cache.enabled = cache;
    req.cache.dir = cache ? d + "/cache" : "";
    const int before = count_runs();
    std::vector<std::thread> ts;
    for (int i = 0; i < 3; ++i)
      ts.emplace_back([&] {
        auto r = compiled::compile_cpu(req, nullptr);
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_TRUE(*r);
      });
    for (auto& t : ts) t.join();
    EXPECT_EQ(count_runs() - before, per_compile) << (cache ? "with the cache" : "without a cache");
  }
}

TEST(CompiledCpu, UnwritableCacheStillRunsAndSaysWhy) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  std::string d = scratch_dir("compile-unwritable");
  std::ofstream(d + "/file") << "x";
  auto req = cpu_request(cm, d + "/file/cache");
  compiled::Outcome o;
  auto r = compiled::compile_cpu(req, &o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(o.cache_note.find("not cached"), std::string::npos);
}

TEST(CompiledCpu, CompilerFailuresAreOneLineErrors) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  auto req = cpu_request(cm, "");
  req.cache.enabled = false;
  {
    ScopedEnv env("CXX", "/nonexistent/c++");
    auto r = compiled::compile_cpu(req, nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("not found"), std::string::npos) << r.error().message;
  }
  {
    // A "compiler" that runs but fails, and one that is killed.
    std::string d = scratch_dir("bad-compilers");
    std::ofstream(d + "/fails")
        << "#!/bin/sh\n[ \"$1\" = --version ] && { echo fake 1; exit 0; }\necho 'x.cc:1: error: nope' >&2\nexit 1\n";
    std::ofstream(d + "/killed") << "#!/bin/sh\n[ \"$1\" = --version ] && { echo fake 2; exit 0; }\nkill -9 $$\n";
    chmod((d + "/fails").c_str(), 0755);
    chmod((d + "/killed").c_str(), 0755);
    ScopedEnv env("CXX", (d + "/fails").c_str());
    auto r = compiled::compile_cpu(req, nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("host C++ compiler failed: x.cc:1: error: nope"), std::string::npos)
        << r.error().message;
    ScopedEnv env2("CXX", (d + "/killed").c_str());
    r = compiled::compile_cpu(req, nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("killed (signal 9)"), std::string::npos) << r.error().message;
  }
}

// The module split into three self-contained units, as a module of
// SQLite's size is (two ops per unit forces it); empty if anything failed.
std::vector<std::string> three_units(const CompiledModule& cm, codegen::Target target) {
  codegen::Options o;
  o.target = target;
  o.max_units = 3;
  o.ops_per_unit = 2;
  auto g = codegen::generate(cm, o);
  EXPECT_TRUE(g.ok());
  if (!g.ok() || g->units.size() != 3) return {};
  const auto toolchain = target == codegen::Target::Gpu ? codegen::Toolchain::Nvrtc : codegen::Toolchain::HostCxx;
  std::vector<std::string> units;
  for (const std::string& u : g->units) {
    auto a = codegen::amalgamate(u, toolchain);
    EXPECT_TRUE(a.ok());
    if (!a.ok()) return {};
    units.push_back(*a);
  }
  return units;
}

TEST(CompiledCpu, ALargeModuleSplitsIntoUnitsThatLinkAndRun) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  std::vector<std::string> units = three_units(*cm, codegen::Target::Cpu);
  ASSERT_EQ(units.size(), 3u);
  auto cc = compiled::find_host_compiler();
  ASSERT_TRUE(cc.ok()) << cc.error().message;
  auto so = compiled::compile_shared_object(*cc, units);
  ASSERT_TRUE(so.ok()) << so.error().message;
  auto native = compiled::load_cpu_native(*so, false, uint32_t(cm->module.funcs.size()));
  ASSERT_TRUE(native.ok()) << native.error().message;
  Store store;
  store.impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return *native; };
  auto inst = store.instantiate(cm, {});
  ASSERT_EQ(inst.index(), 0u);
  InvokeResult r = store.invoke(store.get_export(std::get<0>(inst), "ind")->addr, {Value::i32(4), Value::i32(0)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 8u);
  r = store.invoke(store.get_export(std::get<0>(inst), "add")->addr, {Value::i32(4), Value::i32(5)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 10u);
}

TEST(CompiledCpu, ScratchOfAKilledCompileIsRemovedLater) {
  // A compile whose wasmwarp was killed leaves its scratch directory; the
  // next compile removes it (its owner's pid is gone), and its own.
  std::string tmp = scratch_dir("tmpdir");
  std::string stale = tmp + "/wasmwarp-cc-999999999-abcdef";
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0);
  std::ofstream(stale + "/unit0.cc") << "x";
  ScopedEnv env("TMPDIR", tmp.c_str());
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  auto req = cpu_request(cm, "");
  req.cache.enabled = false;
  ASSERT_TRUE(compiled::compile_cpu(req, nullptr).ok());
  struct stat st {};
  EXPECT_NE(stat(stale.c_str(), &st), 0);
  std::string left = "ls -A '" + tmp + "' | grep -q .";
  EXPECT_NE(std::system(left.c_str()), 0) << "scratch directories left in " << tmp;
}

TEST(CompiledCpu, CodeRunsInTheStore) {
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  auto req = cpu_request(cm, std::string(WW_BINARY_DIR) + "/test-code-cache");
  auto native = compiled::compile_cpu(req, nullptr);
  ASSERT_TRUE(native.ok());
  Store store;
  store.impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return *native; };
  auto inst = store.instantiate(cm, {});
  ASSERT_EQ(inst.index(), 0u);
  auto call = [&](const char* name, std::vector<Value> args) {
    return store.invoke(store.get_export(std::get<0>(inst), name)->addr, args);
  };
  InvokeResult r = call("add", {Value::i32(2), Value::i32(3)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 6u);
  r = call("ind", {Value::i32(21), Value::i32(0)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 42u);
  EXPECT_EQ(call("ind", {Value::i32(1), Value::i32(1)}).trap, TrapCode::UninitializedElement);
  r = call("loop", {Value::i32(100)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 5050u);
}

// NVRTC compiles the GPU form without a GPU; skipped where the library is
// not installed (it is wherever the CUDA toolkit is).
TEST(CompiledGpu, NvrtcCompilesTheGpuForm) {
  if (!gpu::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  auto v = gpu::nvrtc_version();
  if (!v.ok()) GTEST_SKIP() << v.error().message;
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  for (bool metered : {false, true})
    for (MemoryLayout layout : {MemoryLayout::Contiguous, MemoryLayout::Interleaved, MemoryLayout::Sparse}) {
      compiled::Request req;
      req.module = cm;
      req.target = compiled::Target::Gpu;
      req.gpu_arch = 90;
      req.metered = metered;
      req.deadline = metered;
      req.layout = layout;
      req.load = false;
      req.cache.enabled = false;
      compiled::Outcome o;
      auto r = compiled::compile_gpu(req, &o);
      EXPECT_TRUE(r.ok()) << r.error().message;
    }
}

// (module (memory 1) (func (export "sum") (param i32) (result i32)
//   i32.const 0 {local.get 0 i32.load offset=4k i32.add} x loads))
std::vector<uint8_t> loads_module(uint32_t loads) {
  auto leb = [](std::vector<uint8_t>& out, uint32_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      out.push_back(uint8_t(b | (v ? 0x80 : 0)));
    } while (v);
  };
  std::vector<uint8_t> body = {0x00, 0x41, 0x00};  // no locals; i32.const 0
  for (uint32_t k = 0; k < loads; ++k) {
    body.insert(body.end(), {0x20, 0x00, 0x28, 0x02});
    leb(body, 4 * k);
    body.push_back(0x6a);
  }
  body.push_back(0x0b);
  std::vector<uint8_t> m = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,  // header
                            0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,  // (i32) -> i32
                            0x03, 0x02, 0x01, 0x00,                          // one function
                            0x05, 0x03, 0x01, 0x00, 0x01,                    // (memory 1)
                            0x07, 0x07, 0x01, 0x03, 's',  'u',  'm',  0x00, 0x00};
  std::vector<uint8_t> code;
  code.push_back(0x01);
  leb(code, uint32_t(body.size()));
  code.insert(code.end(), body.begin(), body.end());
  m.push_back(0x0a);
  leb(m, uint32_t(code.size()));
  m.insert(m.end(), code.begin(), code.end());
  return m;
}

// Compiled code for the sparse layout makes misses of the function's
// memory cache calls in a module with many accesses (their inline
// translations make its compile several times longer) and keeps them
// inline in a small one; tests can force either.
TEST(Generator, SparseMissesAreCallsInAModuleWithManyAccesses) {
  auto calls_in = [](uint32_t loads, MemoryLayout layout, SparseMisses misses) {
    auto cm = compile_module(loads_module(loads));
    EXPECT_TRUE(cm.ok()) << (cm.ok() ? "" : cm.error().message);
    if (!cm.ok()) return std::string("no module");
    codegen::Options o;
    o.target = codegen::Target::Gpu;
    o.layout = layout;
    o.sparse_misses = misses;
    auto g = codegen::generate(**cm, o);
    EXPECT_TRUE(g.ok());
    if (!g.ok()) return std::string("not generated");
    const bool calls = g->source.find("kMissCalls = true") != std::string::npos;
    const bool inline_ = g->source.find("kMissCalls = false") != std::string::npos;
    return calls && !inline_ ? std::string("calls") : inline_ && !calls ? std::string("inline") : std::string("mixed");
  };
  EXPECT_EQ(calls_in(200, MemoryLayout::Sparse, SparseMisses::BySize), "calls");
  EXPECT_EQ(calls_in(50, MemoryLayout::Sparse, SparseMisses::BySize), "inline");
  EXPECT_EQ(calls_in(200, MemoryLayout::Interleaved, SparseMisses::BySize), "inline");
  EXPECT_EQ(calls_in(50, MemoryLayout::Sparse, SparseMisses::Calls), "calls");
  EXPECT_EQ(calls_in(200, MemoryLayout::Sparse, SparseMisses::Inline), "inline");
}

// Both forms of sparse-layout access compile with NVRTC (no GPU needed).
TEST(CompiledGpu, NvrtcCompilesSparseMissesBothWays) {
  if (!gpu::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  auto v = gpu::nvrtc_version();
  if (!v.ok()) GTEST_SKIP() << v.error().message;
  auto cm = compile_module(loads_module(40));
  ASSERT_TRUE(cm.ok());
  for (SparseMisses misses : {SparseMisses::Inline, SparseMisses::Calls}) {
    compiled::Request req;
    req.module = *cm;
    req.target = compiled::Target::Gpu;
    req.gpu_arch = 90;
    req.layout = MemoryLayout::Sparse;
    req.sparse_misses = misses;
    req.load = false;
    req.cache.enabled = false;
    auto r = compiled::compile_gpu(req, nullptr);
    EXPECT_TRUE(r.ok()) << r.error().message;
  }
}

// A second look-up of the same request takes the cache's index (keyed by
// this build, the module's bytes and the request) to the code without
// generating the source; an index entry that names code the cache lacks
// is passed over.
TEST(CompiledGpu, ASecondLookUpTakesTheIndexNotTheSource) {
  if (!gpu::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  auto v = gpu::nvrtc_version();
  if (!v.ok()) GTEST_SKIP() << v.error().message;
  if (build_id().empty()) GTEST_SKIP() << "this build has no build-id: no index";
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  compiled::Request req;
  req.module = cm;
  req.target = compiled::Target::Gpu;
  req.gpu_arch = 90;
  req.load = false;
  req.cache.dir = scratch_dir("gpu-index");
  compiled::Outcome a, b;
  ASSERT_TRUE(compiled::compile_gpu(req, &a).ok());
  EXPECT_FALSE(a.cache_hit);
  EXPECT_GT(a.source_bytes, 0u);
  ASSERT_TRUE(compiled::cached(req));
  ASSERT_TRUE(compiled::compile_gpu(req, &b).ok());
  EXPECT_TRUE(b.cache_hit);
  EXPECT_EQ(b.key, a.key);
  EXPECT_EQ(b.source_bytes, 0u);  // no source was generated
  // The code's entry and the index's.
  CodeCache cache(req.cache);
  std::vector<std::string> others;
  const std::filesystem::path code = cache.entry_path(a.key);
  for (const auto& e : std::filesystem::directory_iterator(code.parent_path()))
    if (e.path() != code) others.push_back(e.path().stem().string());
  ASSERT_EQ(others.size(), 1u);
  // Another request (metered code) is not this one's.
  compiled::Request metered = req;
  metered.metered = true;
  EXPECT_FALSE(compiled::cached(metered));
  // An index naming code that is not there: the source is generated again.
  const std::string stale = "0123456789abcdef0123456789abcdef 0 0";
  ASSERT_TRUE(cache.put(others[0], std::vector<uint8_t>(stale.begin(), stale.end())).ok());
  EXPECT_TRUE(compiled::cached(req));
  compiled::Outcome c;
  ASSERT_TRUE(compiled::compile_gpu(req, &c).ok());
  EXPECT_TRUE(c.cache_hit);
  EXPECT_EQ(c.key, a.key);
  EXPECT_GT(c.source_bytes, 0u);
}

// A module split into units for the GPU: relocatable CUBINs, compiled in
// parallel and linked by nvJitLink (no GPU needed either).
TEST(CompiledGpu, SplitUnitsLinkIntoOneCubin) {
  if (!gpu::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  auto v = gpu::nvrtc_version();
  if (!v.ok()) GTEST_SKIP() << v.error().message;
  auto cm = calls_module();
  ASSERT_TRUE(cm);
  std::vector<std::string> units = three_units(*cm, codegen::Target::Gpu);
  ASSERT_EQ(units.size(), 3u);
  auto cubin = gpu::nvrtc_compile(units, "split.cu", 9, 0);
  ASSERT_TRUE(cubin.ok()) << cubin.error().message;
  EXPECT_GT(cubin->size(), 1000u);
}

}  // namespace
}  // namespace ww
