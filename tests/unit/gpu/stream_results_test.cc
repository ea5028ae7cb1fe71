// Results that come down while their wave's kernel still runs
// (wave_stream.cu): every instance's result and trap as when they come
// down after it, with 32-bit results (packed on the device) and 64-bit
// ones, with traps inside the stretches; 32-bit results into a column of
// 4-byte values, pinned (written by the kernel or copied straight in) or
// not; pixels drawn on a pinned canvas or through the device's copy. Runs
// where a GPU is present and skips elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/resources/gpu_resources.h"
#include "exec/gpu/resources/pinned_staging.cuh"
#include "gpu_test_support.h"
#include "intrinsics/gpu_batch.h"
#include "semantics/intrinsics.h"

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
    (call $work (local.get $i) (local.get $scale)))
  (func $pair (export "pair") (param $i i32) (param $scale i32) (result i32 f32)
    (call $work (local.get $i) (local.get $scale))
    (f32.convert_i32_u (local.get $i))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x14, 0x03, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x02,
    0x7f, 0x7f, 0x01, 0x7e, 0x60, 0x02, 0x7f, 0x7f, 0x02, 0x7f, 0x7d, 0x03, 0x05, 0x04, 0x00, 0x01, 0x00, 0x02, 0x07,
    0x1d, 0x04, 0x04, 0x77, 0x6f, 0x72, 0x6b, 0x00, 0x00, 0x04, 0x77, 0x69, 0x64, 0x65, 0x00, 0x01, 0x04, 0x73, 0x70,
    0x69, 0x6e, 0x00, 0x02, 0x04, 0x70, 0x61, 0x69, 0x72, 0x00, 0x03, 0x0a, 0x74, 0x04, 0x3d, 0x01, 0x02, 0x7f, 0x20,
    0x00, 0x20, 0x00, 0x41, 0xf1, 0x07, 0x70, 0x41, 0x07, 0x6b, 0x6e, 0x21, 0x03, 0x03, 0x40, 0x20, 0x03, 0x41, 0x8d,
    0xcc, 0xe5, 0x00, 0x6c, 0x41, 0xdf, 0xe6, 0xbb, 0xe3, 0x03, 0x6a, 0x21, 0x03, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x21,
    0x02, 0x20, 0x02, 0x20, 0x00, 0x41, 0xff, 0x07, 0x71, 0x20, 0x01, 0x6c, 0x49, 0x0d, 0x00, 0x0b, 0x20, 0x03, 0x0b,
    0x10, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x00, 0xad, 0x42, 0x81, 0x80, 0x80, 0x80, 0x10, 0x7e, 0x0b, 0x17, 0x00,
    0x20, 0x00, 0x41, 0xc0, 0x84, 0x3d, 0x46, 0x04, 0x40, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x00, 0x20, 0x01,
    0x10, 0x00, 0x0b, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x00, 0x20, 0x00, 0xb3, 0x0b};

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
  void expect_all(const std::string& name, uint32_t n, bool wide, const Tuning& tuning = {}) {
    BatchRequest r = request(name, n);
    r.tuning = tuning;
    auto out = run(r);
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
    // while the kernel ran (and the rest after it, checked above), unless
    // the tuning has the results come down after the kernel.
    if (tuning.stream_stretches == 1) EXPECT_EQ(out->streamed_rows, 0u) << name;
    else EXPECT_GT(out->streamed_rows, 0u) << name;
    EXPECT_LE(out->streamed_rows, n);
  }
};

TEST_P(StreamResults, ThirtyTwoBitResultsAndTraps) { expect_all("work", 2u << 20, false); }

TEST_P(StreamResults, SixtyFourBitResults) { expect_all("wide", 1u << 20, true); }

// The tuning's other values give the same rows: results after the kernel
// (one stretch), or in two stretches through a ring of two 1 MiB pieces.
TEST_P(StreamResults, TheTuningsOtherValuesGiveTheSameRows) {
  Tuning t;
  t.stream_stretches = 1;
  expect_all("work", 1u << 20, false, t);
  t.stream_stretches = 2;
  t.staging_piece_mib = 1;
  t.staging_pieces = 2;
  expect_all("wide", 1u << 20, true, t);
}

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

// The caller's columns for 32-bit results (`nr` a row), the results
// poisoned, and pinned when asked (the kernel may then write them itself).
struct Columns32 {
  Columns32(uint32_t n, uint32_t nr, bool pinned)
      : n(n), nr(nr), results(uint64_t(n) * nr, 0xdeadbeef), trap_func(n), trap_pc(n), traps(n), finished(n) {
    if (!pinned) return;
    pins.emplace_back(results.data(), results.size() * 4);
    pin_requested_host_ranges();
  }
  BatchRequest::Destination dest() {
    BatchRequest::Destination d{nullptr, traps.data(), trap_func.data(), trap_pc.data(), finished.data(), true};
    d.results32 = results.data();
    return d;
  }
  // Every row as $work says (and "pair"'s f32, the index, second), traps
  // included; `*trapped` counts the rows that trapped.
  void expect_work(uint32_t scale, uint32_t* trapped) const {
    *trapped = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      if (!work(i, scale, &v)) {
        ++*trapped;
        ASSERT_EQ(traps[i], uint8_t(TrapCode::IntegerDivideByZero)) << i;
        continue;
      }
      ASSERT_EQ(traps[i], 0) << i;
      ASSERT_EQ(finished[i], 1) << i;
      ASSERT_EQ(results[uint64_t(i) * nr], v) << i;
      if (nr == 2) {
        const float f = float(i);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        ASSERT_EQ(results[uint64_t(i) * nr + 1], bits) << i;
      }
    }
  }
  uint32_t n, nr;
  std::vector<uint32_t> results, trap_func, trap_pc;
  std::vector<uint8_t> traps, finished;
  std::vector<HostPin> pins;
};

// 32-bit results into the caller's 4-byte column (RunResult::results32's
// way): one result into a pinned column the kernel writes itself, else
// streamed: two results (an i32 and an f32, transposed into rows) copied
// straight into a pinned column, and either through the staging when it
// is not pinned.
TEST_P(StreamResults, ThirtyTwoBitResultsIntoAFourByteColumn) {
  const uint32_t n = 2u << 20;
  for (const bool pinned : {false, true})
    for (const std::string name : {"work", "pair"}) {
      SCOPED_TRACE(name + (pinned ? ", pinned" : ", not pinned"));
      const uint32_t nr = name == "pair" ? 2 : 1;
      Columns32 c(n, nr, pinned);
      if (pinned) {
        ASSERT_TRUE(host_range_pinned(c.results.data(), c.results.size() * 4));
      }
      BatchRequest r = request(name, n);
      r.dest = c.dest();
      auto out = run(r);
      ASSERT_TRUE(out.ok()) << out.error().message;
      EXPECT_TRUE(out->results.empty());
      uint32_t trapped = 0;
      ASSERT_NO_FATAL_FAILURE(c.expect_work(scale(), &trapped));
      const bool mapped = pinned && nr == 1;
      EXPECT_EQ(out->mapped_rows, mapped ? n : 0u);
      EXPECT_EQ(out->streamed_rows > 0, !mapped);
    }
}

// A finished batch leaves its staging and wave block to the background
// releaser (run_batch, retire_in_background): a wait for it
// (the next batch's plan waits so) brings them back, and a batch run
// straight after one finds them or its own, with the same rows.
TEST_P(StreamResults, WhatABatchLeavesForTheReleaserComesBack) {
  const uint32_t n = 100000;
  std::vector<uint64_t> first;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto out = run(request("work", n));
    ASSERT_TRUE(out.ok()) << out.error().message;
    if (round == 0) {
      first = out->results;
      for (uint32_t i = 0, v = 0; i < n; ++i)
        if (work(i, scale(), &v)) {
          ASSERT_EQ(first[i], v) << i;
        }
    }
    EXPECT_EQ(out->results, first);
    if (round == 1) continue;  // the next batch straight after this one
    wait_for_background_frees();
    GpuResources& gpu = Resources::process().current();
    std::unique_ptr<PinnedStaging> kept = gpu.take_kept_staging();
    EXPECT_NE(kept, nullptr);
    EXPECT_GT(idle_block_bytes(), 0u);
    if (kept) gpu.give_staging(std::move(kept));
  }
}

/* wat2wasm of:
(module
  (import "gpu" "set_pixel" (func $px (param i32 i32 f32 f32 f32 f32)))
  (func (export "draw") (param $i i32) (result i32)
    (call $px (i32.rem_u (local.get $i) (i32.const 2048)) (i32.div_u (local.get $i) (i32.const 2048))
      (f32.const 1)
      (f32.div (f32.convert_i32_u (i32.and (local.get $i) (i32.const 255))) (f32.const 255))
      (f32.const 0) (f32.const 1))
    (i32.mul (local.get $i) (i32.const 3))))
*/
const std::vector<uint8_t> kCanvasModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x02, 0x60, 0x06, 0x7f, 0x7f, 0x7d, 0x7d, 0x7d, 0x7d,
    0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x02, 0x11, 0x01, 0x03, 0x67, 0x70, 0x75, 0x09, 0x73, 0x65, 0x74, 0x5f, 0x70,
    0x69, 0x78, 0x65, 0x6c, 0x00, 0x00, 0x03, 0x02, 0x01, 0x01, 0x07, 0x08, 0x01, 0x04, 0x64, 0x72, 0x61, 0x77, 0x00,
    0x01, 0x0a, 0x33, 0x01, 0x31, 0x00, 0x20, 0x00, 0x41, 0x80, 0x10, 0x70, 0x20, 0x00, 0x41, 0x80, 0x10, 0x6e, 0x43,
    0x00, 0x00, 0x80, 0x3f, 0x20, 0x00, 0x41, 0xff, 0x01, 0x71, 0xb3, 0x43, 0x00, 0x00, 0x7f, 0x43, 0x95, 0x43, 0x00,
    0x00, 0x00, 0x00, 0x43, 0x00, 0x00, 0x80, 0x3f, 0x10, 0x00, 0x20, 0x00, 0x41, 0x03, 0x6c, 0x0b};

// kCanvasModule's draw over instances 0 .. n - 1 (their index, made on the
// device), onto `batch`'s canvas, and the pixel instance i draws.
BatchRequest canvas_request(const std::shared_ptr<const CompiledModule>& m, GpuBatch& batch, uint32_t n) {
  BatchRequest r;
  r.module = m;
  r.func_index = export_func(m->module, "draw");
  r.instances = n;
  r.args = {0};
  r.arg_index_kind = {1};
  r.batch = &batch;
  return r;
}
uint32_t canvas_pixel(uint32_t i) { return pack_rgba8(1.0f, float(i & 255) / 255.0f, 0.0f, 1.0f); }

// A pinned canvas the kernels draw on straight (set_pixel stores into host
// memory), an unpinned one through the device's copy: the same pixels.
TEST_P(StreamResults, PixelsOnAPinnedCanvasOrThroughTheDevice) {
  static auto m = compile_or_fail(kCanvasModule);
  const uint32_t width = 2048, height = 1024, n = width * height;
  for (const bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "pinned" : "not pinned");
    GpuBatch batch;
    batch.instance_count = n;
    batch.set_image_size(width, height);
    std::vector<HostPin> pins;
    if (pinned) {
      pins.emplace_back(batch.image->pixels.data(), batch.image->pixels.size() * 4);
      pin_requested_host_ranges();
      ASSERT_TRUE(host_range_pinned(batch.image->pixels.data(), batch.image->pixels.size() * 4));
    }
    auto out = run(canvas_request(m, batch, n));
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(out->canvas_mapped, pinned);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(out->results[i], 3 * i) << i;
      ASSERT_EQ(batch.image->pixels[i], canvas_pixel(i)) << i;
    }
    EXPECT_FALSE(batch.image->blank);
    EXPECT_EQ(batch.ignored_pixels.load(), 0u);
  }
}

// Draws past the canvas's last row are counted, over every wave of the
// batch (the count comes down with each wave's counts, and the last
// wave's is the batch's); a second batch starts again from zero.
TEST_P(StreamResults, PixelsOutsideTheImageAreCountedOverEveryWave) {
  static auto m = compile_or_fail(kCanvasModule);
  const uint32_t width = 2048, height = 256, n = width * 1024;
  for (int round = 0; round < 2; ++round) {
    GpuBatch batch;
    batch.instance_count = n;
    batch.set_image_size(width, height);
    BatchRequest r = canvas_request(m, batch, n);
    r.max_wave = n / 4;
    auto out = run(r);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_GE(out->plan.waves, 2u);
    EXPECT_EQ(batch.ignored_pixels.load(), uint64_t(n - width * height)) << round;
    for (uint32_t i = 0; i < width * height; ++i) ASSERT_EQ(batch.image->pixels[i], canvas_pixel(i)) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, StreamResults, ::testing::Values(false, true), tier_test_name);

}  // namespace
}  // namespace ww::gpu
