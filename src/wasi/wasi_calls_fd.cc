// The fd_* calls. Each looks at what the descriptor is before its rights:
// a directory where a file is needed is EBADF, a stream (a pipe, a
// terminal, stdio in memory) asked for an offset is ESPIPE, a read or write
// the descriptor was not opened for is EBADF, all as wasmtime answers; a
// right the program dropped (or never asked for) is ENOTCAPABLE.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wasi/wasi_internal.h"

namespace ww::wasi {
namespace {

#define RET(e) return ret(s, (e))
#define U32(k) uint32_t(s[k])

// Reads or writes the iovecs at `iovs` with `io(host_buffer, len)`, which
// returns bytes moved (< len ends the call) or -1 with errno set.
template <class Io>
uint32_t scatter(const CallContext& c, uint64_t iovs, uint64_t count, bool into_guest, uint64_t done_ptr, Io&& io) {
  // Every iovec (and every byte to write out) is read before anything
  // moves: nothing may happen twice if the call runs again.
  const uint8_t* vec = c.read(iovs, count * 8);
  if (!vec) return kFault;
  bool have_all = true;
  for (uint64_t k = 0; k < count; ++k) {
    uint32_t buf = 0, len = 0;
    std::memcpy(&buf, vec + k * 8, 4);
    std::memcpy(&len, vec + k * 8 + 4, 4);
    if (!c.in(buf, len)) return kFault;
    if (!into_guest && len) have_all &= c.read(buf, len) != nullptr;
  }
  if (!have_all) return kFault;
  uint64_t done = 0;
  for (uint64_t k = 0; k < count; ++k) {
    uint32_t buf = 0, len = 0;
    std::memcpy(&buf, vec + k * 8, 4);
    std::memcpy(&len, vec + k * 8 + 4, 4);
    if (len == 0) continue;
    uint8_t* p = into_guest ? c.mem->window(buf, len) : const_cast<uint8_t*>(c.read(buf, len));
    ssize_t n = io(p, len);
    if (n < 0) {
      if (done > 0) break;  // what moved stands; the error comes with the next call
      return errno_from_host(errno);
    }
    if (into_guest) c.mem->written(buf, uint64_t(n));
    done += uint64_t(n);
    if (uint64_t(n) < len) break;
  }
  return c.put_le<uint32_t>(done_ptr, uint32_t(done)) ? kSuccess : kFault;
}

// Whether `f` may read (or write) bytes, at an offset when `at`.
uint32_t may_move(const Context::Fd* f, bool read, bool at) {
  if (!f || f->directory() || !(read ? f->can_read : f->can_write)) return kBadf;
  if (at && f->stream) return kSpipe;
  return f->has((read ? kRightFdRead : kRightFdWrite) | (at ? kRightFdSeek : 0)) ? kSuccess : kNotcapable;
}

// A call only a file takes (wasmtime: EBADF for directories and stdio
// streams).
uint32_t file_call(const Context::Fd* f, uint64_t right) {
  if (!f || f->directory() || f->stream) return kBadf;
  return f->has(right) ? kSuccess : kNotcapable;
}

TrapCode fd_read(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = may_move(f, true, false); e != kSuccess) RET(e);
  const int host = f->host;
  RET(scatter(c, U32(1), U32(2), true, U32(3), [&](uint8_t* p, size_t n) -> ssize_t {
    if (host < 0) return 0;
    ssize_t r;
    do r = ::read(host, p, n);
    while (r < 0 && errno == EINTR);
    return r;
  }));
}

TrapCode fd_pread(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = may_move(f, true, true); e != kSuccess) RET(e);
  const int host = f->host;
  off_t at = off_t(s[3]);
  RET(scatter(c, U32(1), U32(2), true, U32(4), [&](uint8_t* p, size_t n) {
    ssize_t r = ::pread(host, p, n, at);
    if (r > 0) at += r;
    return r;
  }));
}

TrapCode fd_write(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = may_move(f, false, false); e != kSuccess) RET(e);
  RET(scatter(c, U32(1), U32(2), false, U32(3), [&](uint8_t* p, size_t n) -> ssize_t {
    bool capped = false;
    const ssize_t w = write_capped(*f, p, n, capped);
    if (capped) c.note_capped();
    return w;
  }));
}

// At offset `offset`, leaving the descriptor's own where it is; with
// APPEND, Linux's pwrite appends (which the test suite accepts as wasmtime
// does the same).
TrapCode fd_pwrite(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = may_move(f, false, true); e != kSuccess) RET(e);
  if (int64_t(s[3]) < 0) RET(kInval);
  int64_t at = int64_t(s[3]);
  RET(scatter(c, U32(1), U32(2), false, U32(4), [&](uint8_t* p, size_t n) -> ssize_t {
    bool capped = false;
    const ssize_t w = write_capped(*f, p, n, capped, at);
    if (capped) c.note_capped();
    if (w > 0) at += w;
    return w;
  }));
}

TrapCode fd_seek(const CallContext& c, uint64_t* s) {
  const int64_t offset = int64_t(s[1]);
  const uint32_t whence = U32(2);
  if (whence > kWhenceEnd) RET(kInval);
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->directory()) RET(kBadf);
  if (f->stream) RET(kSpipe);
  // Asking where the offset is takes fd_tell's right alone.
  const bool tell = whence == kWhenceCur && offset == 0;
  if (!f->has(kRightFdSeek) && !(tell && f->has(kRightFdTell))) RET(kNotcapable);
  const int how[] = {SEEK_SET, SEEK_CUR, SEEK_END};
  const off_t r = ::lseek(f->host, off_t(offset), how[whence]);
  if (r < 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(3), uint64_t(r)) ? kSuccess : kFault);
}

TrapCode fd_tell(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->directory()) RET(kBadf);
  if (f->stream) RET(kSpipe);
  if (!f->has(kRightFdTell)) RET(kNotcapable);
  const off_t r = ::lseek(f->host, 0, SEEK_CUR);
  if (r < 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(1), uint64_t(r)) ? kSuccess : kFault);
}

TrapCode fd_close(const CallContext& c, uint64_t* s) {
  if (!c.fd(U32(0))) RET(kBadf);
  c.close_fd(U32(0));
  RET(kSuccess);
}

// `to` must be open (WASI has no dup2); it is closed and `from` takes its
// number, preopens and stdio as any other.
TrapCode fd_renumber(const CallContext& c, uint64_t* s) {
  if (!c.fd(U32(0)) || !c.fd(U32(1))) RET(kBadf);
  c.move_fd(U32(0), U32(1));
  RET(kSuccess);
}

TrapCode fd_fdstat_get(const CallContext& c, uint64_t* s) {
  uint8_t b[kFdstatSize] = {};
  if (!c.cx.fdstat(U32(0), b)) RET(kBadf);
  RET(c.put(U32(1), b, sizeof b) ? kSuccess : kFault);
}

// APPEND and NONBLOCK change; the SYNC flags are fixed at path_open
// (wasmtime: EINVAL for any, here only for a change).
TrapCode fd_fdstat_set_flags(const CallContext& c, uint64_t* s) {
  const uint32_t flags = U32(1);
  if (flags & ~kFdflagsAll) RET(kInval);
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->directory()) RET(kBadf);
  if (!f->has(kRightFdFdstatSetFlags)) RET(kNotcapable);
  if ((flags ^ f->flags) & kFdflagsSync) RET(kInval);
  const bool append = flags & kFdflagAppend;
  // A file this descriptor writes appends through the kernel; nothing else
  // needs it there (and a batch's shared descriptors must not change).
  if (append != bool(f->flags & kFdflagAppend) && f->can_write && !f->stream && f->host >= 0) {
    const int fl = ::fcntl(f->host, F_GETFL);
    if (fl < 0 || ::fcntl(f->host, F_SETFL, append ? fl | O_APPEND : fl & ~O_APPEND) != 0) RET(errno_from_host(errno));
  }
  f->flags = uint16_t(flags);
  RET(kSuccess);
}

// Rights only shrink.
TrapCode fd_fdstat_set_rights(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  if ((s[1] & ~f->rights) || (s[2] & ~f->inheriting)) RET(kNotcapable);
  f->rights = s[1];
  f->inheriting = s[2];
  RET(kSuccess);
}

TrapCode fd_filestat_get(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  if (!f->has(kRightFdFilestatGet)) RET(kNotcapable);
  uint8_t b[kFilestatSize];
  if (!c.cx.filestat(U32(0), b)) RET(errno_from_host(errno));
  RET(c.put(U32(1), b, sizeof b) ? kSuccess : kFault);
}

TrapCode fd_filestat_set_size(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = file_call(f, kRightFdFilestatSetSize); e != kSuccess) RET(e);
  if (!f->writable) RET(kNotcapable);
  if (int64_t(s[1]) < 0) RET(kInval);
  RET(::ftruncate(f->host, off_t(s[1])) == 0 ? kSuccess : errno_from_host(errno));
}

TrapCode fd_filestat_set_times(const CallContext& c, uint64_t* s) {
  timespec ts[2];
  if (!utimes_of(s[1], s[2], U32(3), ts)) RET(kInval);
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->stream) RET(kBadf);
  if (!f->has(kRightFdFilestatSetTimes)) RET(kNotcapable);
  if (!f->writable) RET(kNotcapable);
  RET(::futimens(f->host, ts) == 0 ? kSuccess : errno_from_host(errno));
}

TrapCode fd_advise(const CallContext& c, uint64_t* s) {
  if (U32(3) >= kAdviceCount) RET(kInval);
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = file_call(f, kRightFdAdvise); e != kSuccess) RET(e);
  // WASI's advice numbers are POSIX_FADV_*'s on Linux, in the same order.
  const int advice[] = {POSIX_FADV_NORMAL,   POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
                        POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,   POSIX_FADV_NOREUSE};
  const int e = ::posix_fadvise(f->host, off_t(s[1]), off_t(s[2]), advice[U32(3)]);
  RET(e == 0 ? kSuccess : errno_from_host(e));
}

// posix_fallocate: the file grows to offset + len when shorter (wasmtime
// answers ENOTSUP to every fd_allocate; a file system without it does here).
TrapCode fd_allocate(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (uint32_t e = file_call(f, kRightFdAllocate); e != kSuccess) RET(e);
  if (!f->writable) RET(kNotcapable);
  if (int64_t(s[1]) < 0 || int64_t(s[2]) <= 0) RET(kInval);
  const int e = ::posix_fallocate(f->host, off_t(s[1]), off_t(s[2]));
  RET(e == 0 ? kSuccess : errno_from_host(e == EOPNOTSUPP ? ENOTSUP : e));
}

// fsync / fdatasync; a stream has nothing to make durable.
template <bool kData>
TrapCode fd_sync(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->directory()) RET(kBadf);
  if (!f->has(kData ? kRightFdDatasync : kRightFdSync)) RET(kNotcapable);
  if (f->stream || f->host < 0) RET(kSuccess);
  const int r = kData ? ::fdatasync(f->host) : ::fsync(f->host);
  RET(r == 0 || errno == EINVAL ? kSuccess : errno_from_host(errno));
}

uint8_t filetype_of_dirent(int dir, const dirent& e) {
  switch (e.d_type) {
    case DT_DIR: return kFiletypeDirectory;
    case DT_REG: return kFiletypeRegularFile;
    case DT_LNK: return kFiletypeSymbolicLink;
    case DT_CHR: return kFiletypeCharacterDevice;
    case DT_BLK: return kFiletypeBlockDevice;
    case DT_SOCK: return kFiletypeSocketStream;
    case DT_UNKNOWN: {
      struct stat st {};
      return ::fstatat(dir, e.d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? filetype_of(st.st_mode)
                                                                     : uint8_t(kFiletypeUnknown);
    }
    default: return kFiletypeUnknown;
  }
}

// The directory's entries now, "." and ".." aside. Through a descriptor of
// its own: the directory's may be shared (a GPU batch's preopens).
uint32_t list(Context::Fd& f) {
  const int fd = ::openat(f.host, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (!d) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    return errno_from_host(e);
  }
  f.entries.clear();
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    f.entries.push_back({e->d_name, uint64_t(e->d_ino), filetype_of_dirent(fd, *e)});
  }
  ::closedir(d);
  f.listed = true;
  return kSuccess;
}

// Cookie k is entry k of ".", "..", then the directory's entries as read
// at the last cookie 0 (a rewind reads them again); d_next is k + 1.
TrapCode fd_readdir(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || !f->directory()) RET(kBadf);
  if (!f->has(kRightFdReaddir)) RET(kNotcapable);
  const uint64_t buf = U32(1), len = U32(2), cookie = s[3];
  if (!c.in(buf, len)) RET(kFault);
  if (cookie == 0 || !f->listed)
    if (uint32_t e = list(*f); e != kSuccess) RET(e);
  struct stat self {};
  if (::fstat(f->host, &self) != 0) RET(errno_from_host(errno));
  uint64_t used = 0;
  for (uint64_t k = cookie; k < f->entries.size() + 2 && used < len; ++k) {
    // ".." gets the directory's own inode, as wasmtime's: the parent of a
    // preopen is none of the program's business.
    const Context::Fd::Entry dot{k == 0 ? "." : "..", uint64_t(self.st_ino), kFiletypeDirectory};
    const Context::Fd::Entry& e = k < 2 ? dot : f->entries[k - 2];
    uint8_t head[kDirentSize] = {};
    const uint64_t next = k + 1, ino = e.ino;
    const uint32_t namlen = uint32_t(e.name.size());
    std::memcpy(head, &next, 8);
    std::memcpy(head + 8, &ino, 8);
    std::memcpy(head + 16, &namlen, 4);
    head[20] = e.type;
    // The last entry may be cut short: a full buffer tells the program to
    // call again from its cookie.
    const uint64_t h = std::min<uint64_t>(kDirentSize, len - used);
    c.put(buf + used, head, h);
    used += h;
    const uint64_t n = std::min<uint64_t>(namlen, len - used);
    c.put(buf + used, e.name.data(), n);
    used += n;
  }
  RET(c.put_le<uint32_t>(U32(4), uint32_t(used)) ? kSuccess : kFault);
}

TrapCode fd_prestat_get(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->preopen.empty()) RET(kBadf);
  uint8_t b[8] = {};  // tag 0 (a directory), name length at 4
  const uint32_t len = uint32_t(f->preopen.size());
  std::memcpy(b + 4, &len, 4);
  RET(c.put(U32(1), b, sizeof b) ? kSuccess : kFault);
}

// EBADF for any descriptor but a preopen (wasmtime: ENOTDIR for an open
// one; the device answers for descriptors it cannot tell open from closed).
TrapCode fd_prestat_dir_name(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->preopen.empty()) RET(kBadf);
  if (U32(2) < f->preopen.size()) RET(kNametoolong);
  RET(c.put(U32(1), f->preopen.data(), f->preopen.size()) ? kSuccess : kFault);
}

#undef RET
#undef U32

}  // namespace

const std::vector<CallInfo>& fd_calls() {
  const ValType I = kI32, L = kI64;
  static const std::vector<CallInfo> table = {
      {"fd_advise", sig({I, L, L, I}), fd_advise},
      {"fd_allocate", sig({I, L, L}), fd_allocate},
      {"fd_close", sig({I}), fd_close},
      {"fd_datasync", sig({I}), fd_sync<true>},
      {"fd_fdstat_get", sig({I, I}), fd_fdstat_get},
      {"fd_fdstat_set_flags", sig({I, I}), fd_fdstat_set_flags},
      {"fd_fdstat_set_rights", sig({I, L, L}), fd_fdstat_set_rights},
      {"fd_filestat_get", sig({I, I}), fd_filestat_get},
      {"fd_filestat_set_size", sig({I, L}), fd_filestat_set_size},
      {"fd_filestat_set_times", sig({I, L, L, I}), fd_filestat_set_times},
      {"fd_pread", sig({I, I, I, L, I}), fd_pread},
      {"fd_prestat_get", sig({I, I}), fd_prestat_get},
      {"fd_prestat_dir_name", sig({I, I, I}), fd_prestat_dir_name},
      {"fd_pwrite", sig({I, I, I, L, I}), fd_pwrite},
      {"fd_read", sig({I, I, I, I}), fd_read},
      {"fd_readdir", sig({I, I, I, L, I}), fd_readdir},
      {"fd_renumber", sig({I, I}), fd_renumber},
      {"fd_seek", sig({I, L, I, I}), fd_seek},
      {"fd_sync", sig({I}), fd_sync<false>},
      {"fd_tell", sig({I, I}), fd_tell},
      {"fd_write", sig({I, I, I, I}), fd_write},
  };
  return table;
}

}  // namespace ww::wasi
