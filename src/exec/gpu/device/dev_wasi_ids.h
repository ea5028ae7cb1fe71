// What DevModule::import_intrinsic says of each imported function: a `gpu`
// intrinsic (its Intrinsic id, below kDevWasiFirst), a WASI call the
// device serves itself (dev_wasi.cuh), or kDevHostImport. Plain C++: the
// host maps import names to them.
#pragma once

#include <stdint.h>

#include "semantics/hd.h"
#include "wasi/wasi_numbers.h"

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
  // Reads of files the device holds (dev_wasi_files.cuh), and the
  // preopens' names; other descriptors leave for the host.
  FdRead,
  FdPread,
  FdSeek,
  FdTell,
  FdFilestatGet,
  FdPrestatGet,
  FdPrestatDirName,
  // The host serves these, but they may change what fds 0-2 are (or
  // what fd_fdstat_get says of them): the instance's later calls on them
  // go to the host too. fd_close and fd_renumber also move or drop what
  // the device holds.
  FdClose,
  FdRenumber,
  FdFdstatSetFlags,
  FdFdstatSetRights,
  End,
};
inline constexpr uint8_t kDevWasiFirst = uint8_t(DevWasiCall::ArgsSizesGet);
// An import only the host serves (dev_host_calls.cuh); without a server
// calling it traps (HostError).
inline constexpr uint8_t kDevHostImport = 0xFF;
// Stand-ins for an import nothing provides (BatchRequest::unknown_imports),
// answered on the device: a call traps with UnknownImport, or returns
// zeros. Neither needs the host.
inline constexpr uint8_t kDevTrapImport = 0xFE;
inline constexpr uint8_t kDevZeroImport = 0xFD;
WW_HD inline constexpr bool dev_stand_in(uint8_t id) { return id == kDevTrapImport || id == kDevZeroImport; }

// Descriptors per instance whose reads the device serves (DevWasi::fd_of),
// and files per batch it holds: SQLite keeps one database open, and a
// program that opens more has the rest served by the host.
inline constexpr uint32_t kDevFdSlots = 4;
inline constexpr uint32_t kMaxDeviceFiles = 4096;
// What the device keeps of a file it holds for fd_filestat_get and
// fd_fdstat_get: WASI's filestat, then fdstat (whose rights, at 8, the
// device's calls check as the host's do).
inline constexpr uint32_t kDevFileMetaBytes = wasi::kFilestatSize + wasi::kFdstatSize;
// fd_renumber of a descriptor the device holds: the device sets this bit
// of the call's first slot (above the i32 argument) when it has renumbered
// its side already, which it does when it knows both descriptors open.
inline constexpr uint64_t kDevRenumbered = uint64_t(1) << 32;

}  // namespace ww::gpu
