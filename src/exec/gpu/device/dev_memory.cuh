// One instance's linear memory on the device, in one of three layouts, and
// the memory view that semantics/memory_ops.h's templates take. The
// interpreter kernel and compiled code address memory only through these.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"

namespace ww::gpu {

inline constexpr uint64_t kDevPageSize = 65536;

// The same values as plan/memory_layout.h's MemoryLayout (wave_context.cuh
// checks).
enum class DevLayout : uint32_t {
  // Byte address a of instance t is in word (a / 4) of its group of 32, and
  // the same word of the 32 instances is contiguous, so a converged warp's
  // access to one address is one 128-byte transaction.
  Interleaved = 0,
  // Instance t's memory is one block at t * capacity.
  Contiguous = 1,
  // Interleaved within chunks that are materialised on first write: see
  // Mem<DevLayout::Sparse>.
  Sparse = 2,
};

// Translations a function keeps in registers between its memory accesses:
// nothing for the dense layouts, whose address is arithmetic.
template <DevLayout L>
struct MemCache {
  __device__ __forceinline__ void forget_image() {}
};

// The dense layouts: the whole capacity of every instance is allocated.
template <DevLayout L>
struct Mem {
  static constexpr bool kInterleaved = L == DevLayout::Interleaved;
  uint8_t* base;  // this instance's base (contiguous) or its group's base (interleaved)
  uint32_t lane;
  uint8_t* dirty;  // the page flags of this instance's group of 32

  __device__ __forceinline__ static Mem make(const DevWave& w, uint32_t t) {
    Mem m;
    m.dirty = w.mem_dirty + uint64_t(t >> 5) * w.mem_cap_pages;
    if (kInterleaved) {
      m.base = w.mem + uint64_t(t >> 5) * (w.mem_cap * 32);
      m.lane = t & 31;
    } else {
      m.base = w.mem + uint64_t(t) * w.mem_cap;
      m.lane = 0;
    }
    return m;
  }
  __device__ __forceinline__ uint8_t* byte_ptr(uint64_t a) const {
    if (kInterleaved) return base + (((a >> 2) * 32 + lane) << 2) + (a & 3);
    return base + a;
  }
  __device__ __forceinline__ uint32_t* word_ptr(uint64_t a) const {  // a % 4 == 0
    if (kInterleaved) return reinterpret_cast<uint32_t*>(base + (((a >> 2) * 32 + lane) << 2));
    return reinterpret_cast<uint32_t*>(base + a);
  }
  // Every store marks its page, so that the next wave restores only the
  // pages this one wrote: reading the flag first keeps the common case
  // (already marked) a cached load instead of a store to L2.
  __device__ __forceinline__ void mark(uint64_t a) const {
    uint8_t* f = dirty + (a >> 16);
    if (!*f) *f = 1;
  }
  __device__ __forceinline__ const uint8_t* read_byte(uint64_t a) const { return byte_ptr(a); }
  __device__ __forceinline__ const uint32_t* read_word(uint64_t a) const { return word_ptr(a); }
  __device__ __forceinline__ uint8_t* write_byte(uint64_t a) const {
    mark(a);
    return byte_ptr(a);
  }
  __device__ __forceinline__ uint32_t* write_word(uint64_t a) const {
    mark(a);
    return word_ptr(a);
  }
  __device__ __forceinline__ MemCache<L> cache() const { return {}; }
  __device__ __forceinline__ const uint8_t* read_byte(MemCache<L>&, uint64_t a) const { return read_byte(a); }
  __device__ __forceinline__ const uint32_t* read_word(MemCache<L>&, uint64_t a) const { return read_word(a); }
  __device__ __forceinline__ uint8_t* write_byte(MemCache<L>&, uint64_t a) const { return write_byte(a); }
  __device__ __forceinline__ uint32_t* write_word(MemCache<L>&, uint64_t a) const { return write_word(a); }
};

// ---------------------------------------------------------- sparse memory
//
// Memory is reserved per instance as the module declares it but only
// materialised where written, in chunks of 32 << chunk_shift bytes shared
// by the 32 instances of a group (a warp), interleaved by words inside as
// in the interleaved layout, so a converged warp's access stays one
// transaction. A group's table entry per chunk: the pool chunk + 1 in the
// low half (0: none yet), in the high half one bit per instance whose part
// of the chunk holds its bytes (its copy of the image is made on its first
// write there). Reads of a part never written come from the image, so the
// data segments (and an --init snapshot) are copied only where written.

// An instance that the host will run again stops here, its thread gone:
// `code` says why, `pc` what the host needs to know for the next run.
static __device__ __noinline__ void stop_to_run_again(const DevWave* w, uint32_t t, TrapCode code, uint32_t pc) {
  w->trap[t] = uint8_t(code);
  w->trap_func[t] = 0;
  w->trap_pc[t] = pc;
  w->finished[t] = 1;
  atomicAdd(w->done, 1ull);
  atomicAdd(w->trapped, 1ull);
  atomicAdd(w->finished_count, 1ull);
  __threadfence();
  asm volatile("exit;");
}

// The entry of chunk `c` once this instance's part of it holds its bytes.
// The lanes of a warp that need the same new chunk elect one to take it
// from the pool; the CAS settles a race with lanes on another path of the
// same warp (the loser's chunk stays unused until the pool is reset).
static __device__ __noinline__ uint64_t sparse_materialise(uint64_t* entry, uint32_t c, uint32_t t, const DevWave* w) {
  const uint32_t lane = t & 31;
  uint64_t e = atomicAdd(reinterpret_cast<unsigned long long*>(entry), 0ull);
  if (uint32_t(e) == 0) {
    const unsigned active = __activemask();
    const unsigned peers = __match_any_sync(active, c);
    const int leader = __ffs(peers) - 1;
    unsigned long long got = 0;
    if (int(threadIdx.x & 31) == leader) {
      const uint32_t k = atomicAdd(&w->pool_used[0], 1u);
      if (k < w->pool_used[1]) {
        const unsigned long long mine = k + 1ull;
        const unsigned long long prev = atomicCAS(reinterpret_cast<unsigned long long*>(entry), 0ull, mine);
        got = prev ? prev : mine;
      }
    }
    e = __shfl_sync(peers, got, leader);
    // Out of the pool: the wave loop runs it again in a later, smaller wave.
    if (uint32_t(e) == 0) stop_to_run_again(w, t, TrapCode::OutOfDeviceMemory, ~0u);
  }
  const uint32_t bit = 1u << lane;
  if (!(uint32_t(e >> 32) & bit)) {
    uint32_t* part = reinterpret_cast<uint32_t*>(w->pool + (uint64_t(uint32_t(e) - 1) << (w->chunk_shift + 5))) + lane;
    const uint32_t words = 1u << (w->chunk_shift - 2);
    const uint32_t ci = c < w->image_chunks ? c : w->image_chunks;  // past the image: its zero chunk
    const uint32_t* src = reinterpret_cast<const uint32_t*>(w->image + (uint64_t(ci) << w->chunk_shift));
    for (uint32_t k = 0; k < words; ++k) part[uint64_t(k) * 32] = src[k];
    const uint32_t mask = atomicOr(reinterpret_cast<unsigned*>(entry) + 1, bit) | bit;
    e = (uint64_t(mask) << 32) | uint32_t(e);
  }
  return e;
}

// The sparse layout's translations of one function: the last chunk this
// instance's part of which holds its bytes, and chunks of a window of 32 it
// reads from the image. A hit costs a shift, a compare and a multiply-add
// where the table's path costs about 30 instructions, a load and a second
// dependent one (Nsight Compute, as scripts/gpu-check.sh's ncu part runs it:
// without this cache SHA-256's kernel runs far more instructions a thread than
// on dense memory; with it, no more). The owned base is biased by the chunk's
// first address, so a hit adds the address itself; an image chunk's bytes are
// at image + a. An owned part never moves or stops being owned within a wave,
// so that entry stays right across calls and writes; an image chunk stops
// being read from the image when this instance first writes it, so a write
// that misses drops its bit, and bulk ops, calls and unaligned stores forget
// the window. A second miss in the same window reads the whole window's
// entries at once: hash-wasm's crc32 reads eight tables of 1 KiB (32 chunks)
// at data-dependent places, and chunk by chunk some lane of a warp would miss
// at nearly every read (slower than no cache at all); a miss in another window
// takes just its chunk, so random reads over a large image pay no scan each.
template <>
struct MemCache<DevLayout::Sparse> {
  uint32_t shift;
  uint32_t own_chunk = ~0u;                     // ~0u: none (no address reaches it)
  uint32_t image_window = ~0u, image_bits = 0;  // bit k: chunk 32 * window + k reads the image
  uint64_t own_base;                            // an integer: the bias leaves the allocation
  const uint8_t* image;
  __device__ __forceinline__ void forget_image() { image_bits = 0; }
};

// Which of the window's chunks of the image lane `lane` has not written.
static __device__ __noinline__ uint32_t sparse_image_window(const uint64_t* table, uint32_t window, uint32_t lane,
                                                            uint32_t image_chunks) {
  const uint32_t first = window * 32, n = image_chunks - first < 32 ? image_chunks - first : 32;
  uint32_t bits = 0;
  for (uint32_t k = 0; k < n; ++k)
    if (!(uint32_t(table[first + k] >> 32) >> lane & 1u)) bits |= 1u << k;
  return bits;
}

template <>
struct Mem<DevLayout::Sparse> {
  uint64_t* table;  // this instance's group's entries
  uint8_t* pool;
  const uint8_t* image;
  const DevWave* w;
  uint32_t t, shift, image_chunks;  // t: the instance, lane t % 32 of its group

  __device__ __forceinline__ static Mem make(const DevWave& wv, uint32_t t) {
    Mem m;
    m.table = wv.chunk_table + uint64_t(t >> 5) * wv.table_stride;
    m.pool = wv.pool;
    m.image = wv.image;
    m.w = wv.self;
    m.t = t;
    m.shift = wv.chunk_shift;
    m.image_chunks = wv.image_chunks;
    return m;
  }
  // A part is ours when our bit is set; a stale cached entry with the bit
  // but no chunk yet (the bit was set after the chunk, by an atomic) is
  // read again through the slow path.
  __device__ __forceinline__ bool ours(uint64_t e) const {
    return (uint32_t(e >> 32) >> (t & 31) & 1u) && uint32_t(e) != 0;
  }
  // Past a cache (bulk ops, WASI, the memory kernels): one made for the
  // access, which holds nothing, so the access takes the general path.
  __device__ __forceinline__ const uint8_t* read_byte(uint64_t a) const {
    MemCache<DevLayout::Sparse> k = cache();
    return read_byte(k, a);
  }
  __device__ __forceinline__ const uint32_t* read_word(uint64_t a) const {
    return reinterpret_cast<const uint32_t*>(read_byte(a));
  }
  __device__ __forceinline__ uint8_t* write_byte(uint64_t a) const {
    MemCache<DevLayout::Sparse> k = cache();
    return write_byte(k, a);
  }
  __device__ __forceinline__ uint32_t* write_word(uint64_t a) const {
    return reinterpret_cast<uint32_t*>(write_byte(a));
  }

  // Through a function's cache. Addresses passed the bounds check, so they
  // are below 2^32 and a chunk number fits 32 bits.
  __device__ __forceinline__ MemCache<DevLayout::Sparse> cache() const {
    MemCache<DevLayout::Sparse> k;
    k.shift = shift;
    k.image = image;
    return k;
  }
  // This lane's byte a of a chunk held in the pool, from its biased base:
  // words are 32 apart (the lanes' words between them).
  static __device__ __forceinline__ uint8_t* in_part(uint64_t base, uint32_t a) {
    return reinterpret_cast<uint8_t*>(base + uint64_t(a & ~3u) * 32 + (a & 3u));
  }
  // Whether a is a multiple of `align` (4 or 8) inside the cached owned
  // chunk: one test for both, every other case takes the general path.
  static __device__ __forceinline__ bool owns_word(const MemCache<DevLayout::Sparse>& k, uint64_t a64, uint32_t align) {
    const uint32_t a = uint32_t(a64);
    return (((a >> k.shift) ^ k.own_chunk) | (a & (align - 1))) == 0;
  }
  static __device__ __forceinline__ uint32_t* owned_word(const MemCache<DevLayout::Sparse>& k, uint64_t a) {
    return reinterpret_cast<uint32_t*>(k.own_base + uint64_t(uint32_t(a)) * 32u);
  }
  __device__ __forceinline__ uint8_t* own(MemCache<DevLayout::Sparse>& k, uint32_t c, uint64_t e, uint32_t a) const {
    k.own_chunk = c;
    k.own_base = reinterpret_cast<uint64_t>(pool + (uint64_t(uint32_t(e) - 1) << (shift + 5))) + (t & 31) * 4 -
                 (uint64_t(c) << (shift + 5));
    return in_part(k.own_base, a);
  }
  __device__ __forceinline__ const uint8_t* read_byte(MemCache<DevLayout::Sparse>& k, uint64_t a64) const {
    const uint32_t a = uint32_t(a64), c = a >> k.shift;
    if (c == k.own_chunk) return in_part(k.own_base, a);
    if ((c >> 5) == k.image_window && (k.image_bits >> (c & 31) & 1u)) return k.image + a;
    const uint64_t e = table[c];
    if (ours(e)) return own(k, c, e, a);
    if (uint32_t(e >> 32) >> (t & 31) & 1u) return own(k, c, sparse_materialise(table + c, c, t, w), a);
    if (c >= image_chunks)  // past the image: its zero chunk, not cached
      return image + (uint64_t(image_chunks) << shift) + (a & ((1u << shift) - 1));
    const uint32_t window = c >> 5;
    k.image_bits = window == k.image_window ? sparse_image_window(table, window, t & 31, image_chunks) : 1u << (c & 31);
    k.image_window = window;
    return image + a;
  }
  __device__ __forceinline__ const uint32_t* read_word(MemCache<DevLayout::Sparse>& k, uint64_t a) const {
    return reinterpret_cast<const uint32_t*>(read_byte(k, a));
  }
  __device__ __forceinline__ uint8_t* write_byte(MemCache<DevLayout::Sparse>& k, uint64_t a64) const {
    const uint32_t a = uint32_t(a64), c = a >> k.shift;
    if (c == k.own_chunk) return in_part(k.own_base, a);
    if ((c >> 5) == k.image_window) k.image_bits &= ~(1u << (c & 31));
    uint64_t e = table[c];
    if (!ours(e)) e = sparse_materialise(table + c, c, t, w);
    return own(k, c, e, a);
  }
  __device__ __forceinline__ uint32_t* write_word(MemCache<DevLayout::Sparse>& k, uint64_t a) const {
    return reinterpret_cast<uint32_t*>(write_byte(k, a));
  }
};

// Little-endian loads and stores of 1..8 bytes in any layout: aligned
// words go in one access, the rest byte by byte (wasm allows any
// alignment). A word never straddles a page or a chunk.
//
// `kMissCalls`, for the sparse layout: only the cache's hits (a word of
// the owned chunk, a byte or aligned word of the image window) are inline,
// the rest of the translation is a call. Compiled code of a module with
// many accesses asks for it (codegen/generator.cc): inlined, the
// translations would make its functions so large that ptxas spills and
// takes most of the compile.
template <DevLayout L>
struct MemAccess : Mem<L> {
  __device__ __forceinline__ static MemAccess make(const DevWave& w, uint32_t t) {
    MemAccess m;
    static_cast<Mem<L>&>(m) = Mem<L>::make(w, t);
    return m;
  }
  __device__ __forceinline__ MemCache<L> cache() const { return Mem<L>::cache(); }
  template <bool kMissCalls = false>
  __device__ __forceinline__ uint8_t load8(MemCache<L>& k, uint64_t a) const {
    if constexpr (kMissCalls && L == DevLayout::Sparse) {
      if (Mem<L>::owns_word(k, a, 1)) return *Mem<L>::in_part(k.own_base, uint32_t(a));
      if (image_hit(k, a)) return k.image[uint32_t(a)];
      return uint8_t(load_call(k, a, 1));
    }
    return *this->read_byte(k, a);
  }
  template <bool kMissCalls = false>
  __device__ __forceinline__ void store8(MemCache<L>& k, uint64_t a, uint8_t v) const {
    if constexpr (kMissCalls && L == DevLayout::Sparse) {
      if (Mem<L>::owns_word(k, a, 1)) *Mem<L>::in_part(k.own_base, uint32_t(a)) = v;
      else store_call(k, a, v, 1);
      return;
    }
    *this->write_byte(k, a) = v;
  }
  template <bool kMissCalls = false>
  __device__ __forceinline__ uint64_t load(MemCache<L>& k, uint64_t a, int n) const {
    if constexpr (L == DevLayout::Sparse) {
      if (n >= 4 && Mem<L>::owns_word(k, a, uint32_t(n))) {
        const uint32_t* p = Mem<L>::owned_word(k, a);
        return n == 4 ? uint64_t(*p) : (uint64_t(p[0]) | uint64_t(p[32]) << 32);  // next word: 32 lanes on
      }
      if constexpr (kMissCalls) {
        // An aligned word of the image window lies in one chunk (chunks
        // hold at least 8 bytes a lane).
        if (n >= 4 && (a & uint32_t(n - 1)) == 0 && image_hit(k, a)) {
          const uint32_t* p = reinterpret_cast<const uint32_t*>(k.image + uint32_t(a));
          return n == 4 ? uint64_t(p[0]) : (uint64_t(p[0]) | uint64_t(p[1]) << 32);
        }
        return load_call(k, a, n);
      }
    }
    return load_translated(k, a, n);
  }
  template <bool kMissCalls = false>
  __device__ __forceinline__ void store(MemCache<L>& k, uint64_t a, uint64_t v, int n) const {
    if constexpr (L == DevLayout::Sparse) {
      if (n >= 4 && Mem<L>::owns_word(k, a, uint32_t(n))) {
        uint32_t* p = Mem<L>::owned_word(k, a);
        p[0] = uint32_t(v);
        if (n == 8) p[32] = uint32_t(v >> 32);
        return;
      }
      if constexpr (kMissCalls) {
        store_call(k, a, v, n);
        return;
      }
    }
    store_translated(k, a, v, n);
  }
  __device__ __forceinline__ uint8_t load8(uint64_t a) const { return *this->read_byte(a); }
  __device__ __forceinline__ void store8(uint64_t a, uint8_t v) const { *this->write_byte(a) = v; }
  __device__ __forceinline__ uint64_t load(uint64_t a, int n) const {
    MemCache<L> k = cache();
    return load(k, a, n);
  }
  // Byte by byte, out of line: inlined at every access of compiled code,
  // the sparse layout's copies would make wasi-libc's PTX several times
  // larger and its compile far longer.
  __device__ __noinline__ uint64_t load_bytes(uint64_t a, int n) const {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(load8(a + i)) << (8 * i);
    return v;
  }
  __device__ __noinline__ void store_bytes(uint64_t a, uint64_t v, int n) const {
    for (int i = 0; i < n; ++i) store8(a + i, uint8_t(v >> (8 * i)));
  }

 private:
  __device__ __forceinline__ uint64_t load_translated(MemCache<L>& k, uint64_t a, int n) const {
    if ((a & 3) == 0 && n >= 4) {
      uint64_t lo = *this->read_word(k, a);
      if (n == 4) return lo;
      return lo | (uint64_t(*this->read_word(k, a + 4)) << 32);
    }
    return load_bytes(a, n);
  }
  // The unaligned path writes past the cache, so the image window goes.
  __device__ __forceinline__ void store_translated(MemCache<L>& k, uint64_t a, uint64_t v, int n) const {
    if ((a & 3) == 0 && n >= 4) {
      *this->write_word(k, a) = uint32_t(v);
      if (n == 8) *this->write_word(k, a + 4) = uint32_t(v >> 32);
      return;
    }
    k.forget_image();
    store_bytes(a, v, n);
  }
  static __device__ __forceinline__ bool image_hit(const MemCache<L>& k, uint64_t a) {
    const uint32_t c = uint32_t(a) >> k.shift;
    return (c >> 5) == k.image_window && (k.image_bits >> (c & 31) & 1u);
  }
  // What of the sparse cache an access may change, to the call and back
  // by value so that it stays in registers: the whole cache so passed
  // would cost the kernel many more registers (the shift and the image are
  // the memory's own).
  struct CacheState {
    uint64_t own_base;
    uint32_t own_chunk, image_window, image_bits;
  };
  struct Loaded {
    uint64_t v;
    CacheState k;
  };
  __device__ __forceinline__ static CacheState state_of(const MemCache<L>& k) {
    return {k.own_base, k.own_chunk, k.image_window, k.image_bits};
  }
  __device__ __forceinline__ static void assign(MemCache<L>& k, const CacheState& s) {
    k.own_base = s.own_base;
    k.own_chunk = s.own_chunk;
    k.image_window = s.image_window;
    k.image_bits = s.image_bits;
  }
  __device__ __forceinline__ uint64_t load_call(MemCache<L>& k, uint64_t a, int n) const {
    const Loaded r = load_missed(state_of(k), a, n);
    assign(k, r.k);
    return r.v;
  }
  __device__ __forceinline__ void store_call(MemCache<L>& k, uint64_t a, uint64_t v, int n) const {
    assign(k, store_missed(state_of(k), a, v, n));
  }
  __device__ __noinline__ Loaded load_missed(CacheState s, uint64_t a, int n) const {
    MemCache<L> k = cache();
    assign(k, s);
    const uint64_t v = n == 1 ? uint64_t(*this->read_byte(k, a)) : load_translated(k, a, n);
    return {v, state_of(k)};
  }
  __device__ __noinline__ CacheState store_missed(CacheState s, uint64_t a, uint64_t v, int n) const {
    MemCache<L> k = cache();
    assign(k, s);
    if (n == 1) *this->write_byte(k, a) = uint8_t(v);
    else store_translated(k, a, v, n);
    return state_of(k);
  }
};

// The memory view of memory_ops.h over one instance: `size` is the
// executor's cached byte size (kept in a register), refreshed here on grow.
template <DevLayout L>
struct DevMemView {
  MemAccess<L> m;
  uint64_t* size_bytes;
  const DevWave* w;
  uint32_t t;

  __device__ __forceinline__ uint64_t size() const { return *size_bytes; }
  __device__ __forceinline__ uint32_t pages() const { return uint32_t(*size_bytes / kDevPageSize); }
  __device__ __forceinline__ uint32_t max_pages() const { return w->mem_grow_limit; }
  // What was reserved up front is grown into in place (the sparse layout
  // materialises the new pages only when they are written); past it, the
  // instance runs again with more reserved, so memory.grow fails only
  // where the CPU's would.
  __device__ __forceinline__ bool grow_to(uint32_t p) const {
    // Past the pages reserved, with the pages asked for: the batch runs it
    // again from the start with at least those (batch_run.cu's rerun_grown).
    if (p > w->mem_max_pages) stop_to_run_again(w, t, TrapCode::GrowPastReservation, p);
    w->mem_pages[t] = p;
    *size_bytes = uint64_t(p) * kDevPageSize;
    return true;
  }
  __device__ __forceinline__ void fill(uint64_t d, uint8_t v, uint32_t n) const {
    for (uint32_t k = 0; k < n; ++k) m.store8(d + k, v);
  }
  __device__ __forceinline__ void move(uint64_t d, uint64_t s, uint32_t n) const {
    if (d <= s) {
      for (uint32_t k = 0; k < n; ++k) m.store8(d + k, m.load8(s + k));
    } else {
      for (uint32_t k = n; k-- > 0;) m.store8(d + k, m.load8(s + k));
    }
  }
  __device__ __forceinline__ void write(uint64_t d, const uint8_t* src, uint32_t n) const {
    for (uint32_t k = 0; k < n; ++k) m.store8(d + k, src[k]);
  }
};

}  // namespace ww::gpu
