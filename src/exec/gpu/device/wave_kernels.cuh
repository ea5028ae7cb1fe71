// The wave loop's own kernels: setting up each wave's instances before the
// launcher runs them, and reading results back after. Defined in one
// translation unit (wave/wave_kernels.cu), whose host functions launch
// them (wave/wave_kernels.h).
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/wave_words.h"

namespace ww::gpu {

// trap_pc of a trap that no code raised (a memory input that did not fit);
// the same value as semantics/traps.h's kNoTrapPc.
inline constexpr uint32_t kDevNoTrapPc = ~0u;

__global__ void read_timer_kernel(uint64_t* out) { *out = global_timer_ns(); }

// The first wave's memory: the buffer is zeroed by cudaMemset, then this
// writes the image's words (trimmed after its last non-zero word) into
// every instance of the buffer, `groups` groups of 32. Consecutive threads
// write consecutive addresses in either layout.
template <DevLayout L>
__global__ void copy_image_kernel(DevWave W, uint32_t groups, const uint32_t* image, uint32_t image_words) {
  const uint64_t per_group = uint64_t(image_words) * 32;
  for (uint32_t g = blockIdx.y; g < groups; g += gridDim.y)
    for (uint64_t j = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < per_group;
         j += uint64_t(gridDim.x) * blockDim.x) {
      constexpr bool kInterleaved = L == DevLayout::Interleaved;
      const uint32_t lane = kInterleaved ? uint32_t(j & 31) : uint32_t(j / image_words);
      const uint64_t w = kInterleaved ? j >> 5 : j % image_words;
      *Mem<L>::make(W, g * 32 + lane).word_ptr(w * 4) = image[w];
    }
}

// Later waves: one block per page of each group of 32; the pages the last
// wave stored to get the image's words (or zeros) back, and their flags are
// cleared. Untouched pages still hold the image, so a wave whose code
// writes little memory costs little set-up however large the capacity.
template <DevLayout L>
__global__ void restore_dirty_pages_kernel(DevWave W, const uint32_t* image, uint32_t image_words) {
  const uint64_t b = blockIdx.x;
  if (!W.mem_dirty[b]) return;
  const uint32_t g = uint32_t(b / W.mem_cap_pages), page = uint32_t(b % W.mem_cap_pages);
  constexpr uint32_t kPageWords = uint32_t(kDevPageSize / 4);
  constexpr bool kInterleaved = L == DevLayout::Interleaved;
  for (uint32_t j = threadIdx.x; j < kPageWords * 32; j += blockDim.x) {
    const uint32_t lane = kInterleaved ? (j & 31) : j / kPageWords;
    const uint64_t w = uint64_t(page) * kPageWords + (kInterleaved ? j >> 5 : j % kPageWords);
    *Mem<L>::make(W, g * 32 + lane).word_ptr(w * 4) = w < image_words ? image[w] : 0u;
  }
  __syncthreads();
  if (threadIdx.x == 0) W.mem_dirty[b] = 0;
}

__device__ __forceinline__ void init_instance(const DevModule& M, const DevWave& W, const InitState& S, uint32_t t) {
  const uint32_t N = W.n;
  W.mem_pages[t] = S.init_pages;
  for (uint32_t g = 0; g < S.nglobals; ++g) W.globals[uint64_t(g) * N + t] = S.globals[g];
  for (uint32_t d = 0; d < S.ndatas; ++d) W.data_dropped[uint64_t(d) * N + t] = S.data_dropped[d];
  for (uint32_t e = 0; e < S.nelems; ++e) W.elem_dropped[uint64_t(e) * N + t] = S.elem_dropped[e];
  if (W.tables_mutable) {
    for (uint32_t k = 0; k < S.total_table_cap; ++k) W.tables[uint64_t(k) * N + t] = M.shared_tables[k];
    for (uint32_t tb = 0; tb < M.num_tables; ++tb) W.table_size[uint64_t(tb) * N + t] = S.table_init_size[tb];
  }
  W.trap[t] = 0;
  W.finished[t] = 0;
  if (W.hc.enabled) W.hc.waiting[t] = 0;
  W.trap_func[t] = 0;
  W.trap_pc[t] = 0;
}

__global__ void init_state_kernel(DevModule M, DevWave W, InitState S) {
  const uint32_t t = wave_thread(W);
  if (t < W.n) init_instance(M, W, S, t);
}

// A whole wave's set-up in one launch: each memset and copy of its own
// would hold the kernel's start back by the copy engine's turn. Its words where kernels read them (W.self), its
// counts zeroed, the chunk table cleared, each instance's initial state.
__global__ void begin_wave_kernel(DevModule M, DevWave W, InitState S, WaveStart B) {
  if (W.n == 0) return;  // a launch that only loads the kernel
  const uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) {
    // The device-side copy of the words this launch carries (the host
    // writes only its deadline, on another stream, once a kernel started).
    memcpy(const_cast<DevWave*>(W.self), &W, sizeof W);
    W.trapped[0] = 0;
    W.finished_count[0] = 0;
    if (B.pool_used) *W.pool_used = 0;
    if (B.done) *W.done = 0;
    if (B.stacks)
      for (uint32_t k = 0; k < kStackCounters; ++k) W.stack_used[k] = 0;
  }
  for (uint64_t k = i; k < B.clear_words; k += uint64_t(gridDim.x) * blockDim.x) B.clear[k] = 0;
  const uint32_t t = wave_thread(W);
  if (t >= W.n) return;
  if (B.stacks) {
    W.stack_seg[t] = 0;
    W.stack_next[t] = 0;
  }
  if (B.instances) init_instance(M, W, S, t);
}

// Writes record t of `records` into instance t's memory at `address`; an
// instance whose record does not fit its memory traps before it runs.
// Aligned records go a 16-byte load and four word stores at a time: byte
// by byte, each store looking up its sparse chunk, the kernel would take
// most of bench/gpu/run.sh's SHA-256 batch.
template <DevLayout L>
__global__ void mem_in_kernel(DevWave W, const uint8_t* records, uint32_t record_size, uint32_t address) {
  const uint32_t t = wave_thread(W);
  if (t >= W.n) return;
  uint64_t size = uint64_t(W.mem_pages[t]) * kDevPageSize;
  if (uint64_t(address) + record_size > size) {
    W.trap[t] = uint8_t(TrapCode::MemoryOutOfBounds);
    W.trap_pc[t] = kDevNoTrapPc;
    // Counted here: the kernel finishes the instance as one that trapped
    // before it ran, without counting it again.
    atomicAdd(W.trapped, 1ull);
    return;
  }
  const MemAccess<L> m = MemAccess<L>::make(W, t);
  // One cache for the record: its words share a chunk or a few.
  MemCache<L> mc = m.cache();
  const uint8_t* r = records + uint64_t(t) * record_size;
  uint32_t k = 0;
  if ((address & 3) == 0 && (reinterpret_cast<uintptr_t>(r) & 15) == 0)
    for (; k + 16 <= record_size; k += 16) {
      const uint4 v = *reinterpret_cast<const uint4*>(r + k);
      *m.write_word(mc, uint64_t(address) + k) = v.x;
      *m.write_word(mc, uint64_t(address) + k + 4) = v.y;
      *m.write_word(mc, uint64_t(address) + k + 8) = v.z;
      *m.write_word(mc, uint64_t(address) + k + 12) = v.w;
    }
  for (; k < record_size; ++k) m.store8(mc, uint64_t(address) + k, r[k]);
}

// Record t of `out` from instance t's memory at `address`, as mem_in_kernel
// writes them.
template <DevLayout L>
__global__ void mem_out_kernel(DevWave W, uint8_t* out, uint32_t length, uint32_t address) {
  const uint32_t t = wave_thread(W);
  if (t >= W.n) return;
  uint8_t* o = out + uint64_t(t) * length;
  uint64_t size = uint64_t(W.mem_pages[t]) * kDevPageSize;
  const bool vector = (address & 3) == 0 && (reinterpret_cast<uintptr_t>(o) & 15) == 0;
  const uint32_t vector_end = vector ? length & ~15u : 0;
  // A trapped instance's record stays zeros, as on the CPU.
  if (W.trap[t] != 0 || uint64_t(address) + length > size) {
    for (uint32_t k = 0; k < vector_end; k += 16) *reinterpret_cast<uint4*>(o + k) = make_uint4(0, 0, 0, 0);
    for (uint32_t k = vector_end; k < length; ++k) o[k] = 0;
    if (W.trap[t] == 0) {
      W.trap[t] = uint8_t(TrapCode::MemoryOutOfBounds);
      W.trap_pc[t] = kDevNoTrapPc;
      atomicAdd(W.trapped, 1ull);
    }
    return;
  }
  const MemAccess<L> m = MemAccess<L>::make(W, t);
  MemCache<L> mc = m.cache();
  for (uint32_t k = 0; k < vector_end; k += 16) {
    uint4 v;
    v.x = *m.read_word(mc, uint64_t(address) + k);
    v.y = *m.read_word(mc, uint64_t(address) + k + 4);
    v.z = *m.read_word(mc, uint64_t(address) + k + 8);
    v.w = *m.read_word(mc, uint64_t(address) + k + 12);
    *reinterpret_cast<uint4*>(o + k) = v;
  }
  for (uint32_t k = vector_end; k < length; ++k) o[k] = m.load8(mc, uint64_t(address) + k);
}

// n words of `value` (a v128 constant's high word beside per-instance rows).
__global__ void fill_words_kernel(uint64_t* dst, uint64_t value, uint32_t n) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) dst[t] = value;
}

// A column in GPU memory (rows of 4 or 8 bytes) into the 64-bit slots of
// io, and a result column out of them (a 4-byte result is its low half;
// zeros for an instance that trapped, as the host's results show it).
__global__ void column_in_kernel(const uint8_t* src, uint32_t width, uint32_t n, uint64_t* dst) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  dst[t] = width == 4 ? uint64_t(reinterpret_cast<const uint32_t*>(src)[t]) : reinterpret_cast<const uint64_t*>(src)[t];
}
__global__ void column_out_kernel(const uint64_t* src, const uint8_t* trap, uint32_t width, uint32_t n, uint8_t* dst) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const uint64_t v = trap[t] ? 0 : src[t];
  if (width == 4) reinterpret_cast<uint32_t*>(dst)[t] = uint32_t(v);
  else reinterpret_cast<uint64_t*>(dst)[t] = v;
}

// Rows [off, off + m) of the results (column k at io + k * n), each value
// cut to its 32 bits, column by column into `out`: a wave whose results
// are all i32 or f32 downloads half the bytes.
__global__ void pack_results32_kernel(const uint64_t* io, uint32_t n, uint32_t off, uint32_t m, uint32_t nres,
                                      uint32_t* out) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= m) return;
  for (uint32_t k = 0; k < nres; ++k) out[uint64_t(k) * m + t] = uint32_t(io[uint64_t(k) * n + off + t]);
}

// Instance 0's linear memory, de-interleaved, for writing state back.
template <DevLayout L>
__global__ void gather_memory_kernel(DevWave W, uint8_t* out, uint64_t bytes) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += uint64_t(gridDim.x) * blockDim.x) {
    out[i] = MemAccess<L>::make(W, 0).load8(i);
  }
}

}  // namespace ww::gpu
