// The compiled tier: a module's functions translated to C++ once
// (src/codegen), compiled by the host C++ compiler into a shared object for
// the CPU or by NVRTC into a CUBIN for the GPU, cached on disk
// (src/cache), and loaded as an executor's code. Everything that can go
// wrong here (no compiler, a compiler error, a full cache) is an Error the
// caller turns into "ran the interpreter", never a wrong result.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/code_cache.h"
#include "common/result.h"
#include "exec/gpu/plan/memory_layout.h"
#include "store/store.h"

namespace ww::gpu {
class KernelLauncher;
}

namespace ww::compiled {

enum class Target : uint8_t { Cpu, Gpu };

struct Request {
  std::shared_ptr<const CompiledModule> module;
  // Defined functions entered from outside, as module function indices;
  // empty: every exported function. The start function and every function
  // a table can reach are compiled too.
  std::vector<uint32_t> entries;
  // A unit of the module's code (the CPU only): exactly these defined
  // functions, ascending, each callable alone (codegen::Options::functions).
  // Empty: `entries` and what they reach.
  std::vector<uint32_t> functions;
  // The CPU: optimise less (-O1), for a unit whose -O2 compile would take
  // minutes (tier-up's very large functions).
  bool quick = false;
  Target target = Target::Cpu;
  bool metered = false;   // fuel counted at back-edges and calls (--fuel)
  bool deadline = false;  // the timeout (GPU) or the interrupt byte (CPU) checked at back-edges
  MemoryLayout layout = MemoryLayout::Interleaved;    // GPU: never Auto
  SparseMisses sparse_misses = SparseMisses::BySize;  // tests force either way
  // GPU: compute capability to compile for, as major * 10 + minor (90 for
  // sm_90); 0 = the device's. NVRTC needs no GPU, so a cache can be filled
  // on a machine without one.
  int gpu_arch = 0;
  // Load the code after compiling it; false: only fill the cache (the
  // result is then null).
  bool load = true;
  // GPU: load on a thread of its own while the batch prepares (its first
  // launch waits for it); false: loaded when compile_gpu returns.
  bool load_in_background = true;
  CacheOptions cache;
};

struct Outcome {
  bool cache_hit = false;
  double generate_ms = 0, compile_ms = 0, load_ms = 0;
  std::string cache_note;  // trouble with the cache that did not stop the run
  std::string key;         // the cache key
  uint64_t source_bytes = 0;
};

// About half of the module's defined functions, ascending, chosen by
// `seed` function by function: the tests' split of a module between the
// tiers (ww-spectest and ww-difftest --tier mixed), compiled as one unit
// (Request::functions) while the rest stays interpreted.
std::vector<uint32_t> mixed_split(const CompiledModule& cm, uint64_t seed);

// The self-contained translation units the compiler gets for `req` (what
// `wasmwarp compile --emit-source` writes): one, or for a large module on
// the CPU several that compile in parallel.
Result<std::vector<std::string>> translation_units(const Request& req);

// Whether the cache holds code for `req` (generates the source to key it).
bool cached(const Request& req);
// cached() without generating the source: only the index entry that every
// compile writes (`wasmwarp compile`'s too) is looked at. For a large
// module, whose source takes seconds to generate.
bool cached_by_index(const Request& req);

// The CPU's compiled code for every instance of req.module.
Result<std::shared_ptr<const NativeCode>> compile_cpu(const Request& req, Outcome* outcome);

// The GPU's compiled kernel for the wave loop.
Result<std::shared_ptr<gpu::KernelLauncher>> compile_gpu(const Request& req, Outcome* outcome);

}  // namespace ww::compiled
