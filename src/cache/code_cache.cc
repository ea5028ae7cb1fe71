#include "cache/code_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ww {
namespace {

constexpr char kMagic[4] = {'W', 'W', 'C', 'C'};
constexpr uint32_t kFormat = 1;

struct EntryHeader {
  char magic[4];
  uint32_t format;
  uint64_t payload_size;
  uint64_t hash_low, hash_high;  // XXH3-128 of the payload
};
static_assert(sizeof(EntryHeader) == 32);

std::string errno_text() { return std::strerror(errno); }

Status make_dirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    cur = path.substr(0, i);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return make_error(kNoOffset, "cannot create " + cur + ": " + errno_text());
  }
  return Status::Ok();
}

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

// Never destroyed: a compile's thread may write an entry while the
// process ends.
std::mutex& cache_writes() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

}  // namespace

std::string resolve_cache_dir(const CacheOptions& opts) {
  if (!opts.dir.empty()) return opts.dir;
  if (const char* d = std::getenv("WW_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/wasmwarp";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/wasmwarp";
  return "/tmp/wasmwarp-cache";
}

std::string cache_key(const std::vector<std::string_view>& parts) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  for (std::string_view p : parts) {
    uint64_t n = p.size();
    XXH3_128bits_update(st, &n, sizeof n);
    XXH3_128bits_update(st, p.data(), p.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

CodeCache::CodeCache(const CacheOptions& opts) : enabled_(opts.enabled), dir_(resolve_cache_dir(opts)) {}

std::string CodeCache::entry_path(const std::string& key) const {
  return dir_ + "/v" + std::to_string(kFormat) + "/" + key + ".wwc";
}

bool CodeCache::contains(const std::string& key) const {
  if (!enabled_) return false;
  struct stat st {};
  return ::stat(entry_path(key).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::optional<std::vector<uint8_t>> CodeCache::get(const std::string& key, std::string* note) const {
  if (!enabled_) return std::nullopt;
  const std::string path = entry_path(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  EntryHeader h{};
  std::vector<uint8_t> payload;
  bool ok = ::fstat(fd, &st) == 0 && uint64_t(st.st_size) >= sizeof h &&
            ::pread(fd, &h, sizeof h, 0) == ssize_t(sizeof h) && std::memcmp(h.magic, kMagic, 4) == 0 &&
            h.format == kFormat && h.payload_size == uint64_t(st.st_size) - sizeof h;
  if (ok) {
    payload.resize(h.payload_size);
    ok = ::pread(fd, payload.data(), payload.size(), sizeof h) == ssize_t(payload.size());
  }
  ::close(fd);
  if (ok) {
    XXH128_hash_t sum = XXH3_128bits(payload.data(), payload.size());
    ok = sum.low64 == h.hash_low && sum.high64 == h.hash_high;
  }
  if (!ok) {
    if (note) *note = "cache entry " + path + " is corrupt or truncated; rebuilt";
    return std::nullopt;
  }
  return payload;
}

Status CodeCache::put(const std::string& key, const std::vector<uint8_t>& payload) const {
  if (!enabled_) return Status::Ok();
  const std::string path = entry_path(key);
  const std::string dir = path.substr(0, path.rfind('/'));
  WW_TRY(make_dirs(dir));
  // From the temporary file to its rename or removal, under the lock that
  // a process ending without its compiles takes first (hold_cache_writes).
  std::lock_guard<std::mutex> writing(cache_writes());
  std::string tmp = dir + "/.tmp-" + key + "-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return make_error(kNoOffset, "cannot write to cache directory " + dir + ": " + errno_text());
  // mkstemp makes the file private; entries are as readable as the
  // directory that holds them.
  (void)::fchmod(fd, 0644);
  EntryHeader h{};
  std::memcpy(h.magic, kMagic, 4);
  h.format = kFormat;
  h.payload_size = payload.size();
  XXH128_hash_t sum = XXH3_128bits(payload.data(), payload.size());
  h.hash_low = sum.low64;
  h.hash_high = sum.high64;
  bool ok = write_all(fd, &h, sizeof h) && write_all(fd, payload.data(), payload.size()) && ::fsync(fd) == 0;
  std::string why = ok ? "" : errno_text();
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = errno_text();
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    why = errno_text();
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return make_error(kNoOffset, "cannot write cache entry " + path + ": " + why);
  }
  return Status::Ok();
}

void hold_cache_writes() { cache_writes().lock(); }

}  // namespace ww
