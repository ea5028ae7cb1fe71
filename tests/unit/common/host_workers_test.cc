// The host worker threads: every job runs exactly once, calls from inside a
// job and from several threads at once finish, and the split copies move
// every byte of buffers whose sizes do not divide evenly.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "common/host_column.h"
#include "common/host_workers.h"

namespace ww {
namespace {

TEST(HostWorkers, EveryJobRunsOnce) {
  for (size_t jobs : {size_t{0}, size_t{1}, size_t{3}, size_t{64}, size_t{1000}}) {
    std::vector<std::atomic<int>> runs(jobs);
    run_on_host_workers(jobs, [&](size_t j) { runs[j].fetch_add(1); });
    for (size_t j = 0; j < jobs; ++j) EXPECT_EQ(runs[j].load(), 1) << "job " << j << " of " << jobs;
  }
}

TEST(HostWorkers, ACallInsideAJobRunsItsJobsThere) {
  std::atomic<int> inner{0};
  run_on_host_workers(8, [&](size_t) { run_on_host_workers(5, [&](size_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 40);
}

TEST(HostWorkers, CallsFromSeveralThreadsTakeTurns) {
  std::atomic<uint64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) run_on_host_workers(16, [&](size_t j) { sum.fetch_add(j + 1); });
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(sum.load(), uint64_t(4 * 50 * (16 * 17 / 2)));
}

// Runs back to back, a few jobs each, most done before a sleeping worker
// wakes: a worker that wakes late must take no job of a run that has
// ended, nor one of the next run twice.
TEST(HostWorkers, BackToBackRunsRunEachJobOnceInItsOwnRun) {
  std::atomic<uint32_t> current{0};
  std::atomic<uint32_t> strays{0};
  for (uint32_t r = 1; r <= 20000; ++r) {
    const size_t jobs = 2 + r % 15;
    std::vector<std::atomic<int>> runs(jobs);
    current.store(r);
    run_on_host_workers(jobs, [&, r](size_t j) {
      if (current.load() != r) strays.fetch_add(1);
      runs[j].fetch_add(1);
    });
    for (size_t j = 0; j < jobs; ++j) ASSERT_EQ(runs[j].load(), 1) << "run " << r << ", job " << j;
    if (r % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // let the workers fall asleep
  }
  EXPECT_EQ(strays.load(), 0u);
}

TEST(HostWorkers, ParallelCopyAndZeroCoverOddSizes) {
  // Sizes below, at and above the split threshold, none a multiple of 4 KiB.
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4097}, size_t{(3 << 20) + 13}, size_t{(17 << 20) + 4095}}) {
    std::vector<uint8_t> src(bytes), dst(bytes, 0xAA);
    std::iota(src.begin(), src.end(), uint8_t{7});
    parallel_copy(dst.data(), src.data(), bytes);
    EXPECT_EQ(dst, src) << bytes << " bytes";
    parallel_zero(dst.data(), bytes);
    EXPECT_EQ(dst, std::vector<uint8_t>(bytes, 0)) << bytes << " bytes";
  }
}

// Large copies store past the cache from the first 16-byte boundary of
// the destination: every offset of source and destination, odd lengths.
TEST(HostWorkers, StreamingCopiesHoldEveryByteAtEveryAlignment) {
  const size_t bytes = (2 << 20) + 77;
  std::vector<uint8_t> src(bytes + 32);
  std::iota(src.begin(), src.end(), uint8_t{3});
  for (size_t so : {0, 1, 8, 15})
    for (size_t d_off : {0, 3, 16, 31}) {
      std::vector<uint8_t> dst(bytes + 64, 0xAA);
      parallel_copy(dst.data() + d_off, src.data() + so, bytes);
      ASSERT_TRUE(std::equal(src.begin() + so, src.begin() + so + bytes, dst.begin() + d_off)) << so << " " << d_off;
      EXPECT_EQ(dst[d_off + bytes], 0xAA);  // nothing past the end
      if (d_off) {
        EXPECT_EQ(dst[d_off - 1], 0xAA);
      }
    }
}

TEST(HostWorkers, WidenedValuesAreZeroExtendedAtEveryAlignment) {
  for (size_t n : {size_t{0}, size_t{3}, size_t{1025}, size_t{(1 << 20) + 7}})
    for (size_t d_off : {0, 1}) {
      std::vector<uint32_t> src(n);
      for (size_t i = 0; i < n; ++i) src[i] = uint32_t(i * 2654435761u);
      std::vector<uint64_t> dst(n + 2, ~uint64_t{0});
      parallel_widen_u32(dst.data() + d_off, src.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(dst[d_off + i], uint64_t(src[i])) << n << " " << i;
      EXPECT_EQ(dst[d_off + n], ~uint64_t{0});
    }
}

TEST(HostWorkers, ParallelFindByteFindsTheFirst) {
  std::vector<uint8_t> v(size_t(9) << 20, 1);  // split over several workers
  EXPECT_EQ(parallel_find_byte(v.data(), 0, v.size()), v.size());
  for (size_t at : {v.size() - 1, size_t(5) << 20, size_t(3), size_t(0)}) {
    v[at] = 0;
    EXPECT_EQ(parallel_find_byte(v.data(), 0, v.size()), at);  // the earliest so far
  }
  v[v.size() - 1] = 7;
  EXPECT_EQ(parallel_find_byte(v.data(), 7, v.size()), v.size() - 1);
  EXPECT_EQ(parallel_find_byte(v.data(), 0, 0), 0u);
  // A few MB: one core looks alone.
  std::vector<uint8_t> small(size_t(1) << 20, 1);
  EXPECT_EQ(parallel_find_byte(small.data(), 0, small.size()), small.size());
  for (size_t at : {small.size() - 1, size_t(4096), size_t(0)}) {
    small[at] = 0;
    EXPECT_EQ(parallel_find_byte(small.data(), 0, small.size()), at);
  }
}

TEST(HostColumn, HoldsWhatIsWrittenAtEverySize) {
  // Small columns come from the ordinary allocator, large ones from
  // 2 MiB-aligned blocks.
  for (size_t n : {size_t{1}, size_t{1000}, size_t{3} << 20}) {
    Column<uint32_t> c;
    c.resize(n);
    parallel_zero(c.data(), n * sizeof(uint32_t));
    for (size_t i = 0; i < n; i += 997) c[i] = uint32_t(i);
    uint64_t sum = 0;
    for (uint32_t v : c) sum += v;
    uint64_t want = 0;
    for (size_t i = 0; i < n; i += 997) want += i;
    EXPECT_EQ(sum, want) << n;
    if (n * 4 >= (size_t(4) << 20)) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data()) % (size_t(2) << 20), 0u);
    }
    Column<uint32_t> moved = std::move(c);
    EXPECT_EQ(moved.size(), n);
  }
}

TEST(HostColumn, ResizeZeroedGivesZerosAtEverySize) {
  // A large column is a fresh mapping, only faulted in; a small one, or one
  // that held data before, is written with zeros.
  for (size_t n : {size_t{10}, size_t{1} << 20, (size_t{5} << 20) + 3}) {
    Column<uint64_t> fresh;
    resize_zeroed(fresh, n);
    ASSERT_EQ(fresh.size(), n);
    EXPECT_EQ(std::count(fresh.begin(), fresh.end(), 0u), std::ptrdiff_t(n)) << n;
    fresh.back() = 7;  // the mapping reaches the last element
    EXPECT_EQ(fresh.back(), 7u);
  }
  for (size_t n : {size_t{10}, (size_t{5} << 20) + 3}) {
    Column<uint64_t> used;
    used.resize(n);
    std::fill(used.begin(), used.end(), ~uint64_t{0});
    used.clear();  // keeps its memory, and its old contents
    resize_zeroed(used, n);
    EXPECT_EQ(std::count(used.begin(), used.end(), 0u), std::ptrdiff_t(n)) << n;
  }
}

}  // namespace
}  // namespace ww
