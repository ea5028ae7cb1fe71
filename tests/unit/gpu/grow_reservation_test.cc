// memory.grow on the GPU past the pages an instance reserved: the instance
// runs again with more, on either layout and tier, so memory.grow fails
// only past the memory's maximum, as on the CPU. The plan's rule for when
// that may happen runs everywhere; the batches where a GPU is present.
// Expected answers: the module's arithmetic, written out below (node
// agrees: grow(0, 40, 300) = 341042 without a maximum, 41000 with 50).
#include <gtest/gtest.h>

#include <atomic>
#include <tuple>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_plan.h"
#include "gpu_test_support.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (memory 1)
  ;; Grows by $a pages, then by $b, stores $i in the last word of the
  ;; memory and reads it back: memory.size * 1000 + both grows' results
  ;; (old sizes, -1 where one failed) + that word.
  (func (export "grow") (param $i i32) (param $a i32) (param $b i32) (result i32)
    (local $r i32) (local $top i32)
    (local.set $r (i32.add (memory.grow (local.get $a)) (memory.grow (local.get $b))))
    (local.set $top (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 4)))
    (i32.store (local.get $top) (local.get $i))
    (i32.add (i32.add (i32.mul (memory.size) (i32.const 1000)) (local.get $r))
             (i32.load (local.get $top))))
)
*/
const std::vector<uint8_t> kGrow = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01, 0x7f,
    0x03, 0x02, 0x01, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x08, 0x01, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00,
    0x00, 0x0a, 0x33, 0x01, 0x31, 0x01, 0x02, 0x7f, 0x20, 0x01, 0x40, 0x00, 0x20, 0x02, 0x40, 0x00, 0x6a, 0x21,
    0x03, 0x3f, 0x00, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x41, 0x04, 0x6b, 0x21, 0x04, 0x20, 0x04, 0x20, 0x00, 0x36,
    0x02, 0x00, 0x3f, 0x00, 0x41, 0xe8, 0x07, 0x6c, 0x20, 0x03, 0x6a, 0x20, 0x04, 0x28, 0x02, 0x00, 0x6a, 0x0b,
};
// The same with (memory 1 50).
const std::vector<uint8_t> kGrowMax50 = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, 0x03,
    0x02, 0x01, 0x00, 0x05, 0x04, 0x01, 0x01, 0x01, 0x32, 0x07, 0x08, 0x01, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x00,
    0x0a, 0x33, 0x01, 0x31, 0x01, 0x02, 0x7f, 0x20, 0x01, 0x40, 0x00, 0x20, 0x02, 0x40, 0x00, 0x6a, 0x21, 0x03, 0x3f,
    0x00, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x41, 0x04, 0x6b, 0x21, 0x04, 0x20, 0x04, 0x20, 0x00, 0x36, 0x02, 0x00, 0x3f,
    0x00, 0x41, 0xe8, 0x07, 0x6c, 0x20, 0x03, 0x6a, 0x20, 0x04, 0x28, 0x02, 0x00, 0x6a, 0x0b,
};

/* The same as kGrow, with (memory 1) and, before it returns,
    (i32.store (i32.const 16) (i32.add (i32.mul (local.get $i) (i32.const 1000)) (memory.size)))
   a record of its final size for --mem-out. */
const std::vector<uint8_t> kGrowRecord = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01, 0x7f,
    0x03, 0x02, 0x01, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x08, 0x01, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00,
    0x00, 0x0a, 0x41, 0x01, 0x3f, 0x01, 0x02, 0x7f, 0x20, 0x01, 0x40, 0x00, 0x20, 0x02, 0x40, 0x00, 0x6a, 0x21,
    0x03, 0x3f, 0x00, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x41, 0x04, 0x6b, 0x21, 0x04, 0x20, 0x04, 0x20, 0x00, 0x36,
    0x02, 0x00, 0x41, 0x10, 0x20, 0x00, 0x41, 0xe8, 0x07, 0x6c, 0x3f, 0x00, 0x6a, 0x36, 0x02, 0x00, 0x3f, 0x00,
    0x41, 0xe8, 0x07, 0x6c, 0x20, 0x03, 0x6a, 0x20, 0x04, 0x28, 0x02, 0x00, 0x6a, 0x0b,
};

// The reservation of a module that grows, by default: its 1 page + 16.
constexpr uint32_t kReserved = 1 + kDefaultGrowPages;

// grow(i, a, b) where memory.grow fails past `max` pages.
uint32_t expected_grow(uint32_t i, uint32_t a, uint32_t b, uint32_t max) {
  uint32_t size = 1;
  auto grow = [&](uint32_t n) {
    if (uint64_t(size) + n > max) return ~0u;
    const uint32_t old = size;
    size += n;
    return old;
  };
  const uint32_t first = grow(a);
  const uint32_t second = grow(b);
  return size * 1000 + first + second + i;
}

// The memory's size after grow(i, a, b), memory.grow failing past `max`.
uint32_t expected_size(uint32_t a, uint32_t b, uint32_t max) {
  uint32_t size = 1;
  for (uint32_t n : {a, b})
    if (uint64_t(size) + n <= max) size += n;
  return size;
}

// Instance i grows by 40 pages when i % 3 == 0, else by 2; then by 300
// when i % 5 == 0.
uint32_t first_grow(uint32_t i) { return i % 3 == 0 ? 40 : 2; }
uint32_t second_grow(uint32_t i) { return i % 5 == 0 ? 300 : 0; }

BatchRequest grow_request(const std::vector<uint8_t>& module, uint32_t n, MemoryLayout layout) {
  BatchRequest r;
  r.module = compile_or_fail(module);
  r.func_index = export_func(r.module->module, "grow");
  r.instances = n;
  r.layout = layout;
  r.args_per_instance = true;
  for (uint32_t i = 0; i < n; ++i) {
    r.args.push_back(i);
    r.args.push_back(first_grow(i));
    r.args.push_back(second_grow(i));
  }
  return r;
}

TEST(GrowReservation, InstancesRunAgainOnlyWhereRunningTwiceCannotShow) {
  BatchRequest r = grow_request(kGrow, 1, MemoryLayout::Interleaved);
  EXPECT_TRUE(grows_past_reservation_rerun(r));
  BatchRequest off = r;
  off.grow_reruns = false;
  EXPECT_FALSE(grows_past_reservation_rerun(off));
  BatchRequest resident = r;
  resident.resident = true;
  EXPECT_FALSE(grows_past_reservation_rerun(resident));
  BatchRequest chained = r;
  chained.then.push_back({});
  EXPECT_FALSE(grows_past_reservation_rerun(chained));
  BatchRequest written_back = r;
  written_back.write_back = true;
  EXPECT_FALSE(grows_past_reservation_rerun(written_back));
}

// (tier: compiled, layout of the first run)
class GrowRun : public ::testing::TestWithParam<std::tuple<bool, MemoryLayout>> {
 protected:
  void SetUp() override {
    DeviceInfo d = probe_device();
    if (!d.available) GTEST_SKIP() << "no GPU: " << d.reason;
  }
  Result<RunResult> run(BatchRequest r) { return run_on_tier(std::move(r), std::get<0>(GetParam())); }
  MemoryLayout layout() const { return std::get<1>(GetParam()); }
};

TEST_P(GrowRun, GrowingPastTheReservationRunsAgainWithMore) {
  const uint32_t n = 3001;
  auto out = run(grow_request(kGrow, n, layout()));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->plan.memory_pages, kReserved);
  uint64_t again = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out->traps[i], 0) << "instance " << i << ": " << trap_message(TrapCode(out->traps[i]));
    ASSERT_EQ(uint32_t(out->results[i]), expected_grow(i, first_grow(i), second_grow(i), 65536)) << "instance " << i;
    // 40 pages pass the reservation; 40 then 300 pass it and then the 41
    // pages reserved for the second run.
    again += (first_grow(i) == 40 || second_grow(i) == 300) + (first_grow(i) == 40 && second_grow(i) == 300);
  }
  EXPECT_EQ(out->grow_reruns, again);
}

TEST_P(GrowRun, GrowFailsOnlyPastTheMemorysMaximum) {
  const uint32_t n = 3001;
  auto out = run(grow_request(kGrowMax50, n, layout()));
  ASSERT_TRUE(out.ok()) << out.error().message;
  uint64_t again = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out->traps[i], 0) << "instance " << i << ": " << trap_message(TrapCode(out->traps[i]));
    ASSERT_EQ(uint32_t(out->results[i]), expected_grow(i, first_grow(i), second_grow(i), 50)) << "instance " << i;
    // 300 more pages pass the maximum itself: memory.grow fails in place.
    again += first_grow(i) == 40;
  }
  EXPECT_EQ(out->grow_reruns, again);
}

TEST_P(GrowRun, WithoutRerunsGrowFailsPastTheReservation) {
  const uint32_t n = 3001;
  BatchRequest r = grow_request(kGrow, n, layout());
  r.grow_reruns = false;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out->traps[i], 0) << "instance " << i;
    ASSERT_EQ(uint32_t(out->results[i]), expected_grow(i, first_grow(i), second_grow(i), kReserved))
        << "instance " << i;
  }
  EXPECT_EQ(out->grow_reruns, 0u);
}

// Memory outputs come from the run in which an instance finished: the
// rerun's for those that ran again (a joined stretch copies its rows
// back), the first run's for the instances between them.
TEST_P(GrowRun, MemoryOutputsComeFromTheRunThatFinished) {
  const uint32_t n = 3001;
  BatchRequest r = grow_request(kGrowRecord, n, layout());
  std::vector<uint32_t> records(n, 0);
  r.mem_out.push_back({16, 4, reinterpret_cast<uint8_t*>(records.data())});
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_GT(out->grow_reruns, 0u);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out->traps[i], 0) << "instance " << i << ": " << trap_message(TrapCode(out->traps[i]));
    ASSERT_EQ(uint32_t(out->results[i]), expected_grow(i, first_grow(i), second_grow(i), 65536)) << "instance " << i;
    ASSERT_EQ(records[i], i * 1000 + expected_size(first_grow(i), second_grow(i), 65536)) << "instance " << i;
  }
}

// A batch cancelled before its instances could run again: those report
// themselves interrupted and unfinished, not finished with the trap that
// sent them to run again; the others keep their results.
TEST_P(GrowRun, ACancelBeforeTheRerunLeavesItsInstancesUnfinished) {
  const uint32_t n = 3001;
  BatchRequest r = grow_request(kGrow, n, layout());
  std::atomic<bool> cancel{false};
  r.cancel = &cancel;
  r.progress = [&cancel](uint64_t, uint64_t, double) { cancel = true; };  // after the first wave
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < n; ++i) {
    if (first_grow(i) == 40 || second_grow(i) == 300) {
      ASSERT_EQ(out->traps[i], uint8_t(TrapCode::Interrupted)) << "instance " << i;
      ASSERT_EQ(out->finished[i], 0) << "instance " << i;
    } else {
      ASSERT_EQ(out->traps[i], 0) << "instance " << i;
      ASSERT_EQ(out->finished[i], 1) << "instance " << i;
      ASSERT_EQ(uint32_t(out->results[i]), expected_grow(i, first_grow(i), second_grow(i), 65536)) << "instance " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TiersAndLayouts, GrowRun,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(MemoryLayout::Interleaved, MemoryLayout::Sparse)),
                         [](const ::testing::TestParamInfo<std::tuple<bool, MemoryLayout>>& i) {
                           return std::string(std::get<0>(i.param) ? "Compiled" : "Interpreter") +
                                  (std::get<1>(i.param) == MemoryLayout::Sparse ? "Sparse" : "Interleaved");
                         });

}  // namespace
}  // namespace ww::gpu
