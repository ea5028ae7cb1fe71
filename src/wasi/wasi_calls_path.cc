// The path_* calls: every path resolves beneath its directory descriptor
// (openat2's RESOLVE_BENEATH), the last component with the kernel's own
// rules for trailing slashes, and only beneath a writable preopen may a
// call change anything.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "wasi/wasi_internal.h"

namespace ww::wasi {

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

namespace {

// Well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF), as a Rust str must be.
bool utf8(const uint8_t* p, size_t n) {
  for (size_t k = 0; k < n;) {
    const uint8_t b = p[k];
    if (b < 0x80) {
      ++k;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((b & 0xE0) == 0xC0) len = 2, cp = b & 0x1F, min = 0x80;
    else if ((b & 0xF0) == 0xE0) len = 3, cp = b & 0x0F, min = 0x800;
    else if ((b & 0xF8) == 0xF0) len = 4, cp = b & 0x07, min = 0x10000;
    else return false;
    if (n - k < len) return false;
    for (size_t j = 1; j < len; ++j) {
      if ((p[k + j] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (p[k + j] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    k += len;
  }
  return true;
}

}  // namespace

uint32_t read_path(const CallContext& c, uint64_t ptr, uint64_t len, std::string& out) {
  const uint8_t* p = c.read(ptr, len);
  if (!p) return kFault;
  if (!utf8(p, len)) return kIlseq;
  if (std::memchr(p, 0, len)) return kInval;
  out.assign(reinterpret_cast<const char*>(p), len);
  return kSuccess;
}

bool utimes_of(uint64_t atim, uint64_t mtim, uint32_t fst, timespec ts[2]) {
  if (fst & ~uint32_t(kFstAtim | kFstAtimNow | kFstMtim | kFstMtimNow)) return false;
  if ((fst & kFstAtim) && (fst & kFstAtimNow)) return false;
  if ((fst & kFstMtim) && (fst & kFstMtimNow)) return false;
  auto one = [](uint64_t t, bool set, bool now) {
    timespec r{};
    r.tv_nsec = now ? UTIME_NOW : set ? long(t % 1000000000ull) : UTIME_OMIT;
    if (set && !now) r.tv_sec = time_t(t / 1000000000ull);
    return r;
  };
  ts[0] = one(atim, fst & kFstAtim, fst & kFstAtimNow);
  ts[1] = one(mtim, fst & kFstMtim, fst & kFstMtimNow);
  return true;
}

namespace {

#define RET(e) return ret(s, (e))
#define U32(k) uint32_t(s[k])

// The directory descriptor of a path call: EBADF for anything else (a
// file, stdio, a closed number), as wasmtime.
uint32_t dir_of(const CallContext& c, uint64_t n, uint64_t right, Context::Fd*& dir) {
  dir = c.fd(n);
  if (!dir || !dir->directory()) return kBadf;
  return dir->has(right) ? kSuccess : kNotcapable;
}

// The directory a path's last component lives in, resolved beneath `dir`
// (an O_PATH descriptor the caller closes), and that component with its
// trailing slashes, which the kernel then judges as it would for a native
// program (ENOTDIR for a file, ENOENT for a name that is not there). A last
// component "." or ".." stays as it is: the kernel never makes, removes,
// links or renames those (EEXIST, EISDIR, EBUSY, ...), so nothing outside
// is touched.
uint32_t parent_of(int dir, const std::string& path, int& parent, std::string& name) {
  if (path.empty()) return kNoent;
  if (path[0] == '/') return kNotcapable;
  size_t end = path.size();
  while (end > 0 && path[end - 1] == '/') --end;
  const size_t slash = path.find_last_of('/', end - 1);
  name = slash == std::string::npos ? path : path.substr(slash + 1);
  return open_beneath(dir, slash == std::string::npos ? "." : path.substr(0, slash + 1), O_PATH | O_DIRECTORY, parent);
}

// A call that changes one name beneath a directory: op(parent, name).
template <class Op>
uint32_t on_name(const CallContext& c, uint64_t fd, uint64_t right, uint64_t ptr, uint64_t len, Op&& op) {
  Context::Fd* dir = nullptr;
  if (uint32_t e = dir_of(c, fd, right, dir); e != kSuccess) return e;
  std::string path, name;
  if (uint32_t e = read_path(c, ptr, len, path); e != kSuccess) return e;
  if (!dir->writable) return kNotcapable;
  int parent = -1;
  if (uint32_t e = parent_of(dir->host, path, parent, name); e != kSuccess) return e;
  const int r = op(parent, name.c_str());
  const int err = errno;
  ::close(parent);
  return r == 0 ? kSuccess : errno_from_host(err);
}

TrapCode path_create_directory(const CallContext& c, uint64_t* s) {
  RET(on_name(c, U32(0), kRightPathCreateDirectory, U32(1), U32(2),
              [](int p, const char* n) { return ::mkdirat(p, n, 0755); }));
}
TrapCode path_unlink_file(const CallContext& c, uint64_t* s) {
  RET(on_name(c, U32(0), kRightPathUnlinkFile, U32(1), U32(2),
              [](int p, const char* n) { return ::unlinkat(p, n, 0); }));
}
TrapCode path_remove_directory(const CallContext& c, uint64_t* s) {
  RET(on_name(c, U32(0), kRightPathRemoveDirectory, U32(1), U32(2),
              [](int p, const char* n) { return ::unlinkat(p, n, AT_REMOVEDIR); }));
}

TrapCode path_symlink(const CallContext& c, uint64_t* s) {
  Context::Fd* dir = nullptr;
  if (uint32_t e = dir_of(c, U32(2), kRightPathSymlink, dir); e != kSuccess) RET(e);
  std::string target;
  if (uint32_t e = read_path(c, U32(0), U32(1), target); e != kSuccess) RET(e);
  // A link to an absolute path could lead a program outside the sandbox
  // that later follows it out of the preopen (wasmtime refuses it too);
  // a relative one is checked whenever it is followed.
  if (!target.empty() && target[0] == '/') RET(kPerm);
  RET(on_name(c, U32(2), kRightPathSymlink, U32(3), U32(4),
              [&](int p, const char* n) { return ::symlinkat(target.c_str(), p, n); }));
}

TrapCode path_readlink(const CallContext& c, uint64_t* s) {
  Context::Fd* dir = nullptr;
  if (uint32_t e = dir_of(c, U32(0), kRightPathReadlink, dir); e != kSuccess) RET(e);
  std::string path, name;
  if (uint32_t e = read_path(c, U32(1), U32(2), path); e != kSuccess) RET(e);
  const uint64_t buf = U32(3), len = U32(4);
  if (!c.in(buf, len)) RET(kFault);
  int parent = -1;
  if (uint32_t e = parent_of(dir->host, path, parent, name); e != kSuccess) RET(e);
  char target[4096];
  const ssize_t n = ::readlinkat(parent, name.c_str(), target, sizeof target);
  const int err = errno;
  ::close(parent);
  if (n < 0) RET(errno_from_host(err));
  // Where a link outside leads is not the program's to know (wasmtime).
  if (n > 0 && target[0] == '/') RET(kPerm);
  if (!utf8(reinterpret_cast<const uint8_t*>(target), size_t(n))) RET(kIlseq);
  const uint64_t used = std::min<uint64_t>(uint64_t(n), len);
  if (!c.put(buf, target, used)) RET(kFault);
  RET(c.put_le<uint32_t>(U32(5), uint32_t(used)) ? kSuccess : kFault);
}

// `op` (linkat, renameat) from the name of `old_path` beneath `from` to the
// name of `new_path` beneath `to`, each in its parent directory, which it
// opens and closes: path_link and path_rename.
template <class Op>
uint32_t between_parents(const Context::Fd& from, const std::string& old_path, const Context::Fd& to,
                         const std::string& new_path, Op op) {
  int old_parent = -1, new_parent = -1;
  std::string old_name, new_name;
  if (uint32_t e = parent_of(from.host, old_path, old_parent, old_name); e != kSuccess) return e;
  if (uint32_t e = parent_of(to.host, new_path, new_parent, new_name); e != kSuccess) {
    ::close(old_parent);
    return e;
  }
  const int r = op(old_parent, old_name.c_str(), new_parent, new_name.c_str());
  const int err = errno;
  ::close(old_parent);
  ::close(new_parent);
  return r == 0 ? kSuccess : errno_from_host(err);
}

TrapCode path_link(const CallContext& c, uint64_t* s) {
  Context::Fd *from = nullptr, *to = nullptr;
  if (uint32_t e = dir_of(c, U32(0), kRightPathLinkSource, from); e != kSuccess) RET(e);
  if (uint32_t e = dir_of(c, U32(4), kRightPathLinkTarget, to); e != kSuccess) RET(e);
  std::string old_path, new_path;
  if (uint32_t e = read_path(c, U32(2), U32(3), old_path); e != kSuccess) RET(e);
  if (uint32_t e = read_path(c, U32(5), U32(6), new_path); e != kSuccess) RET(e);
  if (!from->writable || !to->writable) RET(kNotcapable);
  // Following a link to the file to link is refused, as by wasmtime.
  if (U32(1) & kLookupSymlinkFollow) RET(kInval);
  RET(between_parents(*from, old_path, *to, new_path,
                      [](int op, const char* on, int np, const char* nn) { return ::linkat(op, on, np, nn, 0); }));
}

TrapCode path_rename(const CallContext& c, uint64_t* s) {
  Context::Fd *from = nullptr, *to = nullptr;
  if (uint32_t e = dir_of(c, U32(0), kRightPathRenameSource, from); e != kSuccess) RET(e);
  if (uint32_t e = dir_of(c, U32(3), kRightPathRenameTarget, to); e != kSuccess) RET(e);
  std::string old_path, new_path;
  if (uint32_t e = read_path(c, U32(1), U32(2), old_path); e != kSuccess) RET(e);
  if (uint32_t e = read_path(c, U32(4), U32(5), new_path); e != kSuccess) RET(e);
  if (!from->writable || !to->writable) RET(kNotcapable);
  RET(between_parents(*from, old_path, *to, new_path, ::renameat));
}

TrapCode path_filestat_get(const CallContext& c, uint64_t* s) {
  Context::Fd* dir = nullptr;
  if (uint32_t e = dir_of(c, U32(0), kRightPathFilestatGet, dir); e != kSuccess) RET(e);
  std::string path;
  if (uint32_t e = read_path(c, U32(2), U32(3), path); e != kSuccess) RET(e);
  int host = -1;
  const uint64_t flags = O_PATH | ((U32(1) & kLookupSymlinkFollow) ? 0 : O_NOFOLLOW);
  if (uint32_t e = open_beneath(dir->host, path, flags, host); e != kSuccess) RET(e);
  struct stat st {};
  const int r = ::fstat(host, &st);
  const int err = errno;
  ::close(host);
  if (r != 0) RET(errno_from_host(err));
  uint8_t b[kFilestatSize];
  filestat_bytes(st, b);
  RET(c.put(U32(4), b, sizeof b) ? kSuccess : kFault);
}

// Sets the times of what the O_PATH descriptor `fd` refers to (a symbolic
// link itself, when opened without following it).
int utimes_at(int fd, const timespec ts[2]) {
  if (::utimensat(fd, "", ts, AT_EMPTY_PATH) == 0) return 0;
  if (errno != EINVAL) return -1;
  // Kernels without AT_EMPTY_PATH here: through /proc, for what is not a link.
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  if (S_ISLNK(st.st_mode)) {
    errno = EINVAL;
    return -1;
  }
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::utimensat(AT_FDCWD, proc.c_str(), ts, 0);
}

TrapCode path_filestat_set_times(const CallContext& c, uint64_t* s) {
  timespec ts[2];
  if (!utimes_of(s[4], s[5], U32(6), ts)) RET(kInval);
  Context::Fd* dir = nullptr;
  if (uint32_t e = dir_of(c, U32(0), kRightPathFilestatSetTimes, dir); e != kSuccess) RET(e);
  std::string path;
  if (uint32_t e = read_path(c, U32(2), U32(3), path); e != kSuccess) RET(e);
  if (!dir->writable) RET(kNotcapable);
  int host = -1;
  const uint64_t flags = O_PATH | ((U32(1) & kLookupSymlinkFollow) ? 0 : O_NOFOLLOW);
  if (uint32_t e = open_beneath(dir->host, path, flags, host); e != kSuccess) RET(e);
  const int r = utimes_at(host, ts);
  const int err = errno;
  ::close(host);
  RET(r == 0 ? kSuccess : errno_from_host(err));
}

TrapCode path_open(const CallContext& c, uint64_t* s) {
  const uint32_t lookup = U32(1), oflags = U32(4), fdflags = U32(7);
  const uint64_t base = s[5], inheriting = s[6];
  std::string path;
  if (uint32_t e = read_path(c, U32(2), U32(3), path); e != kSuccess) RET(e);
  if ((lookup & ~kLookupSymlinkFollow) || (oflags & ~0xFu) || (fdflags & ~kFdflagsAll)) RET(kInval);
  Context::Fd* dir = c.fd(U32(0));
  if (!dir) RET(kBadf);
  if (!dir->directory()) RET(dir->stream ? kBadf : kNotdir);
  uint64_t need = kRightPathOpen;
  if (oflags & kOflagCreat) need |= kRightPathCreateFile;
  if (oflags & kOflagTrunc) need |= kRightPathFilestatSetSize;
  if (!dir->has(need)) RET(kNotcapable);
  if ((oflags & kOflagDirectory) && (oflags & (kOflagCreat | kOflagExcl | kOflagTrunc))) RET(kInval);
  const bool write = base & kRightFdWrite, read = base & kRightFdRead;
  // Creating, truncating, writing or appending only beneath a writable
  // preopen.
  const bool changes = (oflags & (kOflagCreat | kOflagTrunc | kOflagExcl)) || write || (fdflags & kFdflagAppend);
  if (changes && !dir->writable) RET(kNotcapable);
  // Without the write right a file opens for reading (the kernel then says
  // EISDIR for a directory opened to write, as for a native program).
  uint64_t flags = write && read ? O_RDWR : write ? O_WRONLY : O_RDONLY;
  if (oflags & kOflagCreat) flags |= O_CREAT;
  if (oflags & kOflagExcl) flags |= O_EXCL;
  if (oflags & kOflagTrunc) flags |= O_TRUNC;
  if (oflags & kOflagDirectory) flags |= O_DIRECTORY;
  if (fdflags & kFdflagAppend) flags |= O_APPEND;
  if (fdflags & kFdflagDsync) flags |= O_DSYNC;
  if (fdflags & (kFdflagSync | kFdflagRsync)) flags |= O_SYNC;
  if (!(lookup & kLookupSymlinkFollow)) flags |= O_NOFOLLOW;
  // NONBLOCK is only reported back: reads and writes block, as wasmtime's.
  int host = -1;
  if (uint32_t e = open_beneath(dir->host, path, flags, host); e != kSuccess) RET(e);
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->owned = true;
  f->writable = dir->writable;
  struct stat st {};
  if (::fstat(host, &st) == 0) {
    f->filetype = filetype_of(st.st_mode);
    f->stream = !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
  }
  f->can_read = (flags & O_ACCMODE) != O_WRONLY;
  f->can_write = (flags & O_ACCMODE) != O_RDONLY;
  // What was asked for, within what the directory passes on and what this
  // kind of descriptor can do.
  uint64_t kind = f->directory() ? kDirRights : kFileRights;
  if (f->stream) kind &= ~(kRightFdSeek | kRightFdTell);
  f->rights = base & dir->inheriting & kind;
  f->inheriting = inheriting & dir->inheriting;
  f->flags = uint16_t(fdflags & kFdflagsAll);
  const uint32_t fd = c.add_fd(std::move(f));
  RET(c.put_le<uint32_t>(U32(8), fd) ? kSuccess : kFault);
}

#undef RET
#undef U32

}  // namespace

const std::vector<CallInfo>& path_calls() {
  const ValType I = kI32, L = kI64;
  static const std::vector<CallInfo> table = {
      {"path_create_directory", sig({I, I, I}), path_create_directory},
      {"path_filestat_get", sig({I, I, I, I, I}), path_filestat_get},
      {"path_filestat_set_times", sig({I, I, I, I, L, L, I}), path_filestat_set_times},
      {"path_link", sig({I, I, I, I, I, I, I}), path_link},
      {"path_open", sig({I, I, I, I, I, L, L, I, I}), path_open},
      {"path_readlink", sig({I, I, I, I, I, I}), path_readlink},
      {"path_remove_directory", sig({I, I, I}), path_remove_directory},
      {"path_rename", sig({I, I, I, I, I, I}), path_rename},
      {"path_symlink", sig({I, I, I, I, I}), path_symlink},
      {"path_unlink_file", sig({I, I, I}), path_unlink_file},
  };
  return table;
}

}  // namespace ww::wasi
