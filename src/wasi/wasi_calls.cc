// The WASI calls themselves, over CallContext's checked guest memory.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wasi/wasi_internal.h"

namespace ww::wasi {

uint8_t filetype_of(mode_t m) {
  if (S_ISREG(m)) return kFiletypeRegularFile;
  if (S_ISDIR(m)) return kFiletypeDirectory;
  if (S_ISCHR(m)) return kFiletypeCharacterDevice;
  if (S_ISBLK(m)) return kFiletypeBlockDevice;
  if (S_ISLNK(m)) return kFiletypeSymbolicLink;
  if (S_ISSOCK(m)) return kFiletypeSocketStream;
  return kFiletypeUnknown;
}

namespace {

uint64_t ns_of(const timespec& t) { return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec); }

// filestat: dev, ino, filetype, nlink, size, atim, mtim, ctim.
void filestat_bytes(const struct stat& st, uint8_t b[kFilestatSize]) {
  std::memset(b, 0, kFilestatSize);
  auto u64 = [&](size_t off, uint64_t v) { std::memcpy(b + off, &v, 8); };
  u64(0, st.st_dev);
  u64(8, st.st_ino);
  b[16] = filetype_of(st.st_mode);
  u64(24, st.st_nlink);
  u64(32, uint64_t(st.st_size));
  u64(40, ns_of(st.st_atim));
  u64(48, ns_of(st.st_mtim));
  u64(56, ns_of(st.st_ctim));
}

uint32_t put_filestat(const CallContext& c, uint64_t ptr, const struct stat& st) {
  uint8_t b[kFilestatSize];
  filestat_bytes(st, b);
  return c.put(ptr, b, sizeof b) ? kSuccess : kFault;
}

// A guest path, relative to its directory fd: absolute ones are refused
// here, `..` and links that leave the preopen by the kernel.
uint32_t open_beneath(int dir, const std::string& path, uint64_t flags, int& out) {
  if (path.empty()) return kNoent;
  if (path[0] == '/') return kNotcapable;
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  if (flags & O_CREAT) how.mode = 0644;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how);
  if (fd < 0) return errno == EXDEV ? kNotcapable : errno_from_host(errno);
  out = int(fd);
  return kSuccess;
}

bool read_path(const CallContext& c, uint64_t ptr, uint64_t len, std::string& out) {
  const uint8_t* p = c.read(ptr, len);
  if (!p) return false;
  out.assign(reinterpret_cast<const char*>(p), len);
  return true;
}

// args_get / environ_get: pointers to NUL-terminated strings, and the strings.
uint32_t put_strings(const CallContext& c, const std::vector<std::string>& v, uint64_t ptrs, uint64_t buf) {
  for (const std::string& s : v) {
    if (!c.put_le<uint32_t>(ptrs, uint32_t(buf)) || !c.put(buf, s.c_str(), s.size() + 1)) return kFault;
    ptrs += 4;
    buf += s.size() + 1;
  }
  return kSuccess;
}

uint32_t put_sizes(const CallContext& c, const std::vector<std::string>& v, uint64_t count_ptr, uint64_t size_ptr) {
  uint64_t bytes = 0;
  for (const std::string& s : v) bytes += s.size() + 1;
  return c.put_le<uint32_t>(count_ptr, uint32_t(v.size())) && c.put_le<uint32_t>(size_ptr, uint32_t(bytes)) ? kSuccess
                                                                                                            : kFault;
}

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

clockid_t host_clock(uint32_t id, bool& ok) {
  ok = true;
  switch (id) {
    case kClockRealtime: return CLOCK_REALTIME;
    case kClockMonotonic: return CLOCK_MONOTONIC;
    case kClockProcessCputime: return CLOCK_PROCESS_CPUTIME_ID;
    case kClockThreadCputime: return CLOCK_THREAD_CPUTIME_ID;
  }
  ok = false;
  return CLOCK_REALTIME;
}

ssize_t write_all(int fd, const uint8_t* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::write(fd, p + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return done ? ssize_t(done) : -1;
    done += size_t(w);
  }
  return ssize_t(done);
}

}  // namespace

namespace {

// A read_file/write_file path: the preopen whose guest name is its leading
// component(s) (the longest such), and the rest beneath it.
const Context::Fd* preopen_of(const std::vector<std::unique_ptr<Context::Fd>>& fds, const std::string& path,
                              std::string& rest) {
  const Context::Fd* best = nullptr;
  size_t best_len = 0;
  for (size_t k = 3; k < fds.size(); ++k) {
    const Context::Fd* f = fds[k].get();
    if (!f || f->preopen.empty() || f->filetype != kFiletypeDirectory) continue;
    const std::string& g = f->preopen;
    const bool match =
        path == g || (path.size() > g.size() && path.compare(0, g.size(), g) == 0 && path[g.size()] == '/');
    if (match && g.size() > best_len) {
      best = f;
      best_len = g.size();
    }
  }
  if (best) rest = best_len < path.size() ? path.substr(best_len + 1) : ".";
  return best;
}

// The NUL-terminated path at `ptr` (at most 4096 bytes); kFault when it
// leaves memory or has no NUL, kSuccess with `ok` false when its bytes are
// not at hand yet.
uint32_t guest_path(GuestMemory* mem, uint32_t ptr, std::string& out, bool& ok) {
  ok = false;
  if (!mem || ptr >= mem->size()) return kFault;
  const uint64_t len = std::min<uint64_t>(4096, mem->size() - ptr);
  const uint8_t* p = mem->read(ptr, len);
  if (!p) return kSuccess;
  const void* nul = std::memchr(p, 0, len);
  if (!nul) return kFault;
  out.assign(reinterpret_cast<const char*>(p), static_cast<const uint8_t*>(nul) - p);
  ok = true;
  return kSuccess;
}

}  // namespace

int32_t Context::read_file(GuestMemory* mem, uint32_t path_ptr, uint32_t buf, uint32_t len) {
  std::string path, rest;
  bool ok = false;
  if (uint32_t e = guest_path(mem, path_ptr, path, ok); e != kSuccess || !ok) return -int32_t(e);
  if (!mem->in(buf, len)) return -int32_t(kFault);
  const Fd* dir = preopen_of(fds_, path, rest);
  if (!dir) return -int32_t(kNotcapable);
  int host = -1;
  if (uint32_t e = open_beneath(dir->host, rest, O_RDONLY, host); e != kSuccess) return -int32_t(e);
  uint8_t* p = mem->window(buf, len);
  uint64_t done = 0;
  while (done < len) {
    const ssize_t r = ::read(host, p + done, len - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int e = errno;
      ::close(host);
      if (done) break;
      return -int32_t(errno_from_host(e));
    }
    if (r == 0) break;
    done += uint64_t(r);
  }
  ::close(host);
  mem->written(buf, done);
  return int32_t(std::min<uint64_t>(done, INT32_MAX));
}

int32_t Context::write_file(GuestMemory* mem, uint32_t path_ptr, uint32_t buf, uint32_t len) {
  std::string path, rest;
  bool ok = false;
  if (uint32_t e = guest_path(mem, path_ptr, path, ok); e != kSuccess || !ok) return -int32_t(e);
  if (!mem->in(buf, len)) return -int32_t(kFault);
  // Every byte is at hand before anything changes on disk.
  const uint8_t* src = len ? mem->read(buf, len) : reinterpret_cast<const uint8_t*>("");
  if (!src) return 0;
  const Fd* dir = preopen_of(fds_, path, rest);
  if (!dir) return -int32_t(kNotcapable);
  if (!dir->writable) return -int32_t(kNotcapable);
  int host = -1;
  if (uint32_t e = open_beneath(dir->host, rest, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, host); e != kSuccess)
    return -int32_t(e);
  const ssize_t w = write_all(host, src, len);
  const int e = errno;
  ::close(host);
  if (w < 0) return -int32_t(errno_from_host(e));
  return int32_t(std::min<uint64_t>(uint64_t(w), INT32_MAX));
}

bool Context::filestat(uint32_t fd, uint8_t out[64]) const {
  const Fd* f = fd < fds_.size() ? fds_[fd].get() : nullptr;
  struct stat st {};
  if (!f || ::fstat(f->host, &st) != 0) return false;
  filestat_bytes(st, out);
  return true;
}

bool Context::fdstat(uint32_t fd, uint8_t out[24]) const {
  const Fd* f = fd < fds_.size() ? fds_[fd].get() : nullptr;
  if (!f) return false;
  std::memset(out, 0, kFdstatSize);
  out[0] = f->filetype;
  const int fl = ::fcntl(f->host, F_GETFL);
  const uint16_t flags = fl >= 0 && (fl & O_APPEND) ? uint16_t(kFdflagAppend) : 0;
  std::memcpy(out + 2, &flags, 2);
  // Every right: what a read-only preopen refuses, path_open refuses.
  std::memcpy(out + 8, &kRightsAll, 8);
  std::memcpy(out + 16, &kRightsAll, 8);
  return true;
}

ssize_t write_capped(Context::Fd& f, const uint8_t* p, size_t n, bool& capped) {
  if (f.cap == 0) {
    capped = true;
    errno = EFBIG;
    return -1;
  }
  if (n > f.cap) {
    capped = true;
    n = size_t(f.cap);
  }
  ssize_t w = ssize_t(n);
  if (f.sink) f.sink->append(reinterpret_cast<const char*>(p), n);
  else if (f.host >= 0) w = write_all(f.host, p, n);
  if (w > 0 && f.cap != ~uint64_t{0}) f.cap -= uint64_t(w);
  return w;
}

namespace {

#define RET(e)             \
  do {                     \
    s[0] = uint32_t(e);    \
    return TrapCode::None; \
  } while (0)
#define U32(k) uint32_t(s[k])

TrapCode args_get(const CallContext& c, uint64_t* s) { RET(put_strings(c, c.config().args, U32(0), U32(1))); }
TrapCode args_sizes_get(const CallContext& c, uint64_t* s) { RET(put_sizes(c, c.config().args, U32(0), U32(1))); }
TrapCode environ_get(const CallContext& c, uint64_t* s) { RET(put_strings(c, c.config().env, U32(0), U32(1))); }
TrapCode environ_sizes_get(const CallContext& c, uint64_t* s) { RET(put_sizes(c, c.config().env, U32(0), U32(1))); }

TrapCode clock_res_get(const CallContext& c, uint64_t* s) {
  bool ok;
  clockid_t id = host_clock(U32(0), ok);
  timespec t{};
  if (!ok) RET(kInval);
  if (clock_getres(id, &t) != 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(1), ns_of(t)) ? kSuccess : kFault);
}

TrapCode clock_time_get(const CallContext& c, uint64_t* s) {
  bool ok;
  clockid_t id = host_clock(U32(0), ok);
  timespec t{};
  if (!ok) RET(kInval);
  if (clock_gettime(id, &t) != 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(2), ns_of(t)) ? kSuccess : kFault);
}

TrapCode random_get(const CallContext& c, uint64_t* s) {
  const uint64_t buf = U32(0), len = U32(1);
  if (!c.in(buf, len)) RET(kFault);
  uint8_t* p = c.mem->window(buf, len);
  if (c.seeded_random(p, len)) {
    c.mem->written(buf, len);
    RET(kSuccess);
  }
  for (uint64_t done = 0; done < len;) {
    ssize_t n = getrandom(p + done, len - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) RET(errno_from_host(errno));
    done += uint64_t(n);
  }
  c.mem->written(buf, len);
  RET(kSuccess);
}

TrapCode fd_write(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->filetype == kFiletypeDirectory) RET(kBadf);
  RET(scatter(c, U32(1), U32(2), false, U32(3), [&](uint8_t* p, size_t n) -> ssize_t {
    bool capped = false;
    const ssize_t w = write_capped(*f, p, n, capped);
    if (capped) c.note_capped();
    return w;
  }));
}

TrapCode fd_read(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  if (f->filetype == kFiletypeDirectory) RET(kIsdir);
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
  if (!f) RET(kBadf);
  if (f->filetype == kFiletypeDirectory) RET(kIsdir);
  const int host = f->host;
  off_t at = off_t(s[3]);
  RET(scatter(c, U32(1), U32(2), true, U32(4), [&](uint8_t* p, size_t n) {
    ssize_t r = ::pread(host, p, n, at);
    if (r > 0) at += r;
    return r;
  }));
}

TrapCode fd_seek(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  const uint32_t whence = U32(2);
  if (whence > kWhenceEnd) RET(kInval);
  const int how[] = {SEEK_SET, SEEK_CUR, SEEK_END};
  off_t r = ::lseek(f->host, off_t(int64_t(s[1])), how[whence]);
  if (r < 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(3), uint64_t(r)) ? kSuccess : kFault);
}

TrapCode fd_tell(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  off_t r = ::lseek(f->host, 0, SEEK_CUR);
  if (r < 0) RET(errno_from_host(errno));
  RET(c.put_le<uint64_t>(U32(1), uint64_t(r)) ? kSuccess : kFault);
}

TrapCode fd_close(const CallContext& c, uint64_t* s) {
  if (!c.fd(U32(0))) RET(kBadf);
  c.close_fd(U32(0));
  RET(kSuccess);
}

TrapCode fd_fdstat_get(const CallContext& c, uint64_t* s) {
  uint8_t b[kFdstatSize] = {};
  if (!c.cx.fdstat(U32(0), b)) RET(kBadf);
  RET(c.put(U32(1), b, sizeof b) ? kSuccess : kFault);
}

TrapCode fd_filestat_get(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  struct stat st {};
  if (::fstat(f->host, &st) != 0) RET(errno_from_host(errno));
  RET(put_filestat(c, U32(1), st));
}

TrapCode fd_prestat_get(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->preopen.empty()) RET(kBadf);
  uint8_t b[8] = {};  // tag 0 (a directory), name length at 4
  const uint32_t len = uint32_t(f->preopen.size());
  std::memcpy(b + 4, &len, 4);
  RET(c.put(U32(1), b, sizeof b) ? kSuccess : kFault);
}

TrapCode fd_prestat_dir_name(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f || f->preopen.empty()) RET(kBadf);
  if (U32(2) < f->preopen.size()) RET(kNametoolong);
  RET(c.put(U32(1), f->preopen.data(), f->preopen.size()) ? kSuccess : kFault);
}

TrapCode fd_readdir(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  if (f->filetype != kFiletypeDirectory) RET(kNotdir);
  if (!f->listed) {
    // "." and ".." left out, as node's WASI does.
    int dup = ::fcntl(f->host, F_DUPFD_CLOEXEC, 0);
    DIR* d = dup >= 0 ? ::fdopendir(dup) : nullptr;
    if (!d) {
      if (dup >= 0) ::close(dup);
      RET(errno_from_host(errno));
    }
    ::rewinddir(d);
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      f->entries.push_back({e->d_name, uint64_t(e->d_ino), e->d_type});
    }
    ::closedir(d);
    f->listed = true;
  }
  const uint64_t buf = U32(1), len = U32(2);
  if (!c.in(buf, len)) RET(kFault);
  uint64_t used = 0;
  for (uint64_t k = s[3]; k < f->entries.size() && used < len; ++k) {
    const Context::Fd::Entry& e = f->entries[k];
    uint8_t head[kDirentSize] = {};
    const uint64_t next = k + 1, ino = e.ino;
    const uint32_t namlen = uint32_t(e.name.size());
    std::memcpy(head, &next, 8);
    std::memcpy(head + 8, &ino, 8);
    std::memcpy(head + 16, &namlen, 4);
    head[20] = e.type == DT_DIR   ? kFiletypeDirectory
               : e.type == DT_REG ? kFiletypeRegularFile
               : e.type == DT_LNK ? kFiletypeSymbolicLink
                                  : kFiletypeUnknown;
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

TrapCode path_open(const CallContext& c, uint64_t* s) {
  Context::Fd* dir = c.fd(U32(0));
  if (!dir) RET(kBadf);
  if (dir->filetype != kFiletypeDirectory) RET(kNotdir);
  std::string path;
  if (!read_path(c, U32(2), U32(3), path)) RET(kFault);
  const uint32_t oflags = U32(4), fdflags = U32(7);
  const bool write = s[5] & kRightFdWrite, read = s[5] & kRightFdRead;
  // Creating, truncating, writing or appending only beneath a writable
  // preopen.
  const bool changes = (oflags & (kOflagCreat | kOflagTrunc | kOflagExcl)) || write || (fdflags & kFdflagAppend);
  if (changes && !dir->writable) RET(kNotcapable);
  uint64_t flags = write && read ? O_RDWR : write ? O_WRONLY : O_RDONLY;
  if (oflags & kOflagCreat) flags |= O_CREAT;
  if (oflags & kOflagExcl) flags |= O_EXCL;
  if (oflags & kOflagTrunc) flags |= O_TRUNC;
  if (fdflags & kFdflagAppend) flags |= O_APPEND;
  if (oflags & kOflagDirectory) flags = O_RDONLY | O_DIRECTORY;
  if (!(U32(1) & 1)) flags |= O_NOFOLLOW;  // lookupflags.symlink_follow
  int host = -1;
  if (uint32_t e = open_beneath(dir->host, path, flags, host); e != kSuccess) RET(e);
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->owned = true;
  f->writable = dir->writable;
  struct stat st {};
  f->filetype = ::fstat(host, &st) == 0 ? filetype_of(st.st_mode) : uint8_t(kFiletypeUnknown);
  const uint32_t fd = c.add_fd(std::move(f));
  RET(c.put_le<uint32_t>(U32(8), fd) ? kSuccess : kFault);
}

TrapCode path_filestat_get(const CallContext& c, uint64_t* s) {
  Context::Fd* dir = c.fd(U32(0));
  if (!dir) RET(kBadf);
  if (dir->filetype != kFiletypeDirectory) RET(kNotdir);
  std::string path;
  if (!read_path(c, U32(2), U32(3), path)) RET(kFault);
  int host = -1;
  const uint64_t flags = O_PATH | ((U32(1) & 1) ? 0 : O_NOFOLLOW);
  if (uint32_t e = open_beneath(dir->host, path, flags, host); e != kSuccess) RET(e);
  struct stat st {};
  const int r = ::fstat(host, &st);
  const int err = errno;
  ::close(host);
  if (r != 0) RET(errno_from_host(err));
  RET(put_filestat(c, U32(4), st));
}

// The directory a path's last component lives in, resolved beneath `dir`
// (an O_PATH fd the caller closes), and that component: for the calls that
// make, remove or rename a name. "." and ".." as the name are refused.
uint32_t parent_of(const Context::Fd& dir, const std::string& path, int& parent, std::string& name) {
  const size_t slash = path.find_last_of('/');
  name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") return kInval;
  return open_beneath(dir.host, slash == std::string::npos ? "." : path.substr(0, slash + 1) + ".",
                      O_PATH | O_DIRECTORY, parent);
}

// A call on one path beneath a writable directory fd: op(parent, name).
template <class Op>
uint32_t on_name(const CallContext& c, uint64_t* s, Op&& op) {
  Context::Fd* dir = c.fd(U32(0));
  if (!dir) return kBadf;
  if (dir->filetype != kFiletypeDirectory) return kNotdir;
  if (!dir->writable) return kNotcapable;
  std::string path, name;
  if (!read_path(c, U32(1), U32(2), path)) return kFault;
  int parent = -1;
  if (uint32_t e = parent_of(*dir, path, parent, name); e != kSuccess) return e;
  const int r = op(parent, name.c_str());
  const int err = errno;
  ::close(parent);
  return r == 0 ? kSuccess : errno_from_host(err);
}

TrapCode path_create_directory(const CallContext& c, uint64_t* s) {
  RET(on_name(c, s, [](int p, const char* n) { return ::mkdirat(p, n, 0755); }));
}
TrapCode path_unlink_file(const CallContext& c, uint64_t* s) {
  RET(on_name(c, s, [](int p, const char* n) { return ::unlinkat(p, n, 0); }));
}
TrapCode path_remove_directory(const CallContext& c, uint64_t* s) {
  RET(on_name(c, s, [](int p, const char* n) { return ::unlinkat(p, n, AT_REMOVEDIR); }));
}

TrapCode path_rename(const CallContext& c, uint64_t* s) {
  Context::Fd* from = c.fd(U32(0));
  Context::Fd* to = c.fd(U32(3));
  if (!from || !to) RET(kBadf);
  if (from->filetype != kFiletypeDirectory || to->filetype != kFiletypeDirectory) RET(kNotdir);
  if (!from->writable || !to->writable) RET(kNotcapable);
  std::string old_path, new_path, old_name, new_name;
  if (!read_path(c, U32(1), U32(2), old_path) || !read_path(c, U32(4), U32(5), new_path)) RET(kFault);
  int old_parent = -1, new_parent = -1;
  if (uint32_t e = parent_of(*from, old_path, old_parent, old_name); e != kSuccess) RET(e);
  if (uint32_t e = parent_of(*to, new_path, new_parent, new_name); e != kSuccess) {
    ::close(old_parent);
    RET(e);
  }
  const int r = ::renameat(old_parent, old_name.c_str(), new_parent, new_name.c_str());
  const int err = errno;
  ::close(old_parent);
  ::close(new_parent);
  RET(r == 0 ? kSuccess : errno_from_host(err));
}

TrapCode fd_filestat_set_size(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  if (!f->writable) RET(kNotcapable);
  RET(::ftruncate(f->host, off_t(s[1])) == 0 ? kSuccess : errno_from_host(errno));
}

TrapCode fd_sync(const CallContext& c, uint64_t* s) {
  Context::Fd* f = c.fd(U32(0));
  if (!f) RET(kBadf);
  RET(f->sink || f->host < 0 || ::fsync(f->host) == 0 || errno == EINVAL ? kSuccess : errno_from_host(errno));
}

TrapCode proc_exit(const CallContext& c, uint64_t* s) {
  c.exit(U32(0));
  return TrapCode::Exit;
}

TrapCode sched_yield_call(const CallContext&, uint64_t* s) {
  ::sched_yield();
  RET(kSuccess);
}

// Clock subscriptions sleep until the earliest; any other kind gets its
// event with ENOSYS.
TrapCode poll_oneoff(const CallContext& c, uint64_t* s) {
  const uint64_t in = U32(0), out = U32(1), n = U32(2);
  if (n == 0) RET(kInval);
  if (!c.in(in, n * kSubscriptionSize) || !c.in(out, n * kEventSize)) RET(kFault);
  const uint8_t* subs = c.read(in, n * kSubscriptionSize);
  if (!subs) RET(kFault);
  uint64_t earliest = ~uint64_t{0};
  for (uint64_t k = 0; k < n; ++k) {
    const uint8_t* sub = subs + k * kSubscriptionSize;
    if (sub[8] != kEventClock) continue;
    uint32_t id;
    uint64_t timeout;
    uint16_t flags;
    std::memcpy(&id, sub + 16, 4);
    std::memcpy(&timeout, sub + 24, 8);
    std::memcpy(&flags, sub + 40, 2);
    bool ok;
    clockid_t clk = host_clock(id, ok);
    if (!ok) continue;
    if (flags & 1) {  // absolute
      timespec now{};
      clock_gettime(clk, &now);
      timeout = timeout > ns_of(now) ? timeout - ns_of(now) : 0;
    }
    earliest = std::min(earliest, timeout);
  }
  if (earliest != ~uint64_t{0}) {
    timespec t{time_t(earliest / 1000000000ull), long(earliest % 1000000000ull)};
    while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
  }
  uint32_t events = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const uint8_t* sub = subs + k * kSubscriptionSize;
    uint8_t ev[kEventSize] = {};
    std::memcpy(ev, sub, 8);  // userdata
    const uint16_t err = sub[8] == kEventClock ? 0 : uint16_t(kNosys);
    std::memcpy(ev + 8, &err, 2);
    ev[10] = sub[8];
    c.put(out + uint64_t(events) * kEventSize, ev, sizeof ev);
    ++events;
  }
  RET(c.put_le<uint32_t>(U32(3), events) ? kSuccess : kFault);
}

#undef RET
#undef U32

FuncType sig(std::initializer_list<ValType> params, bool errno_result = true) {
  FuncType t;
  t.params = params;
  if (errno_result) t.results = {ValType::I32};
  return t;
}

constexpr ValType I = ValType::I32, L = ValType::I64;

const std::vector<CallInfo>& calls() {
  static const std::vector<CallInfo> table = {
      {"args_get", sig({I, I}), args_get},
      {"args_sizes_get", sig({I, I}), args_sizes_get},
      {"environ_get", sig({I, I}), environ_get},
      {"environ_sizes_get", sig({I, I}), environ_sizes_get},
      {"clock_res_get", sig({I, I}), clock_res_get},
      {"clock_time_get", sig({I, L, I}), clock_time_get},
      {"fd_close", sig({I}), fd_close},
      {"fd_fdstat_get", sig({I, I}), fd_fdstat_get},
      {"fd_datasync", sig({I}), fd_sync},
      {"fd_filestat_get", sig({I, I}), fd_filestat_get},
      {"fd_filestat_set_size", sig({I, L}), fd_filestat_set_size},
      {"fd_pread", sig({I, I, I, L, I}), fd_pread},
      {"fd_prestat_get", sig({I, I}), fd_prestat_get},
      {"fd_prestat_dir_name", sig({I, I, I}), fd_prestat_dir_name},
      {"fd_read", sig({I, I, I, I}), fd_read},
      {"fd_readdir", sig({I, I, I, L, I}), fd_readdir},
      {"fd_seek", sig({I, L, I, I}), fd_seek},
      {"fd_sync", sig({I}), fd_sync},
      {"fd_tell", sig({I, I}), fd_tell},
      {"fd_write", sig({I, I, I, I}), fd_write},
      {"path_create_directory", sig({I, I, I}), path_create_directory},
      {"path_filestat_get", sig({I, I, I, I, I}), path_filestat_get},
      {"path_open", sig({I, I, I, I, I, L, L, I, I}), path_open},
      {"path_remove_directory", sig({I, I, I}), path_remove_directory},
      {"path_rename", sig({I, I, I, I, I, I}), path_rename},
      {"path_unlink_file", sig({I, I, I}), path_unlink_file},
      {"poll_oneoff", sig({I, I, I, I}), poll_oneoff},
      {"proc_exit", sig({I}, false), proc_exit},
      {"random_get", sig({I, I}), random_get},
      {"sched_yield", sig({}), sched_yield_call},
  };
  return table;
}

}  // namespace

const CallInfo* find_call(const std::string& name) {
  for (const CallInfo& c : calls())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace ww::wasi
