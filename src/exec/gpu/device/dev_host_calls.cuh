// Leaving the kernel for a host call and coming back (dev_state.cuh's
// DevHostCalls), shared by the interpreter kernel and compiled code.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"

namespace ww::gpu {

// Writes instance t's call of import `func` into a record; `arg(k)` gives
// argument k. The caller saves where to resume and returns.
template <class Arg>
__device__ inline void leave_for_host(const DevModule& m, const DevWave& w, uint32_t t, uint32_t func, Arg&& arg) {
  const uint32_t r = w.hc.out_base + uint32_t(atomicAdd(w.hc.count, 1ull));
  w.hc.calls[uint64_t(r) * 3] = t;
  w.hc.calls[uint64_t(r) * 3 + 1] = func;
  w.hc.calls[uint64_t(r) * 3 + 2] = w.mem_pages ? w.mem_pages[t] : 0;
  const uint32_t np = m.import_nparams[func];
  for (uint32_t k = 0; k < np; ++k) w.hc.io[uint64_t(r) * w.hc.width + k] = arg(k);
  w.hc.slot[t] = r;
  w.hc.waiting[t] = 1;
}

// Compiled code: room for `words` words of saved frames in this launch's
// half, at *pos; false when the half is full (the caller traps rather than
// leave without a way back).
__device__ inline bool reserve_frames(const DevWave& w, uint64_t words, uint64_t* pos) {
  const uint64_t at = atomicAdd(w.hc.frames_used, (unsigned long long)words);
  if (w.hc.frames == nullptr || at + words > w.hc.frames_half) return false;
  *pos = (w.hc.out_base ? w.hc.frames_half : 0) + at;
  return true;
}

// Back from the host: its writes go into memory, then its results (result
// k into `result(k)`), or its trap.
template <class MemV, class Result>
__device__ inline TrapCode resume_from_host(const DevModule& m, const DevWave& w, uint32_t t, const MemV& memv,
                                            Result&& result) {
  w.hc.waiting[t] = 0;
  const uint32_t r = w.hc.slot[t];
  const uint8_t* p = w.hc.patches + w.hc.patch_off[r];
  for (uint32_t pos = 0, end = w.hc.patch_bytes[r]; pos < end;) {
    const uint32_t addr = *reinterpret_cast<const uint32_t*>(p + pos);
    const uint32_t len = *reinterpret_cast<const uint32_t*>(p + pos + 4);
    memv.write(addr, p + pos + 8, len);
    pos += 8 + ((len + 3) & ~3u);
  }
  if (w.hc.trap[r]) return TrapCode(w.hc.trap[r]);
  const uint32_t func = w.hc.calls[uint64_t(r) * 3 + 1];
  const uint32_t nr = m.import_nresults[func];
  for (uint32_t k = 0; k < nr; ++k) result(k) = w.hc.io[uint64_t(r) * w.hc.width + k];
  return TrapCode::None;
}

}  // namespace ww::gpu
