// Results that come down while their wave's kernel still runs
// (wave_stream.cu): every instance's result and trap as when they come
// down after it, with 32-bit results (packed on the device) and 64-bit
// ones, with traps inside the stretches. Runs where a GPU is present and
// skips elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "exec/gpu/gpu_backend.h"
#include "gpu_test_support.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (func $work (export "work") (param $i i32) (param $scale i32) (result i32) (local $k i32) (local $acc i32)
    (local.set $acc (i32.div_u (local.get $i)
      (i32.sub (i32.rem_u (local.get $i) (i32.const 1009)) (i32.const 7))))
    (loop $l
      (local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 1664525)) (i32.const 1013904223)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $k)
        (i32.mul (i32.and (local.get $i) (i32.const 1023)) (local.get $scale)))))
    (local.get $acc))
  (func $wide (export "wide") (param $i i32) (param $scale i32) (result i64)
    (i64.mul (i64.extend_i32_u (call $work (local.get $i) (local.get $scale))) (i64.const 0x100000001)))
  (func $spin (export "spin") (param $i i32) (param $scale i32) (result i32)
    (if (i32.eq (local.get $i) (i32.const 1000000)) (then (loop $forever (br $forever))))
    (call $work (local.get $i) (local.get $scale))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0d, 0x02, 0x60,
    0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7e, 0x03,
    0x04, 0x03, 0x00, 0x01, 0x00, 0x07, 0x16, 0x03, 0x04, 0x77, 0x6f, 0x72,
    0x6b, 0x00, 0x00, 0x04, 0x77, 0x69, 0x64, 0x65, 0x00, 0x01, 0x04, 0x73,
    0x70, 0x69, 0x6e, 0x00, 0x02, 0x0a, 0x68, 0x03, 0x3d, 0x01, 0x02, 0x7f,
    0x20, 0x00, 0x20, 0x00, 0x41, 0xf1, 0x07, 0x70, 0x41, 0x07, 0x6b, 0x6e,
    0x21, 0x03, 0x03, 0x40, 0x20, 0x03, 0x41, 0x8d, 0xcc, 0xe5, 0x00, 0x6c,
    0x41, 0xdf, 0xe6, 0xbb, 0xe3, 0x03, 0x6a, 0x21, 0x03, 0x20, 0x02, 0x41,
    0x01, 0x6a, 0x21, 0x02, 0x20, 0x02, 0x20, 0x00, 0x41, 0xff, 0x07, 0x71,
    0x20, 0x01, 0x6c, 0x49, 0x0d, 0x00, 0x0b, 0x20, 0x03, 0x0b, 0x10, 0x00,
    0x20, 0x00, 0x20, 0x01, 0x10, 0x00, 0xad, 0x42, 0x81, 0x80, 0x80, 0x80,
    0x10, 0x7e, 0x0b, 0x17, 0x00, 0x20, 0x00, 0x41, 0xc0, 0x84, 0x3d, 0x46,
    0x04, 0x40, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x00, 0x20, 0x01,
    0x10, 0x00, 0x0b
};

// `steps` steps of $work's generator from `acc`, composed by squaring:
// the compiled tier's loops run up to 65,472 steps an instance.
uint32_t lcg_steps(uint32_t acc, uint32_t steps) {
  uint32_t mul = 1664525u, add = 1013904223u;  // one step: acc * mul + add
  while (steps) {
    if (steps & 1) acc = acc * mul + add;
    add = add * mul + add;  // the step applied twice
    mul = mul * mul;
    steps >>= 1;
  }
  return acc;
}

// $work's answer, computed here; false where it divides by zero.
bool work(uint32_t i, uint32_t scale, uint32_t* out) {
  const uint32_t d = i % 1009 - 7;
  if (d == 0) return false;
  *out = lcg_steps(i / d, std::max(1u, (i & 1023) * scale));  // the loop runs at least once
  return true;
}

class StreamResults : public GpuTierTest {
 protected:
  // A loop long enough on either tier for the first stretches to end well
  // before the last.
  uint32_t scale() const { return GetParam() ? 64 : 1; }
  BatchRequest request(const std::string& name, uint32_t n) {
    static auto m = compile_or_fail(kModule);
    BatchRequest r;
    r.module = m;
    r.func_index = export_func(m->module, name);
    r.instances = n;
    // The instance's index, made on the device: arguments uploaded per
    // instance would cut the wave into slices instead.
    r.args = {0, scale()};
    r.arg_index_kind = {1, 0};
    return r;
  }
  // Every instance of `name` over 0 .. n - 1 as $work says, traps included.
  void expect_all(const std::string& name, uint32_t n, bool wide) {
    auto out = run(request(name, n));
    ASSERT_TRUE(out.ok()) << out.error().message;
    uint32_t trapped = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      if (!work(i, scale(), &v)) {
        ++trapped;
        ASSERT_EQ(out->traps[i], uint8_t(TrapCode::IntegerDivideByZero)) << i;
        continue;
      }
      ASSERT_EQ(out->traps[i], 0) << i;
      ASSERT_EQ(out->results[i], wide ? uint64_t(v) * 0x100000001ull : uint64_t(v)) << i;
    }
    EXPECT_GT(trapped, 1000u);
    // The first stretches end long before the last: some results came down
    // while the kernel ran (and the rest after it, checked above).
    EXPECT_GT(out->streamed_rows, 0u) << name;
    EXPECT_LE(out->streamed_rows, n);
  }
};

TEST_P(StreamResults, ThirtyTwoBitResultsAndTraps) { expect_all("work", 2u << 20, false); }

TEST_P(StreamResults, SixtyFourBitResults) { expect_all("wide", 1u << 20, true); }

// Instance 1,000,000 never returns: its stretch ends only when the
// deadline stops it, the ones before come down meanwhile, and Ctrl-C
// stops it the same way. The progress line goes on meanwhile.
TEST_P(StreamResults, AStretchThatTheDeadlineOrACancelEnds) {
  const uint32_t n = 1u << 20, spinner = 1000000;
  for (const bool cancelled : {false, true}) {
    BatchRequest r = request("spin", n);
    std::atomic<bool> cancel{false};
    r.cancel = &cancel;
    uint32_t reports = 0;
    r.progress = [&](uint64_t, uint64_t, double) { ++reports; };
    r.timeout_s = cancelled ? 60 : 1.5;  // with the cancel, a backstop
    std::thread press([&] {
      if (!cancelled) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      cancel.store(true);
    });
    auto out = run(r);
    press.join();
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      if (i == spinner) {
        EXPECT_EQ(out->traps[i], uint8_t(cancelled ? TrapCode::Interrupted : TrapCode::Timeout));
        EXPECT_EQ(out->finished[i], 0);
      } else if (!work(i, scale(), &v)) {
        ASSERT_EQ(out->traps[i], uint8_t(TrapCode::IntegerDivideByZero)) << i;
      } else {
        ASSERT_EQ(out->traps[i], 0) << i;
        ASSERT_EQ(out->finished[i], 1) << i;
        ASSERT_EQ(out->results[i], v) << i;
      }
    }
    EXPECT_GT(out->streamed_rows, 0u);
    EXPECT_GT(reports, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, StreamResults, ::testing::Values(false, true), tier_test_name);

}  // namespace
}  // namespace ww::gpu
