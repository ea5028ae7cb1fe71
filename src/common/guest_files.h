// Files a guest reaches by path, for the `gpu` intrinsics read_file and
// write_file: the WASI layer's preopened directories and sandbox
// (wasi::Context implements it). Results are bytes moved, or a negative
// WASI errno.
#pragma once

#include <cstdint>

#include "common/guest_memory.h"

namespace ww {

class GuestFiles {
 public:
  virtual ~GuestFiles() = default;
  // The file at the NUL-terminated path at `path` (its first component a
  // preopen's guest name): up to `len` bytes from its start into [buf,
  // buf + len), or the whole of [buf, buf + len) written over it (created
  // or truncated; writable preopens only).
  virtual int32_t read_file(GuestMemory* mem, uint32_t path, uint32_t buf, uint32_t len) = 0;
  virtual int32_t write_file(GuestMemory* mem, uint32_t path, uint32_t buf, uint32_t len) = 0;
};

}  // namespace ww
