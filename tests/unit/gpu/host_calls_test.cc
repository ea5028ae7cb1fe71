// Host functions on the GPU: instances that call an import the host serves
// leave the kernel, the wave loop serves every call of the launch and the
// instances resume at the call site. Runs where a GPU is present (the
// device machine, scripts/gpu-check.sh) and skips elsewhere.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <tuple>

#include "exec/gpu/gpu_backend.h"
#include "gpu_test_support.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (import "env" "add" (func $add (param i32 i32) (result i32)))
  (import "env" "fill" (func $fill (param i32 i32 i32) (result i32)))
  (import "env" "boom" (func $boom (param i32)))
  (memory 2)
  (table 1 funcref)
  (elem (i32.const 0) $add)
  (type $ii_i (func (param i32 i32) (result i32)))
  (func (export "loop") (param $x i32) (param $n i32) (result i32)
    (local $k i32) (local $acc i32)
    (block $d
      (loop $l
        (br_if $d (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $acc (i32.add (local.get $acc) (call $add (local.get $x) (local.get $k))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (i32.add (local.get $acc) (call_indirect (type $ii_i) (local.get $x) (i32.const 1000) (i32.const 0))))
  (func $deep (export "deep") (param $d i32) (param $x i32) (result i32)
    (if (result i32) (i32.eqz (local.get $d))
      (then (call $add (local.get $x) (i32.const 1)))
      (else (i32.add (local.get $d) (call $deep (i32.sub (local.get $d) (i32.const 1)) (local.get $x))))))
  (func (export "mem") (param $x i32) (result i32)
    (i32.store (i32.const 70000) (local.get $x))
    (i32.add (call $fill (i32.const 70000) (i32.const 3000) (local.get $x))
             (i32.load8_u (i32.const 72999))))
  (func (export "boom") (param $x i32) (result i32)
    (call $boom (local.get $x))
    (i32.const 7)))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x17, 0x04, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x03,
    0x7f, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x02, 0x21, 0x03, 0x03, 0x65,
    0x6e, 0x76, 0x03, 0x61, 0x64, 0x64, 0x00, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x66, 0x69, 0x6c, 0x6c, 0x00, 0x01,
    0x03, 0x65, 0x6e, 0x76, 0x04, 0x62, 0x6f, 0x6f, 0x6d, 0x00, 0x02, 0x03, 0x05, 0x04, 0x00, 0x00, 0x03, 0x03, 0x04,
    0x04, 0x01, 0x70, 0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x02, 0x07, 0x1c, 0x04, 0x04, 0x6c, 0x6f, 0x6f, 0x70, 0x00,
    0x03, 0x04, 0x64, 0x65, 0x65, 0x70, 0x00, 0x04, 0x03, 0x6d, 0x65, 0x6d, 0x00, 0x05, 0x04, 0x62, 0x6f, 0x6f, 0x6d,
    0x00, 0x06, 0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00, 0x0a, 0x78, 0x04, 0x32, 0x01, 0x02, 0x7f, 0x02,
    0x40, 0x03, 0x40, 0x20, 0x02, 0x20, 0x01, 0x4f, 0x0d, 0x01, 0x20, 0x03, 0x20, 0x00, 0x20, 0x02, 0x10, 0x00, 0x6a,
    0x21, 0x03, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x21, 0x02, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x03, 0x20, 0x00, 0x41, 0xe8,
    0x07, 0x41, 0x00, 0x11, 0x00, 0x00, 0x6a, 0x0b, 0x1b, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x20, 0x01, 0x41, 0x01,
    0x10, 0x00, 0x05, 0x20, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x20, 0x01, 0x10, 0x04, 0x6a, 0x0b, 0x0b, 0x1e, 0x00,
    0x41, 0xf0, 0xa2, 0x04, 0x20, 0x00, 0x36, 0x02, 0x00, 0x41, 0xf0, 0xa2, 0x04, 0x41, 0xb8, 0x17, 0x20, 0x00, 0x10,
    0x01, 0x41, 0xa7, 0xba, 0x04, 0x2d, 0x00, 0x00, 0x6a, 0x0b, 0x08, 0x00, 0x20, 0x00, 0x10, 0x02, 0x41, 0x07, 0x0b};

// env.add, env.fill (reads [p, p + n), returns the sum of its bytes, then
// writes v & 0xff over it) and env.boom (traps for odd arguments).
class TestServer final : public HostCallServer {
 public:
  void begin(uint32_t, uint32_t n) override { begun += n; }
  void serve(HostCall& c) override {
    ++served;
    switch (c.func) {
      case 0: c.io[0] = uint32_t(uint32_t(c.io[0]) + uint32_t(c.io[1])); return;
      case 1: {
        const uint32_t p = uint32_t(c.io[0]), n = uint32_t(c.io[1]), v = uint32_t(c.io[2]);
        if (!c.memory || !c.memory->in(p, n)) {
          c.trap = TrapCode::MemoryOutOfBounds;
          return;
        }
        const uint8_t* src = c.memory->read(p, n);
        if (!src) return;  // served again once the bytes are here
        uint32_t sum = 0;
        for (uint32_t k = 0; k < n; ++k) sum += src[k];
        uint8_t* dst = c.memory->window(p, n);
        std::memset(dst, int(v & 0xff), n);
        c.memory->written(p, n);
        c.io[0] = sum;
        return;
      }
      default:
        if (c.io[0] & 1) c.trap = TrapCode::Unreachable;
        return;
    }
  }
  std::atomic<uint64_t> served{0}, begun{0};
};

uint32_t byte_sum(uint32_t x) { return (x & 0xff) + (x >> 8 & 0xff) + (x >> 16 & 0xff) + (x >> 24); }

// Every layout, on the interpreter kernel and on compiled code (which
// unwinds its calls to leave and rewinds them to resume).
class HostCallTest : public ::testing::TestWithParam<std::tuple<MemoryLayout, bool>> {
 protected:
  void SetUp() override {
    DeviceInfo d = probe_device();
    if (!d.available) GTEST_SKIP() << "no GPU: " << d.reason;
    cm_ = compile_or_fail(kModule);
    ASSERT_TRUE(cm_);
  }
  BatchRequest request(const std::string& fn, uint32_t n, std::vector<uint64_t> args_of_each) {
    BatchRequest r;
    r.module = cm_;
    r.func_index = export_func(cm_->module, fn);
    r.instances = n;
    r.layout = std::get<0>(GetParam());
    r.args_per_instance = true;
    for (uint32_t i = 0; i < n; ++i)
      for (uint64_t a : args_of_each) r.args.push_back(a == kIndex ? i : a);
    r.host_calls = &server_;
    return r;
  }
  Result<RunResult> run(const BatchRequest& r) { return run_on_tier(r, std::get<1>(GetParam())); }
  static constexpr uint64_t kIndex = ~uint64_t{0};
  std::shared_ptr<const CompiledModule> cm_;
  TestServer server_;
};

TEST_P(HostCallTest, CallsInALoopResumeEachTime) {
  const uint32_t n = 3000, calls = 5;
  auto r = run(request("loop", n, {kIndex, calls}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(r->traps[i], 0) << i;
    ASSERT_EQ(uint32_t(r->results[i]), calls * i + calls * (calls - 1) / 2 + i + 1000) << i;
  }
  EXPECT_EQ(server_.served.load(), uint64_t(n) * (calls + 1));
  EXPECT_EQ(r->host_passes, calls + 1);
  EXPECT_EQ(r->host_calls, uint64_t(n) * (calls + 1));
}

TEST_P(HostCallTest, ACallAtTheBottomOfARecursionResumesEveryFrame) {
  auto r = run(request("deep", 500, {40, kIndex}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < 500; ++i) ASSERT_EQ(uint32_t(r->results[i]), 40 * 41 / 2 + i + 1) << i;
}

// 400 calls deep, past the instance's own 64 call records: the call
// leaves from a stack segment, resumes there and returns through them all.
TEST_P(HostCallTest, ACallFromStackSegmentsResumesThere) {
  BatchRequest q = request("deep", 700, {400, kIndex});
  q.call_depth_limit = 20000;
  q.stack_slots_limit = 1u << 20;
  auto r = run(q);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < 700; ++i) {
    ASSERT_EQ(r->traps[i], 0) << i;
    ASSERT_EQ(uint32_t(r->results[i]), 400 * 401 / 2 + i + 1) << i;
  }
  EXPECT_GT(r->stack_pool_bytes, 0u);
}

// A lone instance that goes past its own stack into segments never runs
// again (the pool is there from the start when the host serves calls):
// running again would serve its calls twice, a WASI program's directory
// made twice.
TEST_P(HostCallTest, ALoneInstancePastItsStackIsServedOnce) {
  if (std::get<1>(GetParam()))
    GTEST_SKIP() << "not yet on compiled code: recursion past the CUDA stack runs again on the interpreter "
                    "from the start, and the host serves the calls made before it again (docs/guide.md)";
  BatchRequest q = request("deep", 1, {400, kIndex});
  q.call_depth_limit = 20000;
  q.stack_slots_limit = 1u << 20;
  auto r = run(q);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->traps[0], 0);
  EXPECT_EQ(uint32_t(r->results[0]), 400 * 401 / 2 + 1);
  EXPECT_EQ(server_.served.load(), 1u);
  EXPECT_EQ(server_.begun.load(), 1u);
  EXPECT_EQ(r->pool_reruns + r->stack_reruns + r->grow_reruns, 0u);
}

TEST_P(HostCallTest, TheHostReadsAndWritesTheInstancesMemory) {
  const uint32_t n = 2000;
  auto r = run(request("mem", n, {kIndex}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(r->traps[i], 0) << i;
    ASSERT_EQ(uint32_t(r->results[i]), byte_sum(i) + (i & 0xff)) << i;
  }
  // 3000 bytes from 70000 span four granules: one round fetches them.
  EXPECT_EQ(r->host_fetch_rounds, 1u);
}

TEST_P(HostCallTest, AHostTrapEndsOnlyItsInstance) {
  const uint32_t n = 1000;
  auto r = run(request("boom", n, {kIndex}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(r->traps[i], i & 1 ? uint8_t(TrapCode::Unreachable) : 0) << i;
    ASSERT_TRUE(r->finished[i]);
    if (!(i & 1)) {
      ASSERT_EQ(uint32_t(r->results[i]), 7u);
    }
  }
}

TEST_P(HostCallTest, FuelCountsAcrossTheCall) {
  BatchRequest q = request("loop", 64, {kIndex, 50});
  q.fuel = 60;  // 50 host calls and 50 back-edges exceed it
  auto r = run(q);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(r->traps[i], uint8_t(TrapCode::FuelExhausted)) << i;
}

TEST_P(HostCallTest, WithoutAServerTheImportIsUnsatisfied) {
  BatchRequest q = request("loop", 32, {kIndex, 1});
  q.host_calls = nullptr;
  auto r = run(q);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown import env.add"), std::string::npos) << r.error().message;
}

TEST_P(HostCallTest, EveryWaveOfAManyWaveBatchIsServed) {
  BatchRequest q = request("loop", 5000, {kIndex, 2});
  q.max_wave = 1024;
  auto r = run(q);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_GE(r->plan.waves, 5u);
  for (uint32_t i = 0; i < 5000; ++i) ASSERT_EQ(uint32_t(r->results[i]), 2 * i + 1 + i + 1000) << i;
  EXPECT_EQ(server_.begun.load(), 5000u);
}

// More instances than the GPU holds at once: blocks that start late resume
// after earlier ones have left again, and no record may be reused while an
// instance still has to read it (a million-instance WASI batch would lose
// some of its outputs that way).
TEST_P(HostCallTest, InstancesResumedLateStillReadTheirOwnResults) {
  if (std::get<0>(GetParam()) != MemoryLayout::Sparse) GTEST_SKIP() << "one layout is enough";
  const uint32_t n = 600000, calls = 3;
  auto r = run(request("loop", n, {kIndex, calls}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  uint32_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i)
    wrong += r->traps[i] != 0 || uint32_t(r->results[i]) != calls * i + calls * (calls - 1) / 2 + i + 1000;
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(LayoutsAndTiers, HostCallTest,
                         ::testing::Combine(::testing::Values(MemoryLayout::Interleaved, MemoryLayout::Contiguous,
                                                              MemoryLayout::Sparse),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<MemoryLayout, bool>>& i) {
                           const MemoryLayout l = std::get<0>(i.param);
                           return std::string(l == MemoryLayout::Interleaved  ? "Interleaved"
                                              : l == MemoryLayout::Contiguous ? "Contiguous"
                                                                              : "Sparse") +
                                  (std::get<1>(i.param) ? "Compiled" : "Interpreter");
                         });

}  // namespace
}  // namespace ww::gpu
