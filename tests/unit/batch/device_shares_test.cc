// How several GPUs share a stretch of a batch: the claims cover every
// instance once, shrink towards the end, and a faster device takes more;
// rows that finish out of order make a ready prefix only when it is whole.
#include "exec/gpu/executor/device_shares.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ww::batch {
namespace {

TEST(StretchClaims, CoverEveryInstanceOnceAndShrink) {
  const uint64_t n = 1'000'003;
  StretchClaims c(n, 2, 8192);
  std::vector<std::pair<uint64_t, uint32_t>> got;
  uint64_t first = 0;
  for (unsigned d = 0;; d ^= 1) {
    const uint32_t k = c.claim(d, 1u << 30, &first);
    if (!k) break;
    got.push_back({first, k});
  }
  uint64_t next = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, next) << i;
    next += got[i].second;
    if (i + 1 < got.size()) {
      EXPECT_EQ(got[i].second % 32, 0u) << i;  // whole warps but the last
      EXPECT_GE(got[i].second, 8192u) << i;
    }
    if (i > 0) {
      EXPECT_LE(got[i].second, got[i - 1].second) << i;
    }
  }
  EXPECT_EQ(next, n);
  EXPECT_EQ(got.front().second, n / 4 - n / 4 % 32);  // a quarter of the batch: half of one device's even share
  EXPECT_EQ(c.taken(0) + c.taken(1), n);
  EXPECT_EQ(c.claim(0, 100, &first), 0u);
}

TEST(StretchClaims, AClaimIsAtMostWhatTheWaveHolds) {
  StretchClaims c(100000, 2, 8192);
  uint64_t first = 0;
  EXPECT_EQ(c.claim(0, 5000, &first), 5000u);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(c.claim(1, 0, &first), 0u);
  EXPECT_EQ(c.claim(1, 7, &first), 7u);
  EXPECT_EQ(first, 5000u);
}

TEST(StretchClaims, AFasterDeviceTakesMore) {
  const uint64_t n = 4'000'000;
  StretchClaims c(n, 2, 8192);
  // Device 0 runs a claim four times as fast as device 1.
  std::atomic<uint64_t> work[2] = {0, 0};
  std::thread t[2];
  for (unsigned d = 0; d < 2; ++d)
    t[d] = std::thread([&, d] {
      uint64_t first = 0;
      while (uint32_t k = c.claim(d, 1u << 30, &first)) {
        std::this_thread::sleep_for(std::chrono::microseconds(k / (d == 0 ? 400 : 100)));
        work[d] += k;
      }
    });
  for (auto& x : t) x.join();
  EXPECT_EQ(work[0] + work[1], n);
  EXPECT_EQ(c.taken(0), work[0].load());
  EXPECT_GT(c.taken(0), 2 * c.taken(1)) << c.taken(0) << " vs " << c.taken(1);
}

TEST(StretchClaims, StopEndsEveryClaim) {
  StretchClaims c(1 << 20, 3);
  uint64_t first = 0;
  EXPECT_GT(c.claim(2, 1 << 20, &first), 0u);
  c.stop();
  EXPECT_EQ(c.claim(0, 1 << 20, &first), 0u);
}

TEST(ReadyFrontier, GrowsOnlyOverWholePrefixes) {
  ReadyFrontier f;
  EXPECT_EQ(f.add(100, 200), 0u);
  EXPECT_EQ(f.add(300, 400), 0u);
  EXPECT_EQ(f.add(0, 50), 50u);
  EXPECT_EQ(f.add(50, 100), 200u);   // joins [100, 200)
  EXPECT_EQ(f.add(200, 300), 400u);  // and [300, 400)
  EXPECT_EQ(f.add(400, 400), 400u);  // an empty stretch changes nothing
  EXPECT_EQ(f.add(0, 10), 400u);     // nor does one already inside
}

}  // namespace
}  // namespace ww::batch
