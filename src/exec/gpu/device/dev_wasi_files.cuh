// Reads of files the device holds (DevWasi's file table), for the
// descriptors the host handed to it after a path_open: fd_read, fd_pread,
// fd_seek, fd_tell, fd_filestat_get and fd_fdstat_get, and the preopens'
// fd_prestat_*. Each gives wasi_calls_fd.cc's result over Linux's read,
// pread and lseek of the same regular file, errno for errno; a call the
// descriptor lacks the right for leaves for the host, which refuses it
// without touching the offset. The host keeps the descriptor open too
// (shared by the batch), so the calls served there
// (fd_close, fd_write's EBADF, fd_sync) see the same file; it never reads
// through it, so the offset the device keeps is the only one.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "wasi/wasi_numbers.h"

namespace ww::gpu {
namespace wasi_dev {

using wasi::kFault;
using wasi::kInval;
using wasi::kSuccess;

// Guest memory as the host's calls check it: [p, p + n) inside, or EFAULT.
template <class MemV>
__device__ inline bool in(const MemV& mv, uint64_t p, uint64_t n) {
  return p + n >= p && p + n <= mv.size();
}
template <class MemV>
__device__ inline bool put(const MemV& mv, uint64_t p, uint64_t v, uint32_t bytes) {
  if (!in(mv, p, bytes)) return false;
  for (uint32_t k = 0; k < bytes; ++k) mv.m.store8(p + k, uint8_t(v >> (8 * k)));
  return true;
}

// Linux moves at most this much in one read (MAX_RW_COUNT).
inline constexpr uint64_t kMaxRwBytes = 0x7ffff000;

__device__ inline bool fd_is_preopen(const DevWasi& d, uint64_t fd) {
  return fd >= 3 && fd < 3 + uint64_t(d.npreopens);
}

// Instance t's descriptor slot holding `fd`, or -1 (the host's).
__device__ inline int device_fd(const DevWave& w, const DevWasi& d, uint32_t t, uint64_t fd) {
  if (!d.fd_of || fd > 0xFFFFFFFEull) return -1;
  for (uint32_t j = 0; j < kDevFdSlots; ++j)
    if (d.fd_of[uint64_t(j) * w.n + t] == fd + 1) return int(j);
  return -1;
}

// One read(2)/pread(2) of `len` bytes at `at`: bytes moved, or -1 where
// Linux says EINVAL (a negative offset, or one whose end overflows).
template <class MemV>
__device__ inline int64_t read_at(const DevWasi& d, uint32_t file, const MemV& mv, uint64_t buf, uint64_t len,
                                  int64_t at) {
  if (at < 0 || int64_t(uint64_t(at) + len) < 0) return -1;
  const uint64_t size = d.file_size[file];
  if (uint64_t(at) >= size) return 0;
  uint64_t n = len < kMaxRwBytes ? len : kMaxRwBytes;
  if (n > size - uint64_t(at)) n = size - uint64_t(at);
  mv.write(buf, d.file_data[file] + at, uint32_t(n));
  return int64_t(n);
}

// fd_read / fd_pread over the iovecs at `iovs` from offset `at`, as
// wasi_calls.cc's scatter: every iovec checked before any byte moves, a
// short read ends the call, an error after some bytes ends it quietly.
// *moved: the bytes moved (fd_read's offset advances by them).
template <class MemV>
__device__ inline uint32_t read_iovs(const DevWasi& d, uint32_t file, const MemV& mv, uint64_t iovs, uint64_t count,
                                     int64_t at, uint64_t done_ptr, uint64_t* moved) {
  *moved = 0;
  if (!in(mv, iovs, count * 8)) return kFault;
  for (uint64_t k = 0; k < count; ++k)
    if (!in(mv, mv.m.load(iovs + k * 8, 4), mv.m.load(iovs + k * 8 + 4, 4))) return kFault;
  uint64_t done = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t buf = mv.m.load(iovs + k * 8, 4), len = mv.m.load(iovs + k * 8 + 4, 4);
    if (len == 0) continue;
    const int64_t n = read_at(d, file, mv, buf, len, int64_t(uint64_t(at) + done));
    if (n < 0) {
      if (done > 0) break;
      return kInval;
    }
    done += uint64_t(n);
    if (uint64_t(n) < len) break;
  }
  *moved = done;
  return put(mv, done_ptr, uint32_t(done), 4) ? kSuccess : kFault;
}

// lseek(2) of a regular file (generic_file_llseek_size): the new offset,
// or -1 for EINVAL.
__device__ inline int64_t seek_to(int64_t pos, uint64_t size, uint64_t max_seek, int64_t offset, uint32_t whence) {
  if (whence == wasi::kWhenceCur && offset == 0) return pos;
  const int64_t base = whence == wasi::kWhenceSet ? 0 : whence == wasi::kWhenceCur ? pos : int64_t(size);
  const int64_t r = int64_t(uint64_t(base) + uint64_t(offset));  // wraps, as the kernel's does
  return r < 0 || uint64_t(r) > max_seek ? -1 : r;
}

// The rights of held file `file`'s descriptors (its fdstat's, which every
// instance's descriptor of it shares: the host hands over only those).
__device__ inline uint64_t held_rights(const DevWasi& d, uint32_t file) {
  const uint8_t* p = d.file_meta + uint64_t(file) * kDevFileMetaBytes + wasi::kFilestatSize + 8;
  uint64_t r = 0;
  for (uint32_t k = 0; k < 8; ++k) r |= uint64_t(p[k]) << (8 * k);
  return r;
}

template <class MemV>
__device__ inline uint32_t put_bytes(const MemV& mv, uint64_t ptr, const uint8_t* src, uint32_t n) {
  if (!in(mv, ptr, n)) return kFault;
  mv.write(ptr, src, n);
  return kSuccess;
}

// The calls above for instance t: false when the host serves this one
// (the descriptor is not the device's).
template <class MemV, class IO>
__device__ inline bool device_file_call(DevWasiCall call, const DevWave& w, const DevWasi& d, uint32_t t,
                                        const MemV& mv, IO&& io) {
  auto u32 = [&](uint32_t k) { return uint64_t(uint32_t(io(k))); };
  if (call == DevWasiCall::FdPrestatGet || call == DevWasiCall::FdPrestatDirName) {
    if (d.preopen_host[t]) return false;
    // wasi_calls.cc: EBADF for any descriptor but a preopen (stdio, files
    // opened later, closed ones).
    const uint64_t fd = u32(0);
    if (fd < 3 || fd >= 3 + uint64_t(d.npreopens)) {
      io(0) = wasi::kBadf;
      return true;
    }
    const uint32_t at = d.preopen_off[fd - 3], len = d.preopen_off[fd - 2] - at;
    if (call == DevWasiCall::FdPrestatGet) {
      io(0) = put(mv, u32(1), uint64_t(len) << 32, 8) ? kSuccess : kFault;  // tag 0: a directory
      return true;
    }
    io(0) = u32(2) < len ? wasi::kNametoolong : put_bytes(mv, u32(1), d.preopen_names + at, len);
    return true;
  }
  const int j = device_fd(w, d, t, u32(0));
  if (j < 0) return false;
  const uint64_t slot = uint64_t(j) * w.n + t;
  const uint32_t file = d.file_of[slot];
  uint64_t& pos = d.fd_pos[slot];
  const uint64_t rights = held_rights(d, file);
  auto has = [&](uint64_t r) { return (rights & r) == r; };
  switch (call) {
    case DevWasiCall::FdRead:
    case DevWasiCall::FdPread:
      if (!has(wasi::kRightFdRead | (call == DevWasiCall::FdPread ? wasi::kRightFdSeek : 0))) return false;
      break;
    case DevWasiCall::FdSeek:
      if (uint32_t(u32(2)) <= wasi::kWhenceEnd && !has(wasi::kRightFdSeek) &&
          !(uint32_t(u32(2)) == wasi::kWhenceCur && io(1) == 0 && has(wasi::kRightFdTell)))
        return false;
      break;
    case DevWasiCall::FdTell:
      if (!has(wasi::kRightFdTell)) return false;
      break;
    case DevWasiCall::FdFilestatGet:
      if (!has(wasi::kRightFdFilestatGet)) return false;
      break;
    default: break;
  }
  switch (call) {
    case DevWasiCall::FdRead: {
      uint64_t moved = 0;
      io(0) = read_iovs(d, file, mv, u32(1), u32(2), int64_t(pos), u32(3), &moved);
      pos += moved;
      return true;
    }
    case DevWasiCall::FdPread: {
      uint64_t moved = 0;
      io(0) = read_iovs(d, file, mv, u32(1), u32(2), int64_t(io(3)), u32(4), &moved);
      return true;
    }
    case DevWasiCall::FdSeek: {
      const uint32_t whence = uint32_t(u32(2));
      if (whence > wasi::kWhenceEnd) {
        io(0) = kInval;
        return true;
      }
      const int64_t r = seek_to(int64_t(pos), d.file_size[file], d.file_max_seek[file], int64_t(io(1)), whence);
      if (r < 0) {
        io(0) = kInval;
        return true;
      }
      pos = uint64_t(r);
      io(0) = put(mv, u32(3), pos, 8) ? kSuccess : kFault;
      return true;
    }
    case DevWasiCall::FdTell: io(0) = put(mv, u32(1), pos, 8) ? kSuccess : kFault; return true;
    case DevWasiCall::FdFilestatGet:
      io(0) = put_bytes(mv, u32(1), d.file_meta + uint64_t(file) * kDevFileMetaBytes, wasi::kFilestatSize);
      return true;
    case DevWasiCall::FdFdstatGet:
      io(0) = put_bytes(mv, u32(1), d.file_meta + uint64_t(file) * kDevFileMetaBytes + wasi::kFilestatSize,
                        wasi::kFdstatSize);
      return true;
    default: return false;
  }
}

// fd_close, served by the host: the device forgets what it held of fd
// first (the host then closes its side; fd numbers stay in step).
__device__ inline void device_fd_closing(const DevWave& w, const DevWasi& d, uint32_t t, uint64_t fd) {
  if (fd >= 3 && fd < 3 + uint64_t(d.npreopens)) d.preopen_host[t] = 1;
  const int j = device_fd(w, d, t, fd);
  if (j >= 0) d.fd_of[uint64_t(j) * w.n + t] = 0;
}

// fd_renumber(from, to), served by the host (which fails it with EBADF
// unless both are open): the device's side first. When it holds either
// and knows both open (its own, stdio never closed, preopens never
// closed), `to`'s slot goes and `from`'s takes number `to`: true, and the
// host mirrors it. Otherwise nothing changes here, and the host ends the
// instance should its renumber move a descriptor the device holds.
__device__ inline bool device_fd_renumbering(const DevWave& w, const DevWasi& d, uint32_t t, uint64_t from,
                                             uint64_t to) {
  const int jf = device_fd(w, d, t, from), jt = device_fd(w, d, t, to);
  auto open = [&](uint64_t fd, int j) {
    return j >= 0 || (fd <= 2 && !d.stdio_host[t]) || (fd_is_preopen(d, fd) && !d.preopen_host[t]);
  };
  const bool both = open(from, jf) && open(to, jt);
  if (fd_is_preopen(d, from) || fd_is_preopen(d, to)) d.preopen_host[t] = 1;
  if (from <= 2 || to <= 2) d.stdio_host[t] = 1;
  if ((jf < 0 && jt < 0) || from == to || !both) return false;
  if (jt >= 0) d.fd_of[uint64_t(jt) * w.n + t] = 0;
  if (jf >= 0) d.fd_of[uint64_t(jf) * w.n + t] = uint32_t(to + 1);
  return true;
}

}  // namespace wasi_dev
}  // namespace ww::gpu
