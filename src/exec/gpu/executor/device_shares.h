// Several GPUs on one stretch of a batch: how the instances are handed
// out and how the rows that finish out of order become a ready prefix.
// Plain C++ (no CUDA), so the CPU's tests check it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace ww::batch {

// Guided self-scheduling: each claim takes a share of what is left
// (remaining / (2 x devices)), never less than min_claim, so a faster GPU
// simply comes back for more and the last claims are small enough that
// the GPUs finish close together. Instances differ in cost; equal shares
// fixed in advance would leave the GPU with the dearer half running alone.
class StretchClaims {
 public:
  StretchClaims(uint64_t count, unsigned devices, uint32_t min_claim = kMinClaim)
      : count_(count), devices_(devices ? devices : 1), min_claim_(min_claim ? min_claim : 1), taken_(devices_) {}

  // Up to `want` instances for device `d` at *first; 0 when none are left
  // or the claims were stopped.
  uint32_t claim(unsigned d, uint32_t want, uint64_t* first);
  // No claim succeeds after this (a device failed: the others stop too).
  void stop();
  uint64_t taken(unsigned d) const;  // instances device d has claimed

  // The smallest claim but the last when the GPUs' own size is unknown
  // (the executor passes what a GPU runs at once, 270,336 on an H200).
  static constexpr uint32_t kMinClaim = 8192;

 private:
  mutable std::mutex mu_;
  uint64_t next_ = 0;
  const uint64_t count_;
  const unsigned devices_;
  const uint32_t min_claim_;
  std::vector<uint64_t> taken_;
  bool stopped_ = false;
};

// Rows final in any order: the prefix [0, frontier) they make up. Not
// thread-safe: its user serialises the calls (and what it does with the
// frontier, which must only grow).
class ReadyFrontier {
 public:
  // Rows [first, end) are final. Returns the frontier afterwards.
  uint64_t add(uint64_t first, uint64_t end);
  uint64_t value() const { return frontier_; }

 private:
  uint64_t frontier_ = 0;
  std::map<uint64_t, uint64_t> pending_;  // first -> end, past the frontier
};

}  // namespace ww::batch
