// What wasi.cc (the context, linking) and wasi_calls.cc (the calls) share.
#pragma once

#include <unistd.h>

#include <sys/stat.h>

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
  std::string preopen;    // a preopen's guest name (fd_prestat_*)
  bool writable = false;  // beneath a writable preopen
  // A directory's entries, read on the first fd_readdir; cookies index it.
  struct Entry {
    std::string name;
    uint64_t ino;
    unsigned char type;  // DT_*
  };
  std::vector<Entry> entries;
  bool listed = false;
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

// A call: its WASI type and the handler, which reads its arguments from
// slots and writes its result (an errno) into slots[0].
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

struct CallInfo {
  const char* name;
  FuncType type;
  TrapCode (*handler)(const CallContext& c, uint64_t* slots);
};

// The call named `name`, or null when this layer lacks it.
const CallInfo* find_call(const std::string& name);
// fd_write's bytes to a descriptor with a cap (a batch's stdio): what
// passes the cap is cut (EFBIG once nothing fits) and `capped` set.
ssize_t write_capped(Context::Fd& f, const uint8_t* p, size_t n, bool& capped);

uint8_t filetype_of(mode_t m);

}  // namespace ww::wasi
