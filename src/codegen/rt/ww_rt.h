// What generated code includes: the accessors of ops.def's handler bodies
// for the compiled tier, over an instance context `I` that the generated
// functions pass along. The bodies themselves are ops.def's, copied into
// the generated source by the generator; the arithmetic and the meaning of
// memory and table ops are semantics/'s. The same source compiles for the
// CPU (host C++ compiler: the context is rt::CpuInst, the Store's storage)
// and for the GPU (NVRTC: per-thread state of the wave, the device views
// the interpreter kernel uses).
//
// The generator defines before including this: WW_METERED (fuel at
// back-edges and calls), WW_SPLIT (the module is several units), and for
// the GPU WW_DEADLINE (the timeout at back-edges), WW_LAYOUT (memory
// layout), WW_NUM_GLOBALS (rows) and WW_GLOBAL_HI_ROW.
#pragma once

#include <stdint.h>

#include "bytecode/slot_accessors.h"
#include "semantics/memory_ops.h"
#include "semantics/semantics.h"
#include "semantics/simd.h"
#include "semantics/traps.h"

#if defined(__CUDACC__)
#include "exec/gpu/device/dev_imports.cuh"
#include "exec/gpu/device/dev_intrinsics.cuh"
#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/dev_tables.cuh"
#if WW_SPLIT
#define WW_FN __device__
#else
#define WW_FN static __device__
#endif
#define WW_UNLIKELY(x) (x)
#else
#include "codegen/rt/cpu_abi.h"
#if WW_SPLIT
#define WW_FN __attribute__((visibility("hidden")))
#else
#define WW_FN static
#endif
#define WW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

namespace ww::gen {

// Results of a function with several: an array of slots.
template <int K>
struct Ret {
  uint64_t v[K];
};

#if defined(__CUDACC__)

// One GPU instance's context: the wave's state, its memory, and its
// globals held in registers for the whole call (written back at the end).
struct Inst {
  const gpu::DevModule* M;
  const gpu::DevWave* W;
  const gpu::DevIntrinsics* In;
  uint32_t t;
  gpu::MemAccess<WW_LAYOUT> mem;
  uint64_t mem_size;
  uint64_t fuel;
  uint32_t ticks;
  uint32_t trap, trap_func, trap_pc;
  bool stopped;  // the timeout, not a trap: the instance did not finish
  // Leaving for the host and coming back (generator.cc): `leaving` unwinds
  // every function to the kernel, each saving its frame at save_pos;
  // `rewinding` walks the saved chain back down to the call site. `chain`
  // is the words the frames of the calls in progress would take.
  bool leaving, rewinding;
  uint64_t chain, save_pos;
  uint64_t g[WW_NUM_GLOBALS + 1];
};

#define WW_MAX_DEPTH (I.W->max_depth)
#define MEM_SIZE mem_size_
#define MEM_PAGES uint32_t(mem_size_ / gpu::kDevPageSize)
// Accesses go through the function's translation cache (mc_, declared by
// WW_MEM_LOCALS); anything else that may write memory (a call, a bulk op)
// makes it forget what it read from the image (dev_memory.cuh).
// The generator gives each function kMissCalls: whether the sparse
// layout's misses are calls there (exec/gpu/device/dev_memory.cuh).
#define LOAD8(a) uint8_t(I.mem.load8<kMissCalls>(mc_, a))
#define LOAD16(a) uint16_t(I.mem.load<kMissCalls>(mc_, (a), 2))
#define LOAD32(a) uint32_t(I.mem.load<kMissCalls>(mc_, (a), 4))
#define LOAD64(a) I.mem.load<kMissCalls>(mc_, (a), 8)
#define STORE8(a, v) I.mem.store8<kMissCalls>(mc_, (a), uint8_t(v))
#define STORE16(a, v) I.mem.store<kMissCalls>(mc_, (a), uint64_t(v), 2)
#define STORE32(a, v) I.mem.store<kMissCalls>(mc_, (a), uint64_t(v), 4)
#define STORE64(a, v) I.mem.store<kMissCalls>(mc_, (a), uint64_t(v), 8)
#define GLOBAL_GET(k) I.g[k]
#define GLOBAL_SET(k, v) (I.g[k] = (v))
// A v128 global's high word: row WW_GLOBAL_HI_ROW + k (gpu::GpuImage::globals).
#define GLOBAL_GET_V128(k) ::ww::sem::v128_of(I.g[k], I.g[WW_GLOBAL_HI_ROW + (k)])
#define GLOBAL_SET_V128(k, v)             \
  do {                                    \
    const ::ww::sem::V128 gv_ = (v);      \
    I.g[k] = gv_.lo;                      \
    I.g[WW_GLOBAL_HI_ROW + (k)] = gv_.hi; \
  } while (0)
#define MEMV (mc_.forget_image(), gpu::DevMemView<WW_LAYOUT>{I.mem, &I.mem_size, I.W, I.t})
// The size in a local too: read from the context, it would be reloaded
// from local memory at every access, since a store may alias the context
// (the context lives in local memory once a function takes it by
// reference).
#define WW_MEM_LOCALS                                            \
  [[maybe_unused]] gpu::MemCache<WW_LAYOUT> mc_ = I.mem.cache(); \
  [[maybe_unused]] uint64_t mem_size_ = I.mem_size;
#define MEM_REFRESH() (mc_.forget_image(), mem_size_ = I.mem_size)
#define DATAV(seg) (gpu::DevDataView{I.M, I.W, I.t, (seg)})
#define TABLEV(tb) (gpu::DevTableView{I.M, I.W, I.t, (tb)})
#define ELEMV(seg) (gpu::DevElemView{I.M, I.W, I.t, (seg)})
#define REF_FUNC(f) (uint64_t(f) + 1)

#else  // the CPU

using Inst = rt::CpuInst;

#define WW_MAX_DEPTH (I.max_depth)
// Memory 0 in locals of each function: a store through a byte pointer may
// alias the context, so with I.mem in every access the compiler reloaded
// the base and the size after each store. Anything that may move or grow
// the memory (memory.grow, a call) is followed by MEM_REFRESH().
#define WW_MEM_LOCALS                             \
  [[maybe_unused]] uint8_t* mem_ = I.mem;         \
  [[maybe_unused]] uint8_t* written_ = I.written; \
  [[maybe_unused]] uint64_t mem_size_ = I.mem_size;
#define MEM_REFRESH() (mem_ = I.mem, written_ = I.written, mem_size_ = I.mem_size)
#define MEM_SIZE mem_size_
#define MEM_PAGES uint32_t(mem_size_ / 65536)
#define LOAD8(a) sem::load8(mem_ + (a))
#define LOAD16(a) sem::load16(mem_ + (a))
#define LOAD32(a) sem::load32(mem_ + (a))
#define LOAD64(a) sem::load64(mem_ + (a))
// Stores flag their granule for the host's instance reset (CpuInst::written).
#define STORE8(a, v) (sem::mark_written(written_, (a)), sem::store8(mem_ + (a), (v)))
#define STORE16(a, v) (sem::mark_written(written_, (a)), sem::store16(mem_ + (a), (v)))
#define STORE32(a, v) (sem::mark_written(written_, (a)), sem::store32(mem_ + (a), (v)))
#define STORE64(a, v) (sem::mark_written(written_, (a)), sem::store64(mem_ + (a), (v)))
#define GLOBAL_GET(g) (*I.globals[g])
#define GLOBAL_SET(g, v) (*I.globals[g] = (v))
// A v128 global's high word follows its low word (the store's GlobalInst).
#define GLOBAL_GET_V128(g) ::ww::sem::v128_of(I.globals[g][0], I.globals[g][1])
#define GLOBAL_SET_V128(g, v)        \
  do {                               \
    const ::ww::sem::V128 gv_ = (v); \
    I.globals[g][0] = gv_.lo;        \
    I.globals[g][1] = gv_.hi;        \
  } while (0)

// The views of semantics/memory_ops.h over the context; growing goes
// through the host, which refreshes the context's pointers.
struct CpuMemView {
  Inst* I;
  uint64_t size() const { return I->mem_size; }
  uint32_t pages() const { return uint32_t(I->mem_size / 65536); }
  uint32_t max_pages() const { return I->mem_max_pages; }
  bool grow_to(uint32_t p) const { return I->api->memory_grow(I, p) != 0; }
  void fill(uint64_t d, uint8_t v, uint32_t n) const {
    memset(I->mem + d, v, n);
    sem::mark_written_range(I->written, d, n);
  }
  void move(uint64_t d, uint64_t s, uint32_t n) const {
    memmove(I->mem + d, I->mem + s, n);
    sem::mark_written_range(I->written, d, n);
  }
  void write(uint64_t d, const uint8_t* src, uint32_t n) const {
    memcpy(I->mem + d, src, n);
    sem::mark_written_range(I->written, d, n);
  }
};
struct CpuTableView {
  Inst* I;
  uint32_t t;
  uint32_t size() const { return I->tables[t].size; }
  uint64_t max_size() const { return I->tables[t].max; }
  uint64_t get(uint32_t i) const { return I->tables[t].elems[i]; }
  void set(uint32_t i, uint64_t v) const { I->tables[t].elems[i] = v; }
  bool grow_to(uint32_t n, uint64_t init) const { return I->api->table_grow(I, t, n, init) != 0; }
};
struct CpuElemView {
  Inst* I;
  uint32_t seg;
  uint32_t size() const { return I->elems[seg].size; }
  uint64_t get(uint32_t i) const { return I->elems[seg].refs[i]; }
  void drop() const { I->api->elem_drop(I, seg); }
};
struct CpuDataView {
  Inst* I;
  uint32_t seg;
  uint64_t size() const { return *I->datas[seg].dropped ? 0 : I->datas[seg].size; }
  const uint8_t* bytes() const { return I->datas[seg].bytes; }
  void drop() const { *I->datas[seg].dropped = 1; }
};
// The switch over a call_indirect's targets checks signatures itself; the
// host checks the rest (call_ref).
struct AnySig {
  TrapCode operator()(uint64_t) const { return TrapCode::None; }
};

#define MEMV (CpuMemView{&I})
#define DATAV(seg) (CpuDataView{&I, (seg)})
#define TABLEV(tb) (CpuTableView{&I, (tb)})
#define ELEMV(seg) (CpuElemView{&I, (seg)})
#define REF_FUNC(f) (uint64_t(I.funcs[f]) + 1)

// Recursion stops with "call stack exhausted" before the native stack of
// the thread runs out, whatever the depth limit.
#define WW_STACK_LOW() (reinterpret_cast<const char*>(__builtin_frame_address(0)) < I.stack_limit)

#endif

// A trap records where it happened and unwinds by early returns: every
// generated function returns RetT() on a trap, every call site checks.
// On the CPU it is cold and out of line, which makes every trap's branch
// the unlikely one: otherwise the bounds check of each load and store is
// laid out as a likely path, which slows hash-wasm's sha256 per thread
// (bench/hashwasm/run-cpu.sh shows it).
#if defined(__CUDACC__)
__device__
#else
[[gnu::cold, gnu::noinline]]
#endif
    inline void
    set_trap(Inst& I, TrapCode c, uint32_t fn, uint32_t pc) {
  I.trap = uint32_t(c);
  I.trap_func = fn;
  I.trap_pc = pc;
}

#define TRAP(name)                                    \
  do {                                                \
    ::ww::gen::set_trap(I, TrapCode::name, kFn, kPc); \
    return RetT();                                    \
  } while (0)
#define TRAP_IF(expr)                         \
  do {                                        \
    TrapCode tc_ = (expr);                    \
    if (WW_UNLIKELY(tc_ != TrapCode::None)) { \
      ::ww::gen::set_trap(I, tc_, kFn, kPc);  \
      return RetT();                          \
    }                                         \
  } while (0)
// A call of import `func` that the device answers: an unknown import's
// trap has the import as its site (no offset), as on the CPU, so that its
// message names it.
#define TRAP_IMPORT_IF(expr, func)                                                        \
  do {                                                                                    \
    TrapCode tc_ = (expr);                                                                \
    if (WW_UNLIKELY(tc_ != TrapCode::None)) {                                             \
      if (tc_ == TrapCode::UnknownImport) ::ww::gen::set_trap(I, tc_, (func), kNoTrapPc); \
      else ::ww::gen::set_trap(I, tc_, kFn, kPc);                                         \
      return RetT();                                                                      \
    }                                                                                     \
  } while (0)
#define WW_CHECK_TRAP()                     \
  do {                                      \
    if (WW_UNLIKELY(I.trap)) return RetT(); \
  } while (0)

#if WW_METERED
#define WW_FUEL_TICK()                                   \
  do {                                                   \
    if (WW_UNLIKELY(--I.fuel == 0)) TRAP(FuelExhausted); \
  } while (0)
#else
#define WW_FUEL_TICK() ((void)0)
#endif

#if defined(__CUDACC__) && WW_DEADLINE
#define WW_DEADLINE_TICK()                                                       \
  do {                                                                           \
    if ((++I.ticks & gpu::kDeadlineTickMask) == 0 && gpu::past_deadline(*I.W)) { \
      ::ww::gen::set_trap(I, TrapCode::Timeout, kFn, kPc);                       \
      I.stopped = true;                                                          \
      return RetT();                                                             \
    }                                                                            \
  } while (0)
#elif WW_DEADLINE
// The host: the batch sets the interrupt byte when the timeout passes or on
// Ctrl-C; a relaxed load every 1024 back-edges costs about nothing.
#define WW_DEADLINE_TICK()                                               \
  do {                                                                   \
    if (WW_UNLIKELY((++I.ticks & 1023u) == 0)) {                         \
      const uint8_t c_ = __atomic_load_n(I.interrupt, __ATOMIC_RELAXED); \
      if (c_) {                                                          \
        ::ww::gen::set_trap(I, TrapCode(c_), kFn, kPc);                  \
        return RetT();                                                   \
      }                                                                  \
    }                                                                    \
  } while (0)
#else
#define WW_DEADLINE_TICK() ((void)0)
#endif

// A loop's back-edge, as the interpreters count it.
#define WW_BACK_EDGE()  \
  do {                  \
    WW_FUEL_TICK();     \
    WW_DEADLINE_TICK(); \
  } while (0)

}  // namespace ww::gen

// Slots of the current frame are the generated function's locals r0, r1, ...
#define SLOT(s) r##s
// A v128 write to slots a (low word) and b (high word): the generator
// spells ops.def's WV128(s, v) out so, since it cannot add to a slot name.
#define WV128_2(a, b, v)                \
  do {                                  \
    const ::ww::sem::V128 wv128_ = (v); \
    SLOT(a) = wv128_.lo;                \
    SLOT(b) = wv128_.hi;                \
  } while (0)
