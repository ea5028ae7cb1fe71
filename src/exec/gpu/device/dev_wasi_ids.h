// What DevModule::import_intrinsic says of each imported function: a `gpu`
// intrinsic (its Intrinsic id, below kDevWasiFirst), a WASI call the
// device serves itself (dev_wasi.cuh), or kDevHostImport. Plain C++: the
// host maps import names to them.
#pragma once

#include <stdint.h>

namespace ww::gpu {

enum class DevWasiCall : uint8_t {
  ArgsSizesGet = 0x80,
  ArgsGet,
  EnvironSizesGet,
  EnvironGet,
  ClockResGet,
  ClockTimeGet,
  RandomGet,
  FdWrite,
  ProcExit,
  SchedYield,
  FdFdstatGet,
  // The host serves these, but they may change what fds 0-2 are: the
  // instance's later writes to them go to the host too.
  FdClose,
  FdRenumber,
  End,
};
inline constexpr uint8_t kDevWasiFirst = uint8_t(DevWasiCall::ArgsSizesGet);
// An import only the host serves (dev_host_calls.cuh); without a server
// calling it traps (HostError).
inline constexpr uint8_t kDevHostImport = 0xFF;

}  // namespace ww::gpu
