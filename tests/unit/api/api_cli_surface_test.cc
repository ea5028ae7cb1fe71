// What the command line takes from the public API beyond plain calls (it
// is a client of the API and nothing else): init calls, memory addresses
// read from exports, the gpu intrinsics' canvas and state, result columns
// streamed while a call runs, the run report, trap sites, module listings
// and validation, ahead-of-time compiling, and GPU options. Like every API
// test, this includes nothing of src/.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "api_test_support.h"
#include "wasmwarp/wasmwarp.h"

namespace {

/* wat2wasm of:
(module
  (import "gpu" "set_pixel" (func $px (param i32 i32 f32 f32 f32 f32)))
  (import "gpu" "atomic_add" (func $add (param i32 i32) (result i32)))
  (memory 1)
  (global $base (export "base") (mut i32) (i32.const 256))
  (global $seed (mut i32) (i32.const 0))
  (func (export "init") (param i32) (global.set $seed (i32.add (global.get $seed) (local.get 0))))
  (func (export "buf") (result i32) (i32.const 512))
  (func (export "step") (param $i i32) (result i32)
    (i32.store (global.get $base)
      (i32.add (i32.add (i32.load (i32.const 512)) (global.get $seed)) (local.get $i)))
    (call $px (local.get $i) (i32.const 0) (f32.const 1) (f32.const 0) (f32.const 0) (f32.const 1))
    (drop (call $add (i32.const 0) (i32.const 1)))
    (i32.load (global.get $base)))
  (func $boom (export "boom") (param i32) (result i32) (i32.div_u (i32.const 1) (local.get 0))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x1d, 0x05, 0x60, 0x06, 0x7f, 0x7f, 0x7d, 0x7d, 0x7d, 0x7d,
    0x00, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01,
    0x7f, 0x02, 0x22, 0x02, 0x03, 0x67, 0x70, 0x75, 0x09, 0x73, 0x65, 0x74, 0x5f, 0x70, 0x69, 0x78, 0x65, 0x6c, 0x00,
    0x00, 0x03, 0x67, 0x70, 0x75, 0x0a, 0x61, 0x74, 0x6f, 0x6d, 0x69, 0x63, 0x5f, 0x61, 0x64, 0x64, 0x00, 0x01, 0x03,
    0x05, 0x04, 0x02, 0x03, 0x04, 0x04, 0x05, 0x03, 0x01, 0x00, 0x01, 0x06, 0x0c, 0x02, 0x7f, 0x01, 0x41, 0x80, 0x02,
    0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x07, 0x23, 0x05, 0x04, 0x62, 0x61, 0x73, 0x65, 0x03, 0x00, 0x04, 0x69, 0x6e,
    0x69, 0x74, 0x00, 0x02, 0x03, 0x62, 0x75, 0x66, 0x00, 0x03, 0x04, 0x73, 0x74, 0x65, 0x70, 0x00, 0x04, 0x04, 0x62,
    0x6f, 0x6f, 0x6d, 0x00, 0x05, 0x0a, 0x53, 0x04, 0x09, 0x00, 0x23, 0x01, 0x20, 0x00, 0x6a, 0x24, 0x01, 0x0b, 0x05,
    0x00, 0x41, 0x80, 0x04, 0x0b, 0x39, 0x00, 0x23, 0x00, 0x41, 0x80, 0x04, 0x28, 0x02, 0x00, 0x23, 0x01, 0x6a, 0x20,
    0x00, 0x6a, 0x36, 0x02, 0x00, 0x20, 0x00, 0x41, 0x00, 0x43, 0x00, 0x00, 0x80, 0x3f, 0x43, 0x00, 0x00, 0x00, 0x00,
    0x43, 0x00, 0x00, 0x00, 0x00, 0x43, 0x00, 0x00, 0x80, 0x3f, 0x10, 0x00, 0x41, 0x00, 0x41, 0x01, 0x10, 0x01, 0x1a,
    0x23, 0x00, 0x28, 0x02, 0x00, 0x0b, 0x07, 0x00, 0x41, 0x01, 0x20, 0x00, 0x6e, 0x0b};

wasmwarp::Module module() {
  auto m = wasmwarp::Module::from_bytes(kModule);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return *m;
}

int32_t i32_at(std::span<const uint8_t> bytes, uint64_t i) {
  int32_t v;
  std::memcpy(&v, &bytes[i * 4], 4);
  return v;
}

// step(i) on n instances: mem[buf] from a memory input at the address
// export "buf" (a function), the init calls' seed, and the result also read
// back at the address global "base".
TEST(ApiSurface, InitCallsAddressExportsAndIntrinsics) {
  const uint64_t n = 40;
  std::vector<uint8_t> in(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t v = int32_t(1000 * i);
    std::memcpy(&in[i * 4], &v, 4);
  }
  wasmwarp::CallOptions o;
  o.init = {{"init", {wasmwarp::Arg::i32(5)}, 2}, {"init", {wasmwarp::Arg::i32(1)}, 1}};  // seed 11
  o.memory_in.push_back({.record_size = 4, .bytes = in, .address_export = "buf"});
  o.memory_out.push_back({.length = 4, .address_export = "base"});
  o.intrinsics.image_width = 64;
  o.intrinsics.image_height = 2;
  o.intrinsics.state = {100, 7};
  auto r = cpu().call(module(), "step", n, {wasmwarp::Arg::index()}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t want = int32_t(1000 * i + 11 + i);
    ASSERT_EQ(r->i32(i), want) << i;
    ASSERT_EQ(i32_at(r->memory_out(0), i), want) << i;
  }
  ASSERT_EQ(r->state().size(), 2u);
  EXPECT_EQ(r->state()[0], 100 + int32_t(n));
  EXPECT_EQ(r->state()[1], 7);
  ASSERT_NE(r->image(), nullptr);
  EXPECT_EQ(r->image()->width, 64u);
  EXPECT_EQ(r->image()->rgba.size(), 64u * 2 * 4);
  // Pixel (5, 0) is opaque red, pixel (5, 1) untouched.
  EXPECT_EQ(r->image()->rgba[5 * 4 + 0], 255);
  EXPECT_EQ(r->image()->rgba[5 * 4 + 3], 255);
  EXPECT_EQ(r->image()->rgba[(64 + 5) * 4 + 3], 0);
  EXPECT_EQ(r->ignored_pixels(), 0u);
}

TEST(ApiSurface, BadAddressesInitCallsAndCanvasesAreErrors) {
  wasmwarp::Module m = module();
  auto fails = [&](const wasmwarp::CallOptions& o, const std::string& want) {
    auto r = cpu().call(m, "step", 2, {wasmwarp::Arg::index()}, o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  };
  wasmwarp::CallOptions o;
  o.memory_out.push_back({.length = 4, .address_export = "nope"});
  fails(o, "memory address 'nope' is neither a number nor an export");
  o.memory_out = {{.length = 4, .address_export = "step"}};
  fails(o, "memory address export 'step' has type (i32) -> (i32), need () -> (i32)");
  o.memory_out = {{.length = 0}};
  fails(o, "a length of at least 1");
  o.memory_out.clear();
  o.init = {{"init", {}, 1}};
  fails(o, "init call 'init' takes 1 argument(s), given 0");
  o.init = {{"init", {wasmwarp::Arg::index()}, 1}};
  fails(o, "must be a i32 scalar");
  o.init = {{"nope", {}, 1}};
  fails(o, "unknown export 'nope'");
  o.init.clear();
  o.intrinsics.image_width = 70000;
  o.intrinsics.image_height = 1;
  fails(o, "each side 1..65535");
  o.intrinsics = {};
  o.intrinsics.textures.push_back({16, {1, 1, {1, 2, 3, 4}}});
  fails(o, "texture unit 16 out of range");

  wasmwarp::EngineOptions e;
  e.backend = wasmwarp::Backend::Cpu;
  e.gpu.tuning.wave_slices = 0;
  auto r = wasmwarp::Engine(e).call(m, "step", 1, {wasmwarp::Arg::i32(0)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("gpu tuning: wave_slices is 1 to 8, not 0"), std::string::npos) << r.error().message;
  e.gpu.tuning = {};
  e.gpu.tuning.staging_pieces = 9;
  r = wasmwarp::Engine(e).call(m, "step", 1, {wasmwarp::Arg::i32(0)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("staging_pieces is 2 to 8, not 9"), std::string::npos) << r.error().message;
  EXPECT_FALSE(wasmwarp::parse_memory_layout("diagonal"));
  EXPECT_EQ(wasmwarp::parse_memory_layout("sparse"), wasmwarp::MemoryLayout::Sparse);
  EXPECT_STREQ(wasmwarp::memory_layout_name(wasmwarp::MemoryLayout::Contiguous), "contiguous");
}

// Rows handed out while the call runs are final; together they cover every
// instance, and they agree with the result the call returns.
TEST(ApiSurface, ColumnsStreamWhileTheCallRuns) {
  const uint64_t n = 5000;
  std::mutex mu;
  uint64_t last = 0, calls = 0;
  bool monotonic = true;
  std::vector<int32_t> seen(n, -1);
  wasmwarp::CallOptions o;
  o.on_ready = [&](const wasmwarp::ResultColumns& c, uint64_t ready) {
    std::lock_guard<std::mutex> g(mu);
    monotonic &= ready >= last;
    ASSERT_EQ(c.instances, n);
    ASSERT_EQ(c.types, std::vector<wasmwarp::ValueType>{wasmwarp::ValueType::I32});
    for (uint64_t i = last; i < ready; ++i) seen[i] = int32_t(uint32_t(c.bits(i, 0)));
    last = std::max(last, ready);
    ++calls;
  };
  auto r = cpu().call(module(), "boom", n, {wasmwarp::Arg::index()}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(monotonic);
  EXPECT_GT(calls, 0u);
  EXPECT_EQ(last, n);
  const wasmwarp::ResultColumns c = r->columns();
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(seen[i], r->i32(i)) << i;
    ASSERT_EQ(c.traps[i], r->trap_codes()[i]);
  }
}

TEST(ApiSurface, TrapSitesAndTheReport) {
  wasmwarp::Module m = module();
  auto r = cpu().call(m, "boom", 4, {wasmwarp::Arg::index()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->trap_message(0), "integer divide by zero");
  EXPECT_TRUE(r->finished(0));
  EXPECT_EQ(r->trap_function(0), 5u);  // two imports, then init, buf, step, boom
  EXPECT_NE(r->trap_offset(0), wasmwarp::kNoTrapOffset);
  EXPECT_EQ(m.function_name(5), "boom");
  EXPECT_EQ(r->i32(1), 1);
  const wasmwarp::RunReport& rep = r->report();
  EXPECT_EQ(rep.backend, wasmwarp::Backend::Cpu);
  EXPECT_EQ(rep.threads, 2u);
  EXPECT_GT(rep.wall_s, 0);
  ASSERT_FALSE(rep.segments.empty());
  uint64_t covered = 0;
  for (const wasmwarp::Segment& s : rep.segments) covered += s.count;
  EXPECT_EQ(covered, 4u);
  r->set_caller_phases(1.5, 2.5, 3.5);
  EXPECT_EQ(r->report().phases.read_inputs, 1.5);
  EXPECT_EQ(r->report().phases.write_outputs, 3.5);
  EXPECT_STREQ(wasmwarp::tier_name(wasmwarp::Tier::Interpreter), "interp");
  EXPECT_STREQ(wasmwarp::backend_name(wasmwarp::Backend::Gpu), "gpu");
}

TEST(ApiSurface, ListingsAndValidation) {
  wasmwarp::Module m = module();
  EXPECT_FALSE(m.is_wasi_command());
  EXPECT_EQ(m.memory_count(), 1u);
  const std::string d = m.describe("surface.wasm");
  EXPECT_NE(d.find("module: surface.wasm (223 bytes)"), std::string::npos) << d;
  EXPECT_NE(d.find("gpu.set_pixel: func (i32, i32, f32, f32, f32, f32) -> ()"), std::string::npos) << d;
  EXPECT_NE(d.find("step: func 4 (i32) -> (i32)"), std::string::npos) << d;
  EXPECT_NE(d.find("recursive groups: none"), std::string::npos) << d;
  EXPECT_NE(m.disassemble().find("boom"), std::string::npos);
  EXPECT_GE(m.times().decode, 0);
  EXPECT_EQ(wasmwarp::to_string(m.function_type("step").value()), "(i32) -> (i32)");

  EXPECT_FALSE(wasmwarp::validate(kModule).has_value());
  std::vector<uint8_t> bad = kModule;
  bad.resize(bad.size() - 3);
  auto e = wasmwarp::validate(bad);
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->message.empty());
  // A function whose result is missing: decodes, does not validate.
  const std::vector<uint8_t> invalid = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00,
                                        0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b};
  e = wasmwarp::validate(invalid);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->message.find("type mismatch"), std::string::npos) << e->message;

  auto rec = wasmwarp::Module::from_bytes(kModule, {.deny_recursion = true});
  EXPECT_TRUE(rec.ok());
}

TEST(ApiSurface, CompileAheadOfTimeGivesTheSource) {
  wasmwarp::EngineOptions e;
  e.backend = wasmwarp::Backend::Cpu;
  e.cache = false;
  wasmwarp::CompileRequest req;
  req.exports = {"boom"};
  req.source_only = true;
  auto info = wasmwarp::Engine(e).compile(module(), req);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->target, wasmwarp::Backend::Cpu);
  ASSERT_FALSE(info->sources.empty());
  EXPECT_GT(info->sources[0].size(), 1000u);
  req.exports = {"nope"};
  auto bad = wasmwarp::Engine(e).compile(module(), req);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown export 'nope'"), std::string::npos);
  req.exports.clear();
  req.gpu_arch = "sm_5";
  bad = wasmwarp::Engine(e).compile(module(), req);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("sm_70 or later"), std::string::npos);
}

TEST(ApiSurface, ScalarAndColumnBitsOfAnyType) {
  wasmwarp::Module m = module();
  auto r = cpu().call(m, "boom", 3, {wasmwarp::Arg::column_bits(wasmwarp::ValueType::I32, {1, 0, 1})});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->i32(0), 1);
  EXPECT_TRUE(r->trapped(1));
  EXPECT_EQ(r->trap_count(), 1u);
  r = cpu().call(m, "boom", 2, {wasmwarp::Arg::scalar_bits(wasmwarp::ValueType::I64, 1)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is i32, given i64"), std::string::npos) << r.error().message;
}

/* wat2wasm of:
(module
  (global $acc (mut v128) (v128.const i32x4 10 20 30 40))
  (func (export "bump") (param $k i32)
    (global.set $acc (i32x4.add (global.get $acc) (i32x4.splat (local.get $k)))))
  (func (export "lane2") (result i32) (i32x4.extract_lane 2 (global.get $acc))))
*/
const std::vector<uint8_t> kSimdModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x09, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x00, 0x01, 0x7f,
    0x03, 0x03, 0x02, 0x00, 0x01, 0x06, 0x16, 0x01, 0x7b, 0x01, 0xfd, 0x0c, 0x0a, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
    0x00, 0x1e, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x0b, 0x07, 0x10, 0x02, 0x04, 0x62, 0x75, 0x6d, 0x70, 0x00,
    0x00, 0x05, 0x6c, 0x61, 0x6e, 0x65, 0x32, 0x00, 0x01, 0x0a, 0x17, 0x02, 0x0d, 0x00, 0x23, 0x00, 0x20, 0x00, 0xfd,
    0x11, 0xfd, 0xae, 0x01, 0x24, 0x00, 0x0b, 0x07, 0x00, 0x23, 0x00, 0xfd, 0x1b, 0x02, 0x0b};

// A module with v128 runs on every backend: fresh instances with an init
// call, resident ones keeping their v128 global (its high word, lane 2,
// included) from call to call.
TEST(ApiSurface, SimdModulesRunOnEveryBackend) {
  auto m = wasmwarp::Module::from_bytes(kSimdModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu}) {
    SCOPED_TRACE(b == wasmwarp::Backend::Cpu ? "cpu" : "gpu");
    wasmwarp::CallOptions o;
    o.init = {{"bump", {wasmwarp::Arg::i32(5)}, 1}};
    auto r = engine_on(b).call(*m, "lane2", 3, {}, o);
    if (b == wasmwarp::Backend::Gpu && !r.ok()) {
      EXPECT_NE(r.error().message.find("GPU"), std::string::npos) << r.error().message;
      GTEST_SKIP() << "no GPU: " << r.error().message;
    }
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(r->i32(i), 35);
    EXPECT_EQ(r->report().backend, b);

    auto inst = engine_on(b).instances(*m, 4);
    ASSERT_TRUE(inst.ok()) << inst.error().message;
    ASSERT_TRUE(inst->call("bump", {wasmwarp::Arg::index()}).ok());
    ASSERT_TRUE(inst->call("bump", {wasmwarp::Arg::i32(1)}).ok());
    r = inst->call("lane2", {});
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(r->i32(i), 30 + int32_t(i) + 1) << i;
  }
}

/* wat2wasm of tests/cli/modules/lanes.wat:
(module
  (func (export "add_lanes") (param $v v128) (param $k i32) (result v128)
    (i32x4.add (local.get $v) (i32x4.splat (local.get $k))))
  (func (export "pair") (param $v v128) (result v128 i32)
    (local.get $v) (i32x4.extract_lane 3 (local.get $v))))
*/
const std::vector<uint8_t> kLanesModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0d, 0x02, 0x60, 0x02, 0x7b, 0x7f, 0x01, 0x7b, 0x60, 0x01,
    0x7b, 0x02, 0x7b, 0x7f, 0x03, 0x03, 0x02, 0x00, 0x01, 0x07, 0x14, 0x02, 0x09, 0x61, 0x64, 0x64, 0x5f, 0x6c, 0x61,
    0x6e, 0x65, 0x73, 0x00, 0x00, 0x04, 0x70, 0x61, 0x69, 0x72, 0x00, 0x01, 0x0a, 0x17, 0x02, 0x0b, 0x00, 0x20, 0x00,
    0x20, 0x01, 0xfd, 0x11, 0xfd, 0xae, 0x01, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x00, 0xfd, 0x1b, 0x03, 0x0b};

// v128 arguments (constants) and results cross the API on every backend
// and tier: beside a column of another parameter, with @index, in a chain.
TEST(ApiSurface, V128ArgumentsAndResults) {
  auto m = wasmwarp::Module::from_bytes(kLanesModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t lo = 0x0000000a00000000ull, hi = 0xffffffff00000014ull;  // i32x4 0 10 20 -1
  const std::vector<int32_t> ks = {5, 0, -7};
  auto lane = [](uint64_t lo_, uint64_t hi_, int k) { return uint32_t((k < 2 ? lo_ : hi_) >> (32 * (k % 2))); };
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
      SCOPED_TRACE(std::string(wasmwarp::backend_name(b)) + " " + wasmwarp::tier_name(t));
      const wasmwarp::Engine e = engine_on(b, t);
      auto r = e.call(*m, "add_lanes", ks.size(), {wasmwarp::Arg::v128(lo, hi), wasmwarp::Arg::column(ks)});
      if (b == wasmwarp::Backend::Gpu && !r.ok()) {
        EXPECT_NE(r.error().message.find("GPU"), std::string::npos) << r.error().message;
        GTEST_SKIP() << "no GPU: " << r.error().message;
      }
      ASSERT_TRUE(r.ok()) << r.error().message;
      for (uint64_t i = 0; i < ks.size(); ++i)
        for (int k = 0; k < 4; ++k)
          EXPECT_EQ(lane(r->bits(i, 0), r->bits_hi(i, 0), k), lane(lo, hi, k) + uint32_t(ks[i])) << i << " " << k;
      r = e.call(*m, "add_lanes", 2, {wasmwarp::Arg::v128(lo, hi), wasmwarp::Arg::index()});
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->bits_hi(1, 0), 0x0000000000000015ull);
      const auto c = r->columns();
      ASSERT_NE(c.results_hi, nullptr);
      EXPECT_EQ(c.results_hi[0], hi);
      r = e.chain(*m, 2,
                  {{"add_lanes", {wasmwarp::Arg::v128(lo, hi), wasmwarp::Arg::i32(1)}},
                   {"pair", {wasmwarp::Arg::v128(0, 0x0000000700000000ull)}}});
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->bits_hi(0, 0), 0x0000000700000000ull);
      EXPECT_EQ(r->i32(1, 1), 7);
      if (b == wasmwarp::Backend::Gpu) {
        // Device columns are 4 or 8 bytes a row.
        wasmwarp::CallOptions on_device;
        on_device.results_on_device = true;
        auto d = e.call(*m, "add_lanes", 2, {wasmwarp::Arg::v128(lo, hi), wasmwarp::Arg::i32(1)}, on_device);
        ASSERT_FALSE(d.ok());
        EXPECT_NE(d.error().message.find("a v128 result comes back to the host only"), std::string::npos)
            << d.error().message;
      }
    }
  auto bad = cpu().call(*m, "add_lanes", 2,
                        {wasmwarp::Arg::column_bits(wasmwarp::ValueType::V128, {1, 2}), wasmwarp::Arg::i32(0)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("is a v128, which is given as a constant"), std::string::npos)
      << bad.error().message;
}

}  // namespace
