// What wasi.cc (the context, linking) and the calls (wasi_calls*.cc) share.
#pragma once

#include <unistd.h>

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/guest_memory.h"
#include "wasi/wasi.h"
#include "wasi/wasi_abi.h"

namespace ww::wasi {

struct Context::Fd {
  int host = -1;                // -1 with no sink: reads see end of file, writes vanish
  bool owned = false;           // closed with the descriptor (stdio and preopens are not)
  std::string* sink = nullptr;  // writes append here instead (a batch's stdout)
  uint64_t cap = ~uint64_t{0};  // bytes this descriptor may still write (a batch's stdio)
  uint8_t filetype = kFiletypeUnknown;
  // Bytes flow one way with no offset (a pipe, a terminal, stdio collected
  // in memory): fd_seek, fd_tell, fd_pread and fd_pwrite answer ESPIPE.
  bool stream = false;
  // The directions the descriptor moves bytes in at all (its open mode):
  // fd_read or fd_write the other way is EBADF, as the OS says, where a
  // right taken away since is ENOTCAPABLE.
  bool can_read = false, can_write = false;
  std::string preopen;    // a preopen's guest name (fd_prestat_*)
  bool writable = false;  // beneath a writable preopen
  uint64_t rights = 0, inheriting = 0;
  uint16_t flags = 0;  // fdflags, as fd_fdstat_get reports them
  // A directory's entries after "." and "..", read by fd_readdir from
  // cookie 0; cookies index "." , "..", then these.
  struct Entry {
    std::string name;
    uint64_t ino;
    uint8_t type;  // a WASI filetype
  };
  std::vector<Entry> entries;
  bool listed = false;
  bool directory() const { return filetype == kFiletypeDirectory; }
  bool has(uint64_t r) const { return (rights & r) == r; }
  ~Fd() {
    if (owned && host >= 0) ::close(host);
  }
};

// What a call sees: the context and the calling instance's memory 0
// (common/guest_memory.h), with bounds-checked access: a pointer outside it
// is EFAULT. A call reads every byte it needs before it acts (a GPU
// instance's memory comes in rounds, and a call that missed bytes runs
// again), and says what it wrote.
struct CallContext {
  Context& cx;
  GuestMemory* mem;

  bool in(uint64_t ptr, uint64_t len) const { return mem && mem->in(ptr, len); }
  // Null when out of bounds or not at hand yet.
  const uint8_t* read(uint64_t ptr, uint64_t len) const { return in(ptr, len) ? mem->read(ptr, len) : nullptr; }
  bool put(uint64_t ptr, const void* src, uint64_t len) const {
    if (!in(ptr, len)) return false;
    std::memcpy(mem->window(ptr, len), src, len);
    mem->written(ptr, len);
    return true;
  }
  template <class T>
  bool put_le(uint64_t ptr, T v) const {
    return put(ptr, &v, sizeof v);  // the host is little-endian, as wasm is
  }
  template <class T>
  bool get_le(uint64_t ptr, T& v) const {
    const uint8_t* p = read(ptr, sizeof v);
    if (!p) return false;
    std::memcpy(&v, p, sizeof v);
    return true;
  }
  Context::Fd* fd(uint64_t n) const { return n < cx.fds_.size() ? cx.fds_[n].get() : nullptr; }
  uint32_t add_fd(std::unique_ptr<Context::Fd> f) const {
    uint32_t k = 0;
    while (k < cx.fds_.size() && cx.fds_[k]) ++k;
    if (k == cx.fds_.size()) cx.fds_.emplace_back();
    cx.fds_[k] = std::move(f);
    cx.opened_ = k;
    return k;
  }
  void close_fd(uint64_t n) const { cx.fds_[n].reset(); }
  // fd_renumber: `to` (closed first) is `from` from now on; both are open.
  void move_fd(uint64_t from, uint64_t to) const {
    if (from != to) cx.fds_[to] = std::move(cx.fds_[from]);
  }
  const std::vector<std::unique_ptr<Context::Fd>>& fds() const { return cx.fds_; }
  void note_capped() const { cx.output_capped_ = true; }
  // random_get's bytes: with a seed, seeded_random_word of a counter.
  bool seeded_random(uint8_t* p, uint64_t n) const {
    if (!cx.seed_) return false;
    for (uint64_t k = 0; k < n; k += 8) {
      const uint64_t z = seeded_random_word(*cx.seed_, ++cx.random_counter_);
      std::memcpy(p + k, &z, std::min<uint64_t>(8, n - k));
    }
    return true;
  }
  const Config& config() const { return cx.config_; }
  void exit(uint32_t code) const { cx.exit_code_ = code; }
};

// Memory 0 of a CPU instance.
class StoreGuestMemory final : public GuestMemory {
 public:
  explicit StoreGuestMemory(MemoryInst* m) : m_(m) {}
  uint64_t size() const override { return m_->data.size(); }
  const uint8_t* read(uint64_t ptr, uint64_t) override { return m_->data.data() + ptr; }
  uint8_t* window(uint64_t ptr, uint64_t) override { return m_->data.data() + ptr; }
  void written(uint64_t ptr, uint64_t n) override { m_->mark_written(ptr, n); }

 private:
  MemoryInst* m_;
};

// A call: its WASI type and the handler, which reads its arguments from
// slots and writes its result (an errno) into slots[0].
struct CallInfo {
  const char* name;
  FuncType type;
  TrapCode (*handler)(const CallContext& c, uint64_t* slots);
};

// The calls, by theme: wasi_calls.cc (arguments, clocks, random bytes,
// poll_oneoff, processes, sockets), wasi_calls_fd.cc (descriptors) and
// wasi_calls_path.cc (paths).
const std::vector<CallInfo>& misc_calls();
const std::vector<CallInfo>& fd_calls();
const std::vector<CallInfo>& path_calls();
// The call named `name`, or null when this layer lacks it.
const CallInfo* find_call(const std::string& name);
// fd_write's bytes to a descriptor with a cap (a batch's stdio): what
// passes the cap is cut (EFBIG once nothing fits) and `capped` set. `at`:
// fd_pwrite's offset, or -1.
ssize_t write_capped(Context::Fd& f, const uint8_t* p, size_t n, bool& capped, int64_t at = -1);
// All n bytes to `fd` (at offset `at` unless -1): bytes written, -1 with
// errno when none were.
ssize_t write_all(int fd, const uint8_t* p, size_t n, int64_t at = -1);

uint8_t filetype_of(mode_t m);
uint64_t ns_of(const timespec& t);
// fd_filestat_get's bytes: dev, ino, filetype, nlink, size, atim, mtim, ctim.
void filestat_bytes(const struct stat& st, uint8_t b[kFilestatSize]);
// A guest path, relative to directory `dir`, opened with `flags` and
// resolved beneath it: absolute paths and those that leave it (`..`,
// links) are ENOTCAPABLE.
uint32_t open_beneath(int dir, const std::string& path, uint64_t flags, int& out);
// The string at [ptr, ptr + len) as a path: EFAULT outside memory, EILSEQ
// when it is not UTF-8, EINVAL when it holds a NUL (as wasmtime).
uint32_t read_path(const CallContext& c, uint64_t ptr, uint64_t len, std::string& out);

// fd_filestat_set_times' and path_filestat_set_times' times for utimensat:
// false (EINVAL) when a time is both given and "now", or for unknown flags.
bool utimes_of(uint64_t atim, uint64_t mtim, uint32_t fst, timespec ts[2]);

// A call's result: its errno in slot 0.
inline TrapCode ret(uint64_t* s, uint32_t e) {
  s[0] = e;
  return TrapCode::None;
}

FuncType sig(std::initializer_list<ValType> params, bool errno_result = true);
inline constexpr ValType kI32 = ValType::I32, kI64 = ValType::I64;

}  // namespace ww::wasi
