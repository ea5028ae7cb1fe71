// WASI calls served on the device: argv and the environment, clocks,
// seeded random bytes, proc_exit and writes to stdout and stderr (into a
// log the host drains between launches). Each matches wasi_calls*.cc's
// result for the same memory, errno for errno: the same bounds checks in
// the same order. What the device cannot do exactly (a write past the
// output cap, a full log, descriptors the program reshaped) leaves for the
// host, which serves the call the CPU's way.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/dev_wasi_files.cuh"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "wasi/wasi_numbers.h"

namespace ww::gpu {

namespace wasi_dev {

__device__ inline uint32_t decimal_digits(uint64_t v) {
  uint32_t d = 1;
  while (v >= 10) {
    v /= 10;
    ++d;
  }
  return d;
}

// String k of a DevWasi list: its length without the NUL, the instance's
// index standing where a 0xFF byte is.
__device__ inline uint64_t string_length(const uint8_t* b, const uint32_t* off, uint32_t k, uint64_t index) {
  uint64_t n = 0;
  for (uint32_t j = off[k]; j < off[k + 1]; ++j) n += b[j] == 0xFF ? decimal_digits(index) : 1;
  return n;
}

template <class MemV>
__device__ inline uint32_t sizes_get(const MemV& mv, const uint8_t* b, const uint32_t* off, uint32_t count,
                                     uint64_t index, uint64_t count_ptr, uint64_t size_ptr) {
  uint64_t bytes = 0;
  for (uint32_t k = 0; k < count; ++k) bytes += string_length(b, off, k, index) + 1;
  return put(mv, count_ptr, count, 4) && put(mv, size_ptr, uint32_t(bytes), 4) ? kSuccess : kFault;
}

template <class MemV>
__device__ inline uint32_t strings_get(const MemV& mv, const uint8_t* b, const uint32_t* off, uint32_t count,
                                       uint64_t index, uint64_t ptrs, uint64_t buf) {
  char digits[20];
  const uint32_t nd = decimal_digits(index);
  for (uint64_t v = index, k = nd; k-- > 0; v /= 10) digits[k] = char('0' + v % 10);
  for (uint32_t k = 0; k < count; ++k) {
    const uint64_t len = string_length(b, off, k, index);
    if (!put(mv, ptrs, uint32_t(buf), 4) || !in(mv, buf, len + 1)) return kFault;
    uint64_t at = buf;
    for (uint32_t j = off[k]; j < off[k + 1]; ++j) {
      if (b[j] != 0xFF) {
        mv.m.store8(at++, b[j]);
        continue;
      }
      for (uint32_t d = 0; d < nd; ++d) mv.m.store8(at++, uint8_t(digits[d]));
    }
    mv.m.store8(at, 0);
    ptrs += 4;
    buf += len + 1;
  }
  return kSuccess;
}

// What became of a device fd_write.
enum class Write { Done, LogFull, HostsStdio };

// fd_write to fd 1 or 2 into the log. LogFull: the host serves this write
// (counted here already, as it will write it whole: it is within the cap);
// HostsStdio: the host serves it and every later one of fds 0-2.
template <class MemV>
__device__ inline Write fd_write(const DevWave& w, const DevWasi& d, uint32_t t, const MemV& mv, uint32_t fd,
                                 uint64_t iovs, uint64_t count, uint64_t done_ptr, uint32_t* err) {
  if ((fd != 1 && fd != 2) || !d.log_fd[fd - 1] || d.stdio_host[t]) return Write::HostsStdio;
  if (!in(mv, iovs, count * 8)) {
    *err = kFault;
    return Write::Done;
  }
  uint64_t total = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t buf = mv.m.load(iovs + k * 8, 4), len = mv.m.load(iovs + k * 8 + 4, 4);
    if (!in(mv, buf, len)) {
      *err = kFault;
      return Write::Done;
    }
    total += len;
  }
  uint64_t& written = d.out_bytes[uint64_t(fd - 1) * w.n + t];
  // Past the cap the host cuts the write exactly where the CPU would.
  if (written + total > d.out_cap || total >= (uint64_t(1) << 31)) return Write::HostsStdio;
  if (total > 0) {
    const uint64_t need = 8 + ((total + 7) & ~uint64_t(7));
    const uint64_t at = atomicAdd(d.log_used, (unsigned long long)need);
    if (at + need > d.log_cap) {
      atomicMin(d.log_limit, (unsigned long long)at);
      written += total;
      return Write::LogFull;
    }
    uint8_t* rec = d.log + at;
    *reinterpret_cast<uint32_t*>(rec) = t;
    *reinterpret_cast<uint32_t*>(rec + 4) = (fd - 1) | uint32_t(total) << 1;
    uint8_t* out = rec + 8;
    for (uint64_t k = 0; k < count; ++k) {
      const uint64_t buf = mv.m.load(iovs + k * 8, 4), len = mv.m.load(iovs + k * 8 + 4, 4);
      for (uint64_t j = 0; j < len; ++j) *out++ = mv.m.load8(buf + j);
    }
    written += total;
  }
  *err = put(mv, done_ptr, uint32_t(total), 4) ? kSuccess : kFault;
  return Write::Done;
}

template <class MemV>
__device__ inline uint32_t random_get(const DevWave& w, const DevWasi& d, uint32_t t, const MemV& mv, uint64_t buf,
                                      uint64_t len) {
  if (!in(mv, buf, len)) return kFault;
  const uint64_t seed = d.seed + w.first + t;  // w.first: the batch's index
  uint64_t& count = d.rand_count[t];
  for (uint64_t k = 0; k < len; k += 8) {
    const uint64_t z = wasi::seeded_random_word(seed, ++count);
    for (uint64_t j = 0; j < 8 && k + j < len; ++j) mv.m.store8(buf + k + j, uint8_t(z >> (8 * j)));
  }
  return kSuccess;
}

}  // namespace wasi_dev

// Serves WASI call `id` of instance t on the device: *leave when the host
// must serve it instead (nothing was done then).
template <class MemV, class IO>
__device__ inline TrapCode device_wasi(uint8_t id, const DevWave& w, const DevWasi& d, uint32_t t, const MemV& mv,
                                       IO&& io, bool* leave) {
  using namespace wasi_dev;
  const uint64_t index = uint64_t(w.first) + t;  // the instance's index in the batch
  auto u32 = [&](uint32_t k) { return uint64_t(uint32_t(io(k))); };
  switch (static_cast<DevWasiCall>(id)) {
    case DevWasiCall::ArgsSizesGet:
      io(0) = sizes_get(mv, d.argv, d.argv_off, d.argc, index, u32(0), u32(1));
      return TrapCode::None;
    case DevWasiCall::ArgsGet:
      io(0) = strings_get(mv, d.argv, d.argv_off, d.argc, index, u32(0), u32(1));
      return TrapCode::None;
    case DevWasiCall::EnvironSizesGet:
      io(0) = sizes_get(mv, d.env, d.env_off, d.envc, index, u32(0), u32(1));
      return TrapCode::None;
    case DevWasiCall::EnvironGet:
      io(0) = strings_get(mv, d.env, d.env_off, d.envc, index, u32(0), u32(1));
      return TrapCode::None;
    case DevWasiCall::ClockResGet: {
      const uint32_t c = uint32_t(u32(0));
      io(0) = c >= wasi::kClockCount ? kInval : put(mv, u32(1), d.clock_res[c], 8) ? kSuccess : kFault;
      return TrapCode::None;
    }
    case DevWasiCall::ClockTimeGet: {
      const uint32_t c = uint32_t(u32(0));
      if (c >= wasi::kClockCount) {
        io(0) = kInval;
        return TrapCode::None;
      }
      const uint64_t now = uint64_t(d.clock_base[c]) + (global_timer_ns() - w.start_ns);
      io(0) = put(mv, u32(2), now, 8) ? kSuccess : kFault;
      return TrapCode::None;
    }
    case DevWasiCall::RandomGet: io(0) = random_get(w, d, t, mv, u32(0), u32(1)); return TrapCode::None;
    case DevWasiCall::FdWrite: {
      uint32_t err = 0;
      const Write r = fd_write(w, d, t, mv, uint32_t(u32(0)), u32(1), u32(2), u32(3), &err);
      if (r == Write::Done) {
        io(0) = err;
        return TrapCode::None;
      }
      if (r == Write::HostsStdio && u32(0) <= 2) d.stdio_host[t] = 1;
      *leave = true;
      return TrapCode::None;
    }
    case DevWasiCall::ProcExit: d.exit_code[t] = u32(0) | uint64_t(1) << 32; return TrapCode::Exit;
    case DevWasiCall::SchedYield: io(0) = kSuccess; return TrapCode::None;
    case DevWasiCall::FdFdstatGet: {
      const uint64_t fd = u32(0), ptr = u32(1);
      if (fd > 2 && device_file_call(DevWasiCall::FdFdstatGet, w, d, t, mv, io)) return TrapCode::None;
      if (fd > 2 || !d.stdio_fdstat_known || d.stdio_host[t]) {
        *leave = true;
        return TrapCode::None;
      }
      io(0) = put_bytes(mv, ptr, d.stdio_fdstat[fd], wasi::kFdstatSize);
      return TrapCode::None;
    }
    case DevWasiCall::FdClose:
      if (u32(0) <= 2) d.stdio_host[t] = 1;
      device_fd_closing(w, d, t, u32(0));
      *leave = true;
      return TrapCode::None;
    case DevWasiCall::FdRenumber:
      if (device_fd_renumbering(w, d, t, u32(0), u32(1))) io(0) = u32(0) | kDevRenumbered;
      *leave = true;
      return TrapCode::None;
    case DevWasiCall::FdFdstatSetFlags:
    case DevWasiCall::FdFdstatSetRights:
      // fd_fdstat_get of fds 0-2 is the host's from here on.
      if (u32(0) <= 2) d.stdio_host[t] = 1;
      *leave = true;
      return TrapCode::None;
    case DevWasiCall::FdRead:
    case DevWasiCall::FdPread:
    case DevWasiCall::FdSeek:
    case DevWasiCall::FdTell:
    case DevWasiCall::FdFilestatGet:
    case DevWasiCall::FdPrestatGet:
    case DevWasiCall::FdPrestatDirName:
      *leave = !device_file_call(static_cast<DevWasiCall>(id), w, d, t, mv, io);
      return TrapCode::None;
    default: *leave = true; return TrapCode::None;
  }
}

}  // namespace ww::gpu
