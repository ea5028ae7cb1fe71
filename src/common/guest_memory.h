// One instance's linear memory 0 as a host function sees it. On the CPU
// it is the store's memory itself; for a GPU instance that left its kernel
// to call the host, the bytes live on the device: reads come from granules
// fetched in rounds (a call that reads what is not fetched yet runs again
// once it is), writes are kept and applied when the instance resumes.
// So a host function reads all it needs before it acts on the world, and
// says what it wrote.
#pragma once

#include <cstdint>

namespace ww {

class GuestMemory {
 public:
  virtual ~GuestMemory() = default;
  virtual uint64_t size() const = 0;
  // Bytes [ptr, ptr + len), in bounds (callers check), to read; null when
  // they are not at hand yet.
  virtual const uint8_t* read(uint64_t ptr, uint64_t len) = 0;
  // Room for len bytes at ptr; written(ptr, n) then says which of them the
  // call filled (only those reach the instance).
  virtual uint8_t* window(uint64_t ptr, uint64_t len) = 0;
  virtual void written(uint64_t ptr, uint64_t n) = 0;

  bool in(uint64_t ptr, uint64_t len) const { return ptr <= size() && len <= size() - ptr; }
};

}  // namespace ww
