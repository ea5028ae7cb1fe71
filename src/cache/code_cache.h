// The on-disk cache of compiled code (CUBINs for the GPU, shared objects
// for the CPU), keyed by a hash of everything that decides the bytes: the
// generated source, the compiler and its version, the architecture and
// the options.
//
// An entry is one file: a header (magic, format, payload size, a 128-bit
// checksum of the payload) and the payload. It is written to a temporary
// file in the cache directory and renamed into place, so readers never see
// a partial entry, and two processes compiling the same module at once
// both succeed (the last rename wins; both entries are whole). A corrupt or
// truncated entry fails its checksum, is reported and rebuilt. A cache
// directory that cannot be written (read-only, full) never stops a run:
// the code is used uncached and the reason reported once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace ww {

struct CacheOptions {
  bool enabled = true;
  // Empty: $WW_CACHE_DIR, else $XDG_CACHE_HOME/wasmwarp, else
  // $HOME/.cache/wasmwarp.
  std::string dir;
};

// The directory `opts` names (not created).
std::string resolve_cache_dir(const CacheOptions& opts);

// A 128-bit hash of the parts (each length-prefixed, so ("ab","c") and
// ("a","bc") differ), as 32 hex digits.
std::string cache_key(const std::vector<std::string_view>& parts);

class CodeCache {
 public:
  explicit CodeCache(const CacheOptions& opts);

  bool enabled() const { return enabled_; }
  const std::string& dir() const { return dir_; }

  // Whether an entry file exists (not verified; cheap).
  bool contains(const std::string& key) const;
  // The payload of a whole, verified entry; nullopt when absent or
  // corrupt (then `note` says so and the caller rebuilds it).
  std::optional<std::vector<uint8_t>> get(const std::string& key, std::string* note) const;
  // Stores the payload atomically. An error (unwritable directory, full
  // disk) leaves no entry behind and is the caller's to report.
  Status put(const std::string& key, const std::vector<uint8_t>& payload) const;

  // Where the entry for `key` lives.
  std::string entry_path(const std::string& key) const;

 private:
  bool enabled_;
  std::string dir_;
};

// For a process about to end while compiles still run: waits for an entry
// being written and lets no other start, so that the process's end never
// leaves a temporary file behind (never undone).
void hold_cache_writes();

}  // namespace ww
