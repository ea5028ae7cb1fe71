// A call spread over several GPUs (EngineOptions::Gpu::devices): the rows
// equal one GPU's, in instance order, and every GPU's part adds up to the
// batch. One GPU listed twice shares it, so a machine with one GPU runs
// the whole path (claims, merged figures, the ready prefix) too. Includes
// nothing of src/.
#include <gtest/gtest.h>

#include <cstring>

#include "api_test_support.h"
#include "wasmwarp/wasmwarp.h"

namespace {

/* wat2wasm of:
(module
  (memory (export "memory") 1)
  ;; loops i % 4096 times (instances differ in cost), stores and returns a hash of i
  (func (export "f") (param $i i32) (result i32)
    (local $h i32) (local $k i32)
    (local.set $h (local.get $i))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (i32.and (local.get $i) (i32.const 4095))))
        (local.set $h (i32.add (i32.mul (local.get $h) (i32.const 31)) (local.get $k)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    (i32.store (i32.const 16) (local.get $h))
    (local.get $h)))
*/
const std::vector<uint8_t> kUneven = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x03,
    0x02, 0x01, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x0e, 0x02, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72,
    0x79, 0x02, 0x00, 0x01, 0x66, 0x00, 0x00, 0x0a, 0x37, 0x01, 0x35, 0x01, 0x02, 0x7f, 0x20, 0x00, 0x21,
    0x01, 0x02, 0x40, 0x03, 0x40, 0x20, 0x02, 0x20, 0x00, 0x41, 0xff, 0x1f, 0x71, 0x4f, 0x0d, 0x01, 0x20,
    0x01, 0x41, 0x1f, 0x6c, 0x20, 0x02, 0x6a, 0x21, 0x01, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x21, 0x02, 0x0c,
    0x00, 0x0b, 0x0b, 0x41, 0x10, 0x20, 0x01, 0x36, 0x02, 0x00, 0x20, 0x01, 0x0b,
};

uint32_t expected(uint32_t i) {
  uint32_t h = i;
  for (uint32_t k = 0; k < (i & 4095); ++k) h = h * 31 + k;
  return h;
}

TEST(ApiGpus, OneGpuListedTwiceGivesOneGpusRows) {
  auto m = wasmwarp::Module::from_bytes(kUneven);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t n = 600'000;  // two claims of at least what an H200 runs at once (270,336)
  for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
    SCOPED_TRACE(wasmwarp::tier_name(t));
    wasmwarp::EngineOptions o = options_on(wasmwarp::Backend::Gpu, t);
    o.gpu.devices = {0, 0};
    o.gpu.max_wave = 50'000;  // waves smaller than the claims: a device runs several per claim
    const wasmwarp::Engine e(o);
    wasmwarp::CallOptions co;
    co.memory_out = {{16, 4}};
    uint64_t ready = 0;
    bool ready_grew = true;
    co.on_ready = [&](const wasmwarp::ResultColumns&, uint64_t upto) {
      ready_grew &= upto >= ready;
      ready = upto;
    };
    auto r = e.call(*m, "f", n, {wasmwarp::Arg::index()}, co);
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("GPU"), std::string::npos) << r.error().message;
      GTEST_SKIP() << "no GPU: " << r.error().message;
    }
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(uint32_t(r->i32(i)), expected(uint32_t(i))) << i;
      uint32_t stored = 0;
      std::memcpy(&stored, r->memory_out(0).data() + i * 4, 4);
      ASSERT_EQ(stored, expected(uint32_t(i))) << i;
    }
    const wasmwarp::RunReport& rep = r->report();
    ASSERT_EQ(rep.gpus.size(), 2u) << rep.device;
    EXPECT_EQ(rep.gpus[0].instances + rep.gpus[1].instances, n);
    // A wave loop that is ready takes what is left: on compiled code the
    // whole batch's waves take less time than a second wave loop's pinned
    // staging takes to allocate (bench/scale/alloc_cost.cu measures
    // pinning), so the first may rightly take every claim. The
    // interpreter's batch outlasts any wave loop's set-up: both take part.
    if (t == wasmwarp::Tier::Interpreter) {
      EXPECT_GT(rep.gpus[0].instances, 0u);
      EXPECT_GT(rep.gpus[1].instances, 0u);
    }
    EXPECT_NE(rep.device.find("2 GPUs"), std::string::npos) << rep.device;
    EXPECT_TRUE(ready_grew);
    EXPECT_EQ(ready, n);
  }
}

// Two wave loops per GPU: each GPU listed twice, the rows one GPU's.
TEST(ApiGpus, TwoWaveLoopsPerGpu) {
  auto m = wasmwarp::Module::from_bytes(kUneven);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t n = 600'000;
  wasmwarp::EngineOptions o = options_on(wasmwarp::Backend::Gpu, wasmwarp::Tier::Interpreter);
  o.gpu.tuning.wave_loops_per_gpu = 0;
  auto bad = wasmwarp::Engine(o).call(*m, "f", 10, {wasmwarp::Arg::index()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("wave_loops_per_gpu is 1 to 8"), std::string::npos) << bad.error().message;
  o.gpu.tuning.wave_loops_per_gpu = 2;
  auto r = wasmwarp::Engine(o).call(*m, "f", n, {wasmwarp::Arg::index()});
  if (!r.ok()) {
    EXPECT_NE(r.error().message.find("GPU"), std::string::npos) << r.error().message;
    GTEST_SKIP() << "no GPU: " << r.error().message;
  }
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(uint32_t(r->i32(i)), expected(uint32_t(i))) << i;
  const wasmwarp::RunReport& rep = r->report();
  ASSERT_EQ(rep.gpus.size(), 2u * uint64_t(wasmwarp::gpu_count())) << rep.device;
  uint64_t all = 0;
  for (const wasmwarp::GpuShare& g : rep.gpus) all += g.instances;
  EXPECT_EQ(all, n);
}

TEST(ApiGpus, AGpuThatIsNotThereIsNamed) {
  auto m = wasmwarp::Module::from_bytes(kUneven);
  ASSERT_TRUE(m.ok()) << m.error().message;
  wasmwarp::EngineOptions o = options_on(wasmwarp::Backend::Gpu);
  o.gpu.devices = {0, 99};
  auto r = wasmwarp::Engine(o).call(*m, "f", 10, {wasmwarp::Arg::index()});
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.error().message;
  EXPECT_TRUE(msg.find("GPU 99 was asked for") != std::string::npos ||
              msg.find("GPU backend was asked for") != std::string::npos)
      << msg;
  o.gpu.memory_share = 0;
  auto bad = wasmwarp::Engine(o).call(*m, "f", 10, {wasmwarp::Arg::index()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("memory share"), std::string::npos) << bad.error().message;
}

}  // namespace
