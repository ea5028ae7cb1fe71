#include "exec/gpu/executor/device_shares.h"

#include <algorithm>

namespace ww::batch {

uint32_t StretchClaims::claim(unsigned d, uint32_t want, uint64_t* first) {
  std::lock_guard<std::mutex> g(mu_);
  if (stopped_ || next_ >= count_ || want == 0) return 0;
  const uint64_t left = count_ - next_;
  uint64_t n = std::max<uint64_t>((left + 2 * devices_ - 1) / (2 * devices_), min_claim_);
  // Whole warps, except for the batch's last instances.
  if (n < left && n > 32) n -= n % 32;
  n = std::min<uint64_t>({n, want, left});
  *first = next_;
  next_ += n;
  if (d < taken_.size()) taken_[d] += n;
  return uint32_t(n);
}

void StretchClaims::stop() {
  std::lock_guard<std::mutex> g(mu_);
  stopped_ = true;
}

uint64_t StretchClaims::taken(unsigned d) const {
  std::lock_guard<std::mutex> g(mu_);
  return d < taken_.size() ? taken_[d] : 0;
}

uint64_t ReadyFrontier::add(uint64_t first, uint64_t end) {
  if (end <= first) return frontier_;
  if (first > frontier_) {
    pending_[first] = std::max(pending_[first], end);
    return frontier_;
  }
  frontier_ = std::max(frontier_, end);
  // Stretches that now touch the frontier join it.
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= frontier_; it = pending_.erase(it))
    frontier_ = std::max(frontier_, it->second);
  return frontier_;
}

}  // namespace ww::batch
