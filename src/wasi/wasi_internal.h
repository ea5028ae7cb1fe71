// What wasi.cc (the context, linking) and wasi_calls.cc (the calls) share.
#pragma once

#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "wasi/wasi.h"
#include "wasi/wasi_abi.h"

namespace ww::wasi {

struct Context::Fd {
  int host = -1;       // -1 with no sink: reads see end of file, writes vanish
  bool owned = false;  // closed with the descriptor (stdio and preopens are not)
  std::string* sink = nullptr;  // writes append here instead (a batch's stdout)
  uint64_t cap = ~uint64_t{0};  // bytes this descriptor may still write (a batch's stdio)
  uint8_t filetype = kFiletypeUnknown;
  std::string preopen;  // a preopen's guest name (fd_prestat_*)
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

// What a call sees: the context and the calling instance's memory 0, with
// bounds-checked access (a pointer outside it is EFAULT) that flags what it
// writes for batch instance resets (MemoryInst::written).
struct CallContext {
  Context& cx;
  MemoryInst* mem;

  bool in(uint64_t ptr, uint64_t len) const { return mem && ptr <= mem->data.size() && len <= mem->data.size() - ptr; }
  uint8_t* at(uint64_t ptr) const { return mem->data.data() + ptr; }
  bool put(uint64_t ptr, const void* src, uint64_t len) const {
    if (!in(ptr, len)) return false;
    std::memcpy(at(ptr), src, len);
    mem->mark_written(ptr, len);
    return true;
  }
  template <class T>
  bool put_le(uint64_t ptr, T v) const {
    return put(ptr, &v, sizeof v);  // the host is little-endian, as wasm is
  }
  template <class T>
  bool get_le(uint64_t ptr, T& v) const {
    if (!in(ptr, sizeof v)) return false;
    std::memcpy(&v, at(ptr), sizeof v);
    return true;
  }
  Context::Fd* fd(uint64_t n) const {
    return n < cx.fds_.size() ? cx.fds_[n].get() : nullptr;
  }
  uint32_t add_fd(std::unique_ptr<Context::Fd> f) const {
    for (uint32_t k = 0; k < cx.fds_.size(); ++k)
      if (!cx.fds_[k]) {
        cx.fds_[k] = std::move(f);
        return k;
      }
    cx.fds_.push_back(std::move(f));
    return uint32_t(cx.fds_.size() - 1);
  }
  void close_fd(uint64_t n) const { cx.fds_[n].reset(); }
  void note_capped() const { cx.output_capped_ = true; }
  // random_get's bytes: with a seed, SplitMix64 of seed and a counter.
  bool seeded_random(uint8_t* p, uint64_t n) const {
    if (!cx.seed_) return false;
    for (uint64_t k = 0; k < n; k += 8) {
      uint64_t z = *cx.seed_ + 0x9e3779b97f4a7c15ull * ++cx.random_counter_;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      std::memcpy(p + k, &z, std::min<uint64_t>(8, n - k));
    }
    return true;
  }
  const Config& config() const { return cx.config_; }
  void exit(uint32_t code) const { cx.exit_code_ = code; }
};

// A call: its WASI type and the handler, which reads its arguments from
// slots and writes its result (an errno) into slots[0].
struct CallInfo {
  const char* name;
  FuncType type;
  TrapCode (*handler)(const CallContext& c, uint64_t* slots);
};

// The call named `name`, or null when this layer lacks it.
const CallInfo* find_call(const std::string& name);

uint8_t filetype_of(mode_t m);

}  // namespace ww::wasi
