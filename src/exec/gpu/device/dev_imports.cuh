// An imported function called on the device, for the interpreter kernel and
// compiled code alike: a `gpu` intrinsic and the WASI calls of dev_wasi.cuh
// run here; any other import leaves for the host (dev_host_calls.cuh) when
// a server takes the calls, and traps (HostError) when none does.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_intrinsics.cuh"
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
  if (id < uint8_t(DevWasiCall::End) && in.wasi.on) trap = device_wasi(id, w, in.wasi, t, memv, io, leave);
  else *leave = true;
  if (*leave && !w.hc.enabled) return TrapCode::HostError;
  return trap;
}

}  // namespace ww::gpu
