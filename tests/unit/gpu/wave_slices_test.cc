// A wave whose transfers are large runs in slices (wave_slices.cu): each
// slice's instances set up, run and give their outputs on their own launch
// while the next slice uploads. Every instance's arguments, memory input,
// memory outputs (word and byte paths), result and trap are checked against
// answers computed here, on both tiers and both memory layouts.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/gpu/gpu_backend.h"
#include "gpu_test_support.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (memory 1)
  ;; The record at 64 (four words) plus $i to 128, and the words' sum xor
  ;; $i; instance $bad traps.
  (func (export "mix") (param $i i32) (param $bad i32) (result i32)
    (if (i32.eq (local.get $i) (local.get $bad)) (then unreachable))
    (i32.store (i32.const 128) (i32.add (i32.load (i32.const 64)) (local.get $i)))
    (i32.store (i32.const 132) (i32.add (i32.load (i32.const 68)) (local.get $i)))
    (i32.store (i32.const 136) (i32.add (i32.load (i32.const 72)) (local.get $i)))
    (i32.store (i32.const 140) (i32.add (i32.load (i32.const 76)) (local.get $i)))
    (i32.xor (i32.add (i32.add (i32.load (i32.const 64)) (i32.load (i32.const 68)))
                      (i32.add (i32.load (i32.const 72)) (i32.load (i32.const 76))))
             (local.get $i))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03,
    0x02, 0x01, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x07, 0x01, 0x03, 0x6d, 0x69, 0x78, 0x00, 0x00, 0x0a,
    0x67, 0x01, 0x65, 0x00, 0x20, 0x00, 0x20, 0x01, 0x46, 0x04, 0x40, 0x00, 0x0b, 0x41, 0x80, 0x01, 0x41, 0xc0,
    0x00, 0x28, 0x02, 0x00, 0x20, 0x00, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x84, 0x01, 0x41, 0xc4, 0x00, 0x28, 0x02,
    0x00, 0x20, 0x00, 0x6a, 0x36, 0x02, 0x00, 0x41, 0x88, 0x01, 0x41, 0xc8, 0x00, 0x28, 0x02, 0x00, 0x20, 0x00,
    0x6a, 0x36, 0x02, 0x00, 0x41, 0x8c, 0x01, 0x41, 0xcc, 0x00, 0x28, 0x02, 0x00, 0x20, 0x00, 0x6a, 0x36, 0x02,
    0x00, 0x41, 0xc0, 0x00, 0x28, 0x02, 0x00, 0x41, 0xc4, 0x00, 0x28, 0x02, 0x00, 0x6a, 0x41, 0xc8, 0x00, 0x28,
    0x02, 0x00, 0x41, 0xcc, 0x00, 0x28, 0x02, 0x00, 0x6a, 0x6a, 0x20, 0x00, 0x73, 0x0b,
};

uint32_t word_of(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }

class WaveSlices : public ::testing::TestWithParam<std::tuple<bool, MemoryLayout>> {
 protected:
  void SetUp() override {
    DeviceInfo d = probe_device();
    if (!d.available) GTEST_SKIP() << "no GPU: " << d.reason;
  }
};

// `pin`: the input and the word outputs lie in pinned host memory, which
// the GPU copies straight from and into (request_host_pin), the byte
// outputs do not. `tuning`: the batch's (its defaults slice the wave).
void check_slices(bool compiled, MemoryLayout layout, bool pin, const Tuning& tuning = {}) {
  static auto module = compile_or_fail(kModule);
  // 52 bytes of transfers per instance, 52 MB in all: several slices of
  // 8 MiB or more; the trapping instance sits in a middle one, and the
  // count is no multiple of a block.
  const uint32_t n = 1000003, bad = 617777;
  BatchRequest r;
  r.module = module;
  r.func_index = export_func(module->module, "mix");
  r.instances = n;
  r.layout = layout;
  r.tuning = tuning;
  r.args_per_instance = true;
  std::vector<uint8_t> in(uint64_t(n) * 16), words(uint64_t(n) * 16), bytes(uint64_t(n) * 6);
  for (uint32_t i = 0; i < n; ++i) {
    r.args.push_back(i);
    r.args.push_back(bad);
    for (uint32_t k = 0; k < 16; ++k) in[uint64_t(i) * 16 + k] = uint8_t(i * 13 + k * 29 + (i >> 8));
  }
  r.mem_in.push_back({64, 16, in.data()});
  r.mem_out.push_back({128, 16, words.data()});  // aligned: whole words
  r.mem_out.push_back({130, 6, bytes.data()});   // byte by byte
  // The results into a 4-byte column (RunResult::results32's way), pinned
  // with the rest: packed per slice, then copied straight in.
  // (Rows to the pinning's minimum: 4 MB of them would cross through the staging.)
  std::vector<uint32_t> results(std::max<uint64_t>(n, kHostPinMinBytes / 4), 0xdeadbeef), trap_func(n), trap_pc(n);
  std::vector<uint8_t> traps(n), finished(n);
  r.dest = {nullptr, traps.data(), trap_func.data(), trap_pc.data(), finished.data(), true};
  r.dest.results32 = results.data();
  std::vector<HostPin> pins;
  if (pin) {
    pins.emplace_back(in.data(), in.size());
    pins.emplace_back(words.data(), words.size());
    pins.emplace_back(results.data(), results.size() * 4);
    pin_requested_host_ranges();
    ASSERT_TRUE(host_range_pinned(results.data(), results.size() * 4));
    ASSERT_TRUE(host_range_pinned(in.data(), in.size()));
    ASSERT_TRUE(host_range_pinned(words.data() + 16, words.size() - 16));
    ASSERT_FALSE(host_range_pinned(words.data(), words.size() + 1));
    ASSERT_FALSE(host_range_pinned(bytes.data(), bytes.size()));
  }
  auto out = run_on_tier(r, compiled);
  ASSERT_TRUE(out.ok()) << out.error().message;
  if (tuning.wave_slices == 1) EXPECT_EQ(out->wave_slices, 1u);
  else EXPECT_GT(out->wave_slices, 1u);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* rec = &in[uint64_t(i) * 16];
    if (i == bad) {
      ASSERT_EQ(traps[i], uint8_t(TrapCode::Unreachable));
      for (uint32_t k = 0; k < 16; ++k) ASSERT_EQ(words[uint64_t(i) * 16 + k], 0) << "trapped instance's record";
      continue;
    }
    ASSERT_EQ(traps[i], 0) << "instance " << i << ": " << trap_message(TrapCode(traps[i]));
    ASSERT_EQ(finished[i], 1) << "instance " << i;
    uint32_t sum = 0;
    uint8_t want[16];
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t w = word_of(rec + 4 * k);
      sum += w;
      const uint32_t moved = w + i;
      for (uint32_t b = 0; b < 4; ++b) want[4 * k + b] = uint8_t(moved >> (8 * b));
    }
    ASSERT_EQ(results[i], sum ^ i) << "instance " << i;
    for (uint32_t k = 0; k < 16; ++k)
      ASSERT_EQ(words[uint64_t(i) * 16 + k], want[k]) << "instance " << i << " byte " << k;
    for (uint32_t k = 0; k < 6; ++k)
      ASSERT_EQ(bytes[uint64_t(i) * 6 + k], want[2 + k]) << "instance " << i << " byte " << k;
  }
}

TEST_P(WaveSlices, EveryInstanceOfEverySliceGetsItsOwnInputsAndOutputs) {
  const auto [compiled, layout] = GetParam();
  check_slices(compiled, layout, false);
}

TEST_P(WaveSlices, PinnedHostBuffersCrossWithoutTheStaging) {
  const auto [compiled, layout] = GetParam();
  check_slices(compiled, layout, true);
  // Released: the buffers went with check_slices, and nothing of them stays.
  std::vector<uint8_t> other(8 << 20);
  request_host_pin(other.data(), other.size());
  pin_requested_host_ranges();
  EXPECT_TRUE(host_range_pinned(other.data(), other.size()));
  release_host_pin(other.data());
  EXPECT_FALSE(host_range_pinned(other.data(), other.size()));
}

// Every tuning value gives the same rows: the wave in one launch, a ring
// of two small staging pieces (many pieces per column), few host workers.
TEST_P(WaveSlices, TheTuningsOtherValuesGiveTheSameRows) {
  const auto [compiled, layout] = GetParam();
  Tuning t;
  t.wave_slices = 1;
  t.staging_piece_mib = 1;
  t.staging_pieces = 2;
  check_slices(compiled, layout, false, t);
  t.wave_slices = 3;
  check_slices(compiled, layout, true, t);
}

// The memory kernels' traps are counted on the device like the code's:
// a wave whose count is zero skips the trap columns, so one that missed
// them would report these instances as having run cleanly.
TEST_P(WaveSlices, RecordsThatDoNotFitTrapTheirInstances) {
  const auto [compiled, layout] = GetParam();
  static auto module = compile_or_fail(kModule);
  const uint32_t n = 3000;
  BatchRequest r;
  r.module = module;
  r.func_index = export_func(module->module, "mix");
  r.instances = n;
  r.layout = layout;
  r.args = {7, n};  // no instance is `bad`
  std::vector<uint8_t> in(uint64_t(n) * 16, 1), rec(uint64_t(n) * 16, 0xee);
  for (int past_the_end : {0, 1}) {
    BatchRequest q = r;
    // A record in past the end traps before the call; one out past the
    // end after it.
    q.mem_in.push_back({past_the_end ? 65530u : 64u, 16, in.data()});
    q.mem_out.push_back({past_the_end ? 128u : 65530u, 16, rec.data()});
    auto out = run_on_tier(q, compiled);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(out->trapped_counted, n);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(out->traps[i], uint8_t(TrapCode::MemoryOutOfBounds)) << "instance " << i << ", " << past_the_end;
      ASSERT_EQ(out->trap_pc[i], kNoTrapPc) << "instance " << i;
      ASSERT_EQ(rec[uint64_t(i) * 16], 0) << "a trapped instance's record is zeros";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TiersAndLayouts, WaveSlices,
                         ::testing::Combine(::testing::Values(false, true),
                                            ::testing::Values(MemoryLayout::Sparse, MemoryLayout::Interleaved)),
                         [](const ::testing::TestParamInfo<std::tuple<bool, MemoryLayout>>& i) {
                           return std::string(std::get<0>(i.param) ? "Compiled" : "Interpreter") +
                                  (std::get<1>(i.param) == MemoryLayout::Sparse ? "Sparse" : "Interleaved");
                         });

}  // namespace
}  // namespace ww::gpu
