// How instances' linear memories sit in device memory: the batch engine
// picks one per batch (Auto), the compiled tier builds code for one, and
// the device headers address memory by it (dev_memory.cuh's DevLayout has
// the same values).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ww {

enum class MemoryLayout : uint8_t {
  // Byte address a of instance t: the 4-byte words of 32 consecutive
  // instances sit side by side, so the same aligned address across a warp is
  // one coalesced 128-byte access. The whole capacity is allocated.
  Interleaved = 0,
  // Instance t's memory is one block at t * capacity.
  Contiguous = 1,
  // Interleaved inside chunks taken from a pool on first write; what an
  // instance never wrote reads from the module's initial image.
  Sparse = 2,
  // The batch engine chooses (gpu_plan.h's choose_layout).
  Auto = 3,
};

// Compiled code's sparse-layout accesses that miss the function's cache:
// inline, or calls (exec/gpu/device/dev_memory.cuh); BySize: calls in a
// module with many accesses (codegen/generator.cc says why).
enum class SparseMisses : uint8_t { BySize, Inline, Calls };

const char* layout_name(MemoryLayout l);
// "auto", "interleaved", "contiguous" or "sparse".
std::optional<MemoryLayout> parse_layout(std::string_view s);

}  // namespace ww
