// The `gpu` intrinsics read_file and write_file (common/guest_files.h)
// over a context's preopens, with the calls' sandbox.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wasi/wasi_internal.h"

namespace ww::wasi {

namespace {

// A read_file/write_file path: the preopen whose guest name is its leading
// component(s) (the longest such), and the rest beneath it.
const Context::Fd* preopen_of(const std::vector<std::unique_ptr<Context::Fd>>& fds, const std::string& path,
                              std::string& rest) {
  const Context::Fd* best = nullptr;
  size_t best_len = 0;
  for (size_t k = 0; k < fds.size(); ++k) {
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

}  // namespace ww::wasi
