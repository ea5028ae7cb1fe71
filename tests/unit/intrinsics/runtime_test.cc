// The gpu intrinsics as host functions of the CPU runtime: linking (and its
// errors), traps, multi-value results, and the guest programs of
// tests/guests run through compile -> link -> instantiate -> invoke.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "decode/decoder.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/runtime.h"

namespace ww::intrinsics {
using namespace ::ww::gpu;  // the arithmetic the intrinsics share
namespace {

namespace fs = std::filesystem;

// (module
//   (import "gpu" "get_thread_id" (func $tid (result i32)))
//   (import "gpu" "instance_count" (func $count (result i32)))
//   (import "gpu" "atomic_add" (func $add (param i32 i32) (result i32)))
//   (import "gpu" "read_state" (func $read (param i32) (result i32)))
//   (import "gpu" "write_state" (func $write (param i32 i32)))
//   (import "gpu" "texture_sample" (func $tex (param i32 f32 f32) (result f32 f32 f32 f32)))
//   (import "gpu" "set_pixel" (func $px (param i32 i32 f32 f32 f32 f32)))
//   (import "gpu" "get_time" (func $time (result f32)))
//   (func (export "id_times_count") (result i32) (i32.mul (call $tid) (call $count)))
//   (func (export "add") (param i32 i32) (result i32) (call $add (local.get 0) (local.get 1)))
//   (func (export "read") (param i32) (result i32) (call $read (local.get 0)))
//   (func (export "write") (param i32 i32) (call $write (local.get 0) (local.get 1)))
//   (func (export "tex") (param i32 f32 f32) (result f32 f32 f32 f32)
//     (call $tex (local.get 0) (local.get 1) (local.get 2)))
//   (func (export "px") (param i32 i32 f32)
//     (call $px (local.get 0) (local.get 1) (local.get 2) (f32.const 0) (f32.const 1) (f32.const 1)))
//   (func (export "time") (result f32) (call $time)))
const std::vector<uint8_t> kHostModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x32, 0x08, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f,
    0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x60, 0x03, 0x7f, 0x7d, 0x7d, 0x04, 0x7d,
    0x7d, 0x7d, 0x7d, 0x60, 0x06, 0x7f, 0x7f, 0x7d, 0x7d, 0x7d, 0x7d, 0x00, 0x60, 0x00, 0x01, 0x7d, 0x60, 0x03, 0x7f,
    0x7f, 0x7d, 0x00, 0x02, 0x92, 0x01, 0x08, 0x03, 0x67, 0x70, 0x75, 0x0d, 0x67, 0x65, 0x74, 0x5f, 0x74, 0x68, 0x72,
    0x65, 0x61, 0x64, 0x5f, 0x69, 0x64, 0x00, 0x00, 0x03, 0x67, 0x70, 0x75, 0x0e, 0x69, 0x6e, 0x73, 0x74, 0x61, 0x6e,
    0x63, 0x65, 0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0x00, 0x03, 0x67, 0x70, 0x75, 0x0a, 0x61, 0x74, 0x6f, 0x6d,
    0x69, 0x63, 0x5f, 0x61, 0x64, 0x64, 0x00, 0x01, 0x03, 0x67, 0x70, 0x75, 0x0a, 0x72, 0x65, 0x61, 0x64, 0x5f, 0x73,
    0x74, 0x61, 0x74, 0x65, 0x00, 0x02, 0x03, 0x67, 0x70, 0x75, 0x0b, 0x77, 0x72, 0x69, 0x74, 0x65, 0x5f, 0x73, 0x74,
    0x61, 0x74, 0x65, 0x00, 0x03, 0x03, 0x67, 0x70, 0x75, 0x0e, 0x74, 0x65, 0x78, 0x74, 0x75, 0x72, 0x65, 0x5f, 0x73,
    0x61, 0x6d, 0x70, 0x6c, 0x65, 0x00, 0x04, 0x03, 0x67, 0x70, 0x75, 0x09, 0x73, 0x65, 0x74, 0x5f, 0x70, 0x69, 0x78,
    0x65, 0x6c, 0x00, 0x05, 0x03, 0x67, 0x70, 0x75, 0x08, 0x67, 0x65, 0x74, 0x5f, 0x74, 0x69, 0x6d, 0x65, 0x00, 0x06,
    0x03, 0x08, 0x07, 0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x06, 0x07, 0x39, 0x07, 0x0e, 0x69, 0x64, 0x5f, 0x74, 0x69,
    0x6d, 0x65, 0x73, 0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0x08, 0x03, 0x61, 0x64, 0x64, 0x00, 0x09, 0x04, 0x72,
    0x65, 0x61, 0x64, 0x00, 0x0a, 0x05, 0x77, 0x72, 0x69, 0x74, 0x65, 0x00, 0x0b, 0x03, 0x74, 0x65, 0x78, 0x00, 0x0c,
    0x02, 0x70, 0x78, 0x00, 0x0d, 0x04, 0x74, 0x69, 0x6d, 0x65, 0x00, 0x0e, 0x0a, 0x4c, 0x07, 0x07, 0x00, 0x10, 0x00,
    0x10, 0x01, 0x6c, 0x0b, 0x08, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x02, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x10, 0x03,
    0x0b, 0x08, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x04, 0x0b, 0x0a, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0x10,
    0x05, 0x0b, 0x19, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0x43, 0x00, 0x00, 0x00, 0x00, 0x43, 0x00, 0x00, 0x80,
    0x3f, 0x43, 0x00, 0x00, 0x80, 0x3f, 0x10, 0x06, 0x0b, 0x04, 0x00, 0x10, 0x07, 0x0b};

float f32_of(const Value& v) {
  uint32_t b = uint32_t(v.bits);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
Value f32v(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return Value::f32_bits(b);
}

std::shared_ptr<const CompiledModule> compile(const std::vector<uint8_t>& bytes) {
  auto m = compile_module(bytes);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
  return m.ok() ? *m : nullptr;
}

// A Store's default value stack is 32 MiB; these tests make thousands of
// Stores, and the deepest guest call (ping(1001)) needs far less.
StoreLimits small_limits() {
  StoreLimits l;
  l.stack_slots = 1u << 16;
  return l;
}

// One instance in its own Store, linked to `batch` as instance `index`.
struct Guest {
  std::unique_ptr<Store> store = std::make_unique<Store>(small_limits());
  GpuContext ctx;
  uint32_t instance = 0;

  static std::unique_ptr<Guest> make(std::shared_ptr<const CompiledModule> m, GpuBatch& batch, uint32_t index) {
    auto g = std::make_unique<Guest>();
    g->ctx = GpuContext{&batch, index};
    auto imports = link_gpu_imports(*g->store, m->module, &g->ctx);
    EXPECT_TRUE(imports.ok()) << imports.error().to_string();
    if (!imports.ok()) return nullptr;
    auto inst = g->store->instantiate(m, *imports);
    if (auto* err = std::get_if<InstantiateError>(&inst)) {
      ADD_FAILURE() << "instantiate: " << err->message;
      return nullptr;
    }
    g->instance = std::get<uint32_t>(inst);
    return g;
  }

  InvokeResult call(const std::string& name, const std::vector<Value>& args = {}) {
    auto e = store->get_export(instance, name);
    if (!e || e->kind != ExternKind::Func) {
      ADD_FAILURE() << "no exported function " << name;
      return {TrapCode::HostError, {}};
    }
    return store->invoke(e->addr, args);
  }
  // Calls an export returning one i32; fails the test on a trap.
  int32_t i32(const std::string& name, const std::vector<int32_t>& args = {}) {
    std::vector<Value> vals;
    for (int32_t a : args) vals.push_back(Value::i32(a));
    InvokeResult r = call(name, vals);
    EXPECT_TRUE(r.ok()) << name << " trapped: " << trap_message(r.trap);
    EXPECT_EQ(r.results.size(), 1u) << name;
    return r.ok() && r.results.size() == 1 ? int32_t(uint32_t(r.results[0].bits)) : INT32_MIN;
  }
};

TEST(Link, HostModuleCallsEveryIntrinsic) {
  auto m = compile(kHostModule);
  ASSERT_TRUE(m);
  GpuBatch batch;
  batch.instance_count = 7;
  batch.state = {10, 20};
  batch.set_image_size(2, 2);
  ASSERT_TRUE(batch.bind_texture(1, Image{2, 1, {255, 0, 0, 255, 0, 51, 0, 255}}).ok());
  auto g = Guest::make(m, batch, 3);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->i32("id_times_count"), 21);
  g->ctx.instance_index = 5;  // the batch runner moves the context on
  EXPECT_EQ(g->i32("id_times_count"), 35);
  EXPECT_EQ(g->i32("add", {1, 5}), 20);
  EXPECT_EQ(batch.state[1], 25);
  EXPECT_EQ(g->call("write", {Value::i32(0), Value::i32(-4)}).trap, TrapCode::None);
  EXPECT_EQ(g->i32("read", {0}), -4);

  InvokeResult t = g->call("tex", {Value::i32(1), f32v(0.75f), f32v(0.5f)});
  ASSERT_TRUE(t.ok()) << trap_message(t.trap);
  ASSERT_EQ(t.results.size(), 4u);
  EXPECT_EQ(f32_of(t.results[0]), 0.0f);
  EXPECT_EQ(f32_of(t.results[1]), 0.2f);  // 51 / 255
  EXPECT_EQ(f32_of(t.results[2]), 0.0f);
  EXPECT_EQ(f32_of(t.results[3]), 1.0f);
  for (const Value& v : t.results) EXPECT_EQ(v.bits >> 32, 0u);

  EXPECT_TRUE(g->call("px", {Value::i32(1), Value::i32(0), f32v(0.5f)}).ok());
  EXPECT_TRUE(g->call("px", {Value::i32(2), Value::i32(0), f32v(0.5f)}).ok());
  EXPECT_EQ(batch.image->pixels[1], pack_rgba8(0.5f, 0.0f, 1.0f, 1.0f));
  EXPECT_EQ(batch.ignored_pixels.load(), 1u);

  batch.start_clock();
  InvokeResult tm = g->call("time");
  ASSERT_TRUE(tm.ok());
  EXPECT_GE(f32_of(tm.results[0]), 0.0f);
  EXPECT_LT(f32_of(tm.results[0]), 60.0f);
}

TEST(Link, IntrinsicTrapsStopTheInstance) {
  auto m = compile(kHostModule);
  ASSERT_TRUE(m);
  GpuBatch batch;
  batch.state = {1, 2};
  auto g = Guest::make(m, batch, 0);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->call("read", {Value::i32(2)}).trap, TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(g->call("read", {Value::i32(-1)}).trap, TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(g->call("write", {Value::i32(9), Value::i32(1)}).trap, TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(g->call("add", {Value::i32(2), Value::i32(1)}).trap, TrapCode::StateIndexOutOfRange);
  EXPECT_EQ(g->call("tex", {Value::i32(0), f32v(0), f32v(0)}).trap, TrapCode::TextureUnitUnbound);
  EXPECT_EQ(g->call("tex", {Value::i32(99), f32v(0), f32v(0)}).trap, TrapCode::TextureUnitUnbound);
  EXPECT_EQ(batch.state, (std::vector<int32_t>{1, 2}));
  // The Store stays usable after a trap.
  EXPECT_EQ(g->i32("read", {1}), 2);
}

Error link_error(const std::vector<uint8_t>& bytes) {
  auto m = compile(bytes);
  if (!m) return make_error(kNoOffset, "compile failed");
  Store store;
  GpuBatch batch;
  GpuContext ctx{&batch, 0};
  auto r = link_gpu_imports(store, m->module, &ctx);
  if (r.ok()) return make_error(kNoOffset, "linked");
  return r.error();
}

TEST(Link, MismatchesAreClearErrors) {
  // (module (import "gpu" "nope" (func)))
  Error e = link_error({0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
                        0x02, 0x0c, 0x01, 0x03, 0x67, 0x70, 0x75, 0x04, 0x6e, 0x6f, 0x70, 0x65, 0x00, 0x00});
  EXPECT_EQ(e.message, "unknown import gpu.nope");
  EXPECT_NE(e.offset, kNoOffset);
  // (module (import "gpu" "get_thread_id" (func (param i32) (result i32))))
  e = link_error({0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01,
                  0x7f, 0x01, 0x7f, 0x02, 0x15, 0x01, 0x03, 0x67, 0x70, 0x75, 0x0d, 0x67, 0x65,
                  0x74, 0x5f, 0x74, 0x68, 0x72, 0x65, 0x61, 0x64, 0x5f, 0x69, 0x64, 0x00, 0x00});
  EXPECT_EQ(e.message, "import gpu.get_thread_id has type " +
                           functype_to_string(FuncType{{ValType::I32}, {ValType::I32}}) + ", expected " +
                           functype_to_string(FuncType{{}, {ValType::I32}}));
  // (module (import "gpu" "read_state" (memory 1)))
  e = link_error({0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02, 0x13, 0x01, 0x03, 0x67, 0x70, 0x75,
                  0x0a, 0x72, 0x65, 0x61, 0x64, 0x5f, 0x73, 0x74, 0x61, 0x74, 0x65, 0x02, 0x00, 0x01});
  EXPECT_EQ(e.message, "import gpu.read_state is a memory, expected a function");
  // (module (import "env" "f" (func)) (import "gpu" "get_time" (func (result f32))))
  std::vector<uint8_t> mixed = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02,
                                0x60, 0x00, 0x00, 0x60, 0x00, 0x01, 0x7d, 0x02, 0x18, 0x02, 0x03,
                                0x65, 0x6e, 0x76, 0x01, 0x66, 0x00, 0x00, 0x03, 0x67, 0x70, 0x75,
                                0x08, 0x67, 0x65, 0x74, 0x5f, 0x74, 0x69, 0x6d, 0x65, 0x00, 0x01};
  EXPECT_EQ(link_error(mixed).message, "unknown import env.f");
  // resolve_gpu_imports leaves other modules' imports to the caller.
  auto m = compile(mixed);
  ASSERT_TRUE(m);
  Store store;
  GpuBatch batch;
  GpuContext ctx{&batch, 0};
  std::vector<std::optional<ExternVal>> resolved;
  ASSERT_TRUE(resolve_gpu_imports(store, m->module, &ctx, resolved).ok());
  ASSERT_EQ(resolved.size(), 2u);
  EXPECT_FALSE(resolved[0].has_value());
  ASSERT_TRUE(resolved[1].has_value());
  EXPECT_EQ(store.func_type(resolved[1]->addr), (FuncType{{}, {ValType::F32}}));
}

TEST(Link, ManyStoresOnManyThreads) {
  auto m = compile(kHostModule);
  ASSERT_TRUE(m);
  GpuBatch batch;
  constexpr uint32_t kThreads = 4, kPerThread = 200;
  batch.instance_count = kThreads * kPerThread;
  batch.state = {0, 0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // One Store per thread, one instance per index, as the CLI's batch
      // mode does; the context moves from instance to instance.
      Store store;
      GpuContext ctx{&batch, 0};
      auto imports = link_gpu_imports(store, m->module, &ctx);
      ASSERT_TRUE(imports.ok());
      for (uint32_t i = 0; i < kPerThread; ++i) {
        ctx.instance_index = t * kPerThread + i;
        auto inst = store.instantiate(m, *imports);
        ASSERT_TRUE(std::holds_alternative<uint32_t>(inst));
        auto add = store.get_export(std::get<uint32_t>(inst), "add");
        ASSERT_TRUE(add);
        InvokeResult r = store.invoke(add->addr, {Value::i32(0), Value::i32(int32_t(ctx.instance_index))});
        ASSERT_TRUE(r.ok());
        auto idc = store.get_export(std::get<uint32_t>(inst), "id_times_count");
        InvokeResult r2 = store.invoke(idc->addr, {});
        ASSERT_TRUE(r2.ok());
        ASSERT_EQ(uint32_t(r2.results[0].bits), ctx.instance_index * batch.instance_count);
      }
    });
  for (auto& th : threads) th.join();
  int64_t n = kThreads * kPerThread;
  EXPECT_EQ(batch.state[0], n * (n - 1) / 2);
}

// ------------------------------------------------------------ guest programs

bool rustc_has_wasm32() {
  FILE* p = popen("/usr/bin/rustc --print sysroot 2>/dev/null", "r");
  if (!p) return false;
  char buf[4096] = {0};
  size_t n = fread(buf, 1, sizeof buf - 1, p);
  pclose(p);
  std::string sysroot(buf, n);
  while (!sysroot.empty() && (sysroot.back() == '\n' || sysroot.back() == '\r')) sysroot.pop_back();
  return !sysroot.empty() && fs::is_directory(sysroot + "/lib/rustlib/wasm32-unknown-unknown/lib");
}

// Where the guests are: $WW_GUESTS_DIR, the build tree's guests/ (from
// tests/guests/guests.cmake), or, failing both, built here once with
// tests/guests/build.sh. Empty with `why` set when they cannot exist.
std::string guests_dir(std::string* why) {
  static std::once_flag once;
  static std::string dir, reason;
  std::call_once(once, [] {
    if (const char* env = std::getenv("WW_GUESTS_DIR")) {
      dir = env;
      return;
    }
    std::string built = std::string(WW_BINARY_DIR) + "/guests";
    if (fs::exists(built + "/rust/10_call_chain.wasm")) {
      dir = built;
      return;
    }
    if (!rustc_has_wasm32()) {
      reason = "guests not built: /usr/bin/rustc with the wasm32-unknown-unknown target is not installed";
      return;
    }
    std::string out = std::string(WW_BINARY_DIR) + "/guests-unittest";
    std::string cmd = "bash '" + std::string(WW_SOURCE_DIR) + "/tests/guests/build.sh' '" + out + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      reason = "FAIL: " + cmd + " failed";
      return;
    }
    dir = out;
  });
  *why = reason;
  return dir;
}

#define REQUIRE_GUESTS(dir)                                        \
  std::string why_;                                                \
  std::string dir = guests_dir(&why_);                             \
  if (dir.empty() && why_.rfind("FAIL: ", 0) == 0) FAIL() << why_; \
  if (dir.empty()) GTEST_SKIP() << why_;

std::shared_ptr<const CompiledModule> compile_guest(const std::string& path) {
  auto m = compile_file(path);
  EXPECT_TRUE(m.ok()) << path << ": " << m.error().to_string();
  return m.ok() ? *m : nullptr;
}

struct Expect {
  const char* file;
  const char* func;
  std::vector<int32_t> args;
  int32_t result;
};

TEST(Guests, RustProgramsComputeTheirStatedResults) {
  REQUIRE_GUESTS(dir);
  const std::vector<Expect> cases = {
      {"01_helper_function", "main", {3}, 25},
      {"01_helper_function", "main", {0}, 4},
      {"02_two_helpers", "main", {3}, 20},
      {"02_two_helpers", "main", {-2}, 0},
      {"03_recursive_factorial", "fact", {5}, 120},
      {"03_recursive_factorial", "main", {5}, 120},
      {"03_recursive_factorial", "fact", {0}, 1},
      {"03_recursive_factorial", "fact", {12}, 479001600},
      {"03_recursive_factorial", "fact", {13}, -1},
      {"06_nested_calls", "main", {10}, 13},
      {"06_nested_calls", "main", {-3}, 0},
      {"07_three_parameters", "lerp", {0, 100, 50}, 50},
      {"07_three_parameters", "main", {0, 100, 50}, 50},
      {"07_three_parameters", "lerp", {10, 20, 30}, 13},
      {"07_three_parameters", "lerp", {100, 0, 25}, 75},
      {"08_callee_locals", "main", {5}, 159},
      {"08_callee_locals", "main", {0}, 4},
      {"08_callee_locals", "poly", {2, 4}, 34},
      {"09_mutual_recursion", "main", {5}, 7},
      {"09_mutual_recursion", "ping", {4}, 6},
      {"09_mutual_recursion", "pong", {5}, 8},
      {"09_mutual_recursion", "ping", {0}, 0},
      {"09_mutual_recursion", "ping", {1001}, 1501},
      {"10_call_chain", "main", {0}, 8},
      {"10_call_chain", "main", {-8}, 0},
  };
  GpuBatch batch;
  for (const Expect& c : cases) {
    auto m = compile_guest(dir + "/rust/" + c.file + ".wasm");
    ASSERT_TRUE(m);
    auto g = Guest::make(m, batch, 0);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->i32(c.func, c.args), c.result) << c.file << " " << c.func;
  }
}

TEST(Guests, RecursionIsACycleInTheCallGraph) {
  REQUIRE_GUESTS(dir);
  // The runtime's deny_recursion option rejects exactly the programs whose
  // call graph has a cycle: fact calls itself, ping and pong each other.
  CompileOptions deny;
  deny.deny_recursion = true;
  for (const char* f : {"03_recursive_factorial", "09_mutual_recursion"}) {
    auto r = compile_file(dir + "/rust/" + f + ".wasm", deny);
    ASSERT_FALSE(r.ok()) << f;
    EXPECT_NE(r.error().message.find("recursion"), std::string::npos) << r.error().message;
  }
  for (const char* f : {"01_helper_function", "10_call_chain"}) {
    auto r = compile_file(dir + "/rust/" + f + ".wasm", deny);
    EXPECT_TRUE(r.ok()) << f << ": " << r.error().to_string();
  }
}

TEST(Guests, ThreadIdPerInstance) {
  REQUIRE_GUESTS(dir);
  auto m = compile_guest(dir + "/rust/04_thread_id.wasm");
  ASSERT_TRUE(m);
  GpuBatch batch;
  batch.instance_count = 64;
  std::vector<std::thread> threads;
  std::vector<int32_t> got(64, -1);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (uint32_t i = uint32_t(t); i < 64; i += 4) {
        auto g = Guest::make(m, batch, i);
        ASSERT_TRUE(g);
        got[i] = g->i32("main");
      }
    });
  for (auto& th : threads) th.join();
  for (int32_t i = 0; i < 64; ++i) EXPECT_EQ(got[size_t(i)], i);
}

TEST(Guests, PixelGradient) {
  REQUIRE_GUESTS(dir);
  for (const char* path : {"/rust/05_pixel_output.wasm", "/c/gradient.wasm"}) {
    if (std::string(path).find("/c/") == 0 && !fs::exists(dir + path)) continue;  // built without clang
    auto m = compile_guest(dir + path);
    ASSERT_TRUE(m);
    GpuBatch batch;
    batch.instance_count = 800;
    batch.set_image_size(800, 3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (uint32_t x = uint32_t(t); x < 800; x += 4) {
          auto g = Guest::make(m, batch, x);
          ASSERT_TRUE(g);
          ASSERT_EQ(g->i32("main", {3}), int32_t(x));
        }
      });
    for (auto& th : threads) th.join();
    Image img = batch.image->to_image();
    for (uint32_t y = 0; y < 3; ++y)
      for (uint32_t x = 0; x < 800; ++x) {
        const uint8_t* p = &img.rgba[(y * 800 + x) * 4];
        ASSERT_EQ(p[0], uint8_t(float(x) / 800.0f * 255.0f + 0.5f)) << path << " x=" << x;
        ASSERT_EQ(p[1], 0);
        ASSERT_EQ(p[2], 0);
        ASSERT_EQ(p[3], 255);
      }
    EXPECT_EQ(batch.ignored_pixels.load(), 0u);
  }
}

TEST(Guests, CCounterIsAtomic) {
  REQUIRE_GUESTS(dir);
  if (!fs::exists(dir + "/c/counter.wasm")) GTEST_SKIP() << "C guests not built (no clang)";
  auto m = compile_guest(dir + "/c/counter.wasm");
  ASSERT_TRUE(m);
  GpuBatch batch;
  constexpr int kN = 400;
  batch.instance_count = kN;
  batch.state = {0, 0};
  std::vector<int32_t> order(kN, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < kN; i += 4) {
        auto g = Guest::make(m, batch, uint32_t(i));
        ASSERT_TRUE(g);
        order[size_t(i)] = g->i32("main");
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(batch.state[0], kN * (kN + 1) / 2);
  EXPECT_EQ(batch.state[1], kN);
  std::sort(order.begin(), order.end());
  for (int i = 0; i < kN; ++i) ASSERT_EQ(order[size_t(i)], i);
}

TEST(Guests, TextureSampleMultiValue) {
  REQUIRE_GUESTS(dir);
  Image tex{4, 3, {}};
  std::mt19937 rng(7);
  for (int i = 0; i < 4 * 3 * 4; ++i) tex.rgba.push_back(uint8_t(rng()));
  for (const char* path : {"/rust_multivalue/texture_sample.wasm", "/c/texture_copy.wasm"}) {
    if (!fs::exists(dir + path)) {
      ADD_FAILURE() << dir + path << " missing";
      continue;
    }
    auto m = compile_guest(dir + path);
    ASSERT_TRUE(m);
    // Sampling at texel centres gives the texel exactly under both filters
    // (bilinear weights are then 0 and 1).
    for (TextureFilter f : {TextureFilter::Nearest, TextureFilter::Bilinear}) {
      GpuBatch batch;
      batch.instance_count = 12;
      batch.filter = f;
      batch.set_image_size(4, 3);
      ASSERT_TRUE(batch.bind_texture(0, tex).ok());
      for (uint32_t i = 0; i < 12; ++i) {
        auto g = Guest::make(m, batch, i);
        ASSERT_TRUE(g);
        EXPECT_EQ(g->i32("main", {4, 3}), tex.rgba[i * 4]) << path << " instance " << i;
      }
      EXPECT_EQ(batch.image->to_image().rgba, tex.rgba) << path;
    }
    // Without a texture the sample traps.
    GpuBatch unbound;
    auto g = Guest::make(m, unbound, 0);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->call("main", {Value::i32(4), Value::i32(3)}).trap, TrapCode::TextureUnitUnbound);
  }
}

}  // namespace
}  // namespace ww::intrinsics
