// An imported function called on the device, for the interpreter kernel and
// compiled code alike: a `gpu` intrinsic, the WASI calls of dev_wasi.cuh
// and the stand-ins for imports nothing provides run here; any other
// import leaves for the host (dev_host_calls.cuh) when a server takes the
// calls, and traps (HostError) when none does.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_host_calls.cuh"
#include "exec/gpu/device/dev_intrinsics.cuh"
#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/dev_wasi.cuh"

namespace ww::gpu {

// Calls import `f` of instance t with `io(k)` its 64-bit slot k (arguments
// in, results out). *leave: the call is the host's; the caller writes the
// record and leaves.
template <class MemV, class IO>
__device__ inline TrapCode device_import(const DevModule& m, const DevWave& w, const DevIntrinsics& in, uint32_t t,
                                         uint32_t f, const MemV& memv, IO&& io, bool* leave) {
  const uint8_t id = m.import_intrinsic[f];
  TrapCode trap = TrapCode::None;
  if (id < kDevWasiFirst) return call_intrinsic(id, io, w, in, t);
  // An unknown import's trap has the import as its site: the callers
  // record `f` for it, as the CPU's stand-in does.
  if (id == kDevTrapImport) return TrapCode::UnknownImport;
  if (id == kDevZeroImport) {
    for (uint32_t k = 0; k < m.import_nresults[f]; ++k) io(k) = 0;
    return TrapCode::None;
  }
  if (id < uint8_t(DevWasiCall::End) && in.wasi.on) trap = device_wasi(id, w, in.wasi, t, memv, io, leave);
  else *leave = true;
  if (*leave && !w.hc.enabled) return TrapCode::HostError;
  return trap;
}

// Compiled code's way to the above, out of line and over slot arrays: one
// copy per module rather than one per call site. Inlined, every host
// import's call site would carry all of dev_wasi.cuh, and the PTX of a
// wasi-libc program would grow many times over.
template <DevLayout L>
__device__ __noinline__ TrapCode device_import_slots(const DevModule& m, const DevWave& w, const DevIntrinsics& in,
                                                     uint32_t t, uint32_t f, DevMemView<L> memv, uint64_t* io,
                                                     bool* leave) {
  return device_import(
      m, w, in, t, f, memv, [io](uint32_t k) -> uint64_t& { return io[k]; }, leave);
}
template <DevLayout L>
__device__ __noinline__ TrapCode resume_slots(const DevModule& m, const DevWave& w, uint32_t t, DevMemView<L> memv,
                                              uint64_t* io) {
  return resume_from_host(m, w, t, memv, [io](uint32_t k) -> uint64_t& { return io[k]; });
}
__device__ __noinline__ inline void leave_slots(const DevModule& m, const DevWave& w, uint32_t t, uint32_t func,
                                                const uint64_t* io) {
  leave_for_host(m, w, t, func, [io](uint32_t k) { return io[k]; });
}

}  // namespace ww::gpu
