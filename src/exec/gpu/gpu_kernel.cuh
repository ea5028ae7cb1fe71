// The device interpreter: one WebAssembly instance per GPU thread, running
// the register bytecode with handlers generated from bytecode/ops.def and
// arithmetic from semantics/semantics.h -- the same code the CPU runs.
//
// Layout of per-instance state for a wave of N instances (t = instance in
// the wave): slot s of the frame stack at slots[s * N + t], so the same slot
// of consecutive instances is contiguous (coalesced); call records, globals,
// tables, dropped flags likewise [k * N + t]. Linear memory is interleaved
// or contiguous (see MemoryLayout).
#pragma once

#include <cstdint>

#include "bytecode/bytecode.h"
#include "bytecode/ops.h"
#include "semantics/intrinsics.h"
#include "semantics/semantics.h"
#include "semantics/traps.h"

namespace ww::gpu {

inline constexpr uint64_t kDevForeignRef = uint64_t{1} << 63;

// Threads per block of the interpreter kernel.
inline constexpr uint32_t kBlock = 128;

// Read-only module data, shared by every instance.
struct DevModule {
  const uint32_t* code;
  const uint64_t* consts;
  const uint32_t* br_tables;
  const FunctionCode* funcs;
  uint32_t num_imported_funcs;
  const uint32_t* func_canon;
  const uint32_t* type_canon;
  const uint8_t* import_intrinsic;
  const uint8_t* data_bytes;
  const uint32_t* data_offset;
  const uint32_t* data_size;
  const uint64_t* elem_refs;
  const uint32_t* elem_offset;
  const uint32_t* elem_size;
  const uint32_t* table_offset;
  const uint32_t* table_cap;
  const uint64_t* shared_tables;    // when tables are immutable
  const uint32_t* shared_table_size;
  uint32_t num_tables;
};

// The `gpu` intrinsics' device state.
struct DevIntrinsics {
  uint32_t* image;  // packed RGBA8, row-major, or null
  uint32_t image_w, image_h;
  unsigned long long* ignored_pixels;
  int32_t* state;
  uint32_t state_size;
  TextureView textures[kMaxTextureUnits];
  TextureFilter filter;
};

// Per-wave mutable state.
struct DevWave {
  uint32_t n;      // instances in this wave (the interleave stride)
  uint32_t first;  // global index of the wave's first instance
  uint32_t total;  // instances in the whole batch
  uint32_t entry;  // defined-function index of the export
  uint32_t stack_slots, max_depth;
  // The frame stack: slot a of instance t at slots[((t / 32) * stack_slots
  // + a) * 32 + t % 32]: each warp's stacks side by side, so a slot of a
  // converged warp is one 256-byte access. (Keeping the bottom slots in
  // shared memory measured slower: bench/RESULTS.md.)
  uint64_t* slots;
  uint64_t* io;  // arguments in, results out: value k of instance t at io[k * n + t]
  uint32_t* call_pc;    // return word offset (absolute in code)
  uint32_t* call_func;  // caller's defined-function index
  uint32_t* call_fb;    // caller's frame base slot
  uint8_t* mem;
  uint64_t mem_cap;  // bytes of capacity per instance
  uint32_t* mem_pages;
  uint32_t mem_max_pages;
  uint64_t* globals;
  uint64_t* tables;       // per-instance tables (mutable case)
  uint32_t* table_size;   // per-instance sizes (mutable case)
  uint8_t* data_dropped;
  uint8_t* elem_dropped;
  uint8_t* trap;
  uint32_t* trap_func;
  uint32_t* trap_pc;
  uint8_t* finished;
  uint64_t fuel;         // 0 = unlimited
  uint64_t start_ns;     // globaltimer at batch start
  uint64_t deadline_ns;  // 0 = none
  unsigned long long* done;  // instances finished, in mapped host memory
  bool tables_mutable;
};

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// ---------------------------------------------------------------- memory

template <bool kInterleaved>
struct Mem {
  uint8_t* base;  // this instance's base (contiguous) or its group's base (interleaved)
  uint32_t lane;

  __device__ __forceinline__ static Mem make(const DevWave& w, uint32_t t) {
    Mem m;
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
  __device__ __forceinline__ uint8_t load8(uint64_t a) const { return *byte_ptr(a); }
  __device__ __forceinline__ void store8(uint64_t a, uint8_t v) const { *byte_ptr(a) = v; }

  // Little-endian loads of 1..8 bytes: aligned words go in one access, the
  // rest byte by byte (wasm allows any alignment).
  __device__ __forceinline__ uint64_t load(uint64_t a, int n) const {
    if ((a & 3) == 0 && n >= 4) {
      uint64_t lo = *word_ptr(a);
      if (n == 4) return lo;
      return lo | (uint64_t(*word_ptr(a + 4)) << 32);
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(load8(a + i)) << (8 * i);
    return v;
  }
  __device__ __forceinline__ void store(uint64_t a, uint64_t v, int n) const {
    if ((a & 3) == 0 && n >= 4) {
      *word_ptr(a) = uint32_t(v);
      if (n == 8) *word_ptr(a + 4) = uint32_t(v >> 32);
      return;
    }
    for (int i = 0; i < n; ++i) store8(a + i, uint8_t(v >> (8 * i)));
  }
};

// The bytecode, read through the read-only data cache: every thread of a
// converged warp fetches the same words.
struct CodePtr {
  const uint32_t* p;
  __device__ __forceinline__ uint32_t operator[](uint32_t i) const { return __ldg(p + i); }
  __device__ __forceinline__ uint32_t operator*() const { return __ldg(p); }
  __device__ __forceinline__ CodePtr operator+(uint32_t k) const { return CodePtr{p + k}; }
  __device__ __forceinline__ CodePtr& operator+=(uint32_t k) {
    p += k;
    return *this;
  }
  __device__ __forceinline__ int64_t operator-(CodePtr o) const { return p - o.p; }
  __device__ __forceinline__ bool operator<=(CodePtr o) const { return p <= o.p; }
};

// One thread's frame stack (see DevWave::slots): slot a at gm[a * 32].
struct Frames {
  uint64_t* gm;
  __device__ __forceinline__ uint64_t& at(uint32_t a) const { return gm[uint64_t(a) * 32]; }
};

// ------------------------------------------------------------ intrinsics

// Calls intrinsic `id` with its arguments in stack slots base.. and writes
// its results there.
__device__ inline TrapCode call_intrinsic(uint8_t id, const Frames& fr, uint32_t base,
                                          const DevWave& w, const DevIntrinsics& in, uint32_t t) {
  auto arg = [&](uint32_t k) -> uint64_t { return fr.at(base + k); };
  auto res = [&](uint32_t k, uint64_t v) { fr.at(base + k) = v; };
  switch (static_cast<Intrinsic>(id)) {
    case Intrinsic::GetThreadId:
      res(0, uint32_t(w.first + t));
      return TrapCode::None;
    case Intrinsic::InstanceCount:
      res(0, w.total);
      return TrapCode::None;
    case Intrinsic::GetTime: {
      float s = float(double(global_timer_ns() - w.start_ns) * 1e-9);
      res(0, sem::f32_bits(s));
      return TrapCode::None;
    }
    case Intrinsic::SetPixel: {
      int64_t idx = pixel_index(int32_t(arg(0)), int32_t(arg(1)), in.image_w, in.image_h);
      if (idx < 0 || in.image == nullptr) {
        atomicAdd(in.ignored_pixels, 1ull);
        return TrapCode::None;
      }
      in.image[idx] = pack_rgba8(sem::f32_from_bits(uint32_t(arg(2))), sem::f32_from_bits(uint32_t(arg(3))),
                                 sem::f32_from_bits(uint32_t(arg(4))), sem::f32_from_bits(uint32_t(arg(5))));
      return TrapCode::None;
    }
    case Intrinsic::ReadState: {
      int32_t i = int32_t(arg(0));
      if (!state_index_ok(i, in.state_size)) return TrapCode::StateIndexOutOfRange;
      res(0, uint32_t(atomicAdd(&in.state[i], 0)));
      return TrapCode::None;
    }
    case Intrinsic::WriteState: {
      int32_t i = int32_t(arg(0));
      if (!state_index_ok(i, in.state_size)) return TrapCode::StateIndexOutOfRange;
      atomicExch(&in.state[i], int32_t(arg(1)));
      return TrapCode::None;
    }
    case Intrinsic::AtomicAdd: {
      int32_t i = int32_t(arg(0));
      if (!state_index_ok(i, in.state_size)) return TrapCode::StateIndexOutOfRange;
      res(0, uint32_t(atomicAdd(&in.state[i], int32_t(arg(1)))));
      return TrapCode::None;
    }
    case Intrinsic::TextureSample: {
      int32_t unit = int32_t(arg(0));
      if (unit < 0 || unit >= kMaxTextureUnits || in.textures[unit].rgba == nullptr)
        return TrapCode::TextureUnitUnbound;
      float out[4];
      texture_sample(in.textures[unit], in.filter, sem::f32_from_bits(uint32_t(arg(1))),
                     sem::f32_from_bits(uint32_t(arg(2))), out);
      for (int c = 0; c < 4; ++c) res(c, sem::f32_bits(out[c]));
      return TrapCode::None;
    }
    default:
      return TrapCode::HostError;
  }
}

// ------------------------------------------------------------ the kernel

template <bool kInterleaved>
__global__ void __launch_bounds__(kBlock) interpret_kernel(DevModule M, DevWave W, DevIntrinsics I) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= W.n) return;
  if (W.trap[t] != uint8_t(TrapCode::None)) {  // failed before the call (memory input)
    W.finished[t] = 1;
    atomicAdd(W.done, 1ull);
    return;
  }
  const uint32_t N = W.n;
  const uint32_t nimp = M.num_imported_funcs;
  const CodePtr code{M.code};
  const Mem<kInterleaved> mem = Mem<kInterleaved>::make(W, t);
  uint64_t mem_size = uint64_t(W.mem_pages[t]) * kPageSize;
  uint64_t fuel = W.fuel ? W.fuel : ~uint64_t{0};
  uint32_t ticks = 0;

  uint32_t cur = W.entry;
  uint32_t fb = 0;  // frame base slot
  uint32_t depth = 0;
  const Frames fr{W.slots + (uint64_t(t >> 5) * W.stack_slots) * 32 + (t & 31)};
  CodePtr cb = code + M.funcs[cur].code_begin;
  CodePtr pc = cb;
  TrapCode trap = TrapCode::None;
  bool timed_out = false;
  uint32_t call_base = 0, call_target = 0;
  CodePtr ret_pc{nullptr};

#define SLOT(s) fr.at(fb + (s))
#include "bytecode/handler_macros.h"
  // Backward jumps are loop back-edges: they burn fuel and, now and then,
  // look at the clock.
#define JUMP(tg)                                                            \
  do {                                                                      \
    const CodePtr np_ = cb + (tg);                                        \
    if (np_ <= pc) {                                                        \
      if (--fuel == 0) TRAP(FuelExhausted);                                 \
      if (W.deadline_ns && (++ticks & 1023u) == 0 &&                        \
          global_timer_ns() > W.deadline_ns) {                              \
        timed_out = true;                                                   \
        goto stopped;                                                       \
      }                                                                     \
    }                                                                       \
    pc = np_;                                                               \
    goto dispatch;                                                          \
  } while (0)
#define CONST64(k) M.consts[k]
#define MEM_SIZE mem_size
#define MEM_PAGES uint32_t(mem_size / kPageSize)
#define LOAD8(a) uint8_t(mem.load8(a))
#define LOAD16(a) uint16_t(mem.load((a), 2))
#define LOAD32(a) uint32_t(mem.load((a), 4))
#define LOAD64(a) mem.load((a), 8)
#define STORE8(a, v) mem.store8((a), uint8_t(v))
#define STORE16(a, v) mem.store((a), uint64_t(v), 2)
#define STORE32(a, v) mem.store((a), uint64_t(v), 4)
#define STORE64(a, v) mem.store((a), uint64_t(v), 8)
#define GLOBAL_GET(g) W.globals[uint64_t(g) * N + t]
#define GLOBAL_SET(g, v) (W.globals[uint64_t(g) * N + t] = (v))
#define BR_TABLE(v, start, count)                     \
  do {                                                \
    uint32_t v_ = (v);                                \
    uint32_t k_ = v_ < (count) - 1 ? v_ : (count) - 1; \
    JUMP(M.br_tables[(start) + k_]);                  \
  } while (0)
#define RETURN() goto do_return
#define CALL(base, f)                 \
  do {                                \
    call_base = (base);               \
    call_target = (f) - nimp;         \
    ret_pc = pc + WW_WORDS_S1I;       \
    goto do_call;                     \
  } while (0)
#define CALL_IMPORT(base, f)                                              \
  do {                                                                    \
    if (--fuel == 0) TRAP(FuelExhausted);                                 \
    TRAP_IF(call_intrinsic(M.import_intrinsic[f], fr, fb + (base), W, I, t)); \
    pc += WW_WORDS_S1I;                                                   \
    goto dispatch;                                                        \
  } while (0)
#define CALL_INDIRECT(base, idx, type, tbl)                                       \
  do {                                                                            \
    uint32_t i_ = (idx);                                                          \
    if (i_ >= table_size(tbl)) TRAP(UndefinedElement);                            \
    uint64_t ref_ = table_elem(tbl, i_);                                          \
    if (ref_ == 0) TRAP(UninitializedElement);                                    \
    if (ref_ & kDevForeignRef) TRAP(HostError);                                   \
    uint32_t f_ = uint32_t(ref_ - 1);                                             \
    if (M.func_canon[f_] != M.type_canon[type]) TRAP(IndirectCallTypeMismatch);   \
    if (f_ < nimp) {                                                              \
      if (--fuel == 0) TRAP(FuelExhausted);                                       \
      TRAP_IF(call_intrinsic(M.import_intrinsic[f_], fr, fb + (base), W, I, t));    \
      pc += WW_WORDS_S2II;                                                        \
      goto dispatch;                                                              \
    }                                                                             \
    call_base = (base);                                                           \
    call_target = f_ - nimp;                                                      \
    ret_pc = pc + WW_WORDS_S2II;                                                  \
    goto do_call;                                                                 \
  } while (0)
#define MEMORY_GROW(d, n)                                           \
  do {                                                              \
    uint32_t n_ = (n);                                              \
    uint32_t old_ = W.mem_pages[t];                                 \
    uint64_t want_ = uint64_t(old_) + n_;                           \
    bool ok_ = want_ <= W.mem_max_pages;                            \
    if (ok_) {                                                      \
      W.mem_pages[t] = uint32_t(want_);                             \
      mem_size = want_ * kPageSize;                                 \
    }                                                               \
    W32(d, ok_ ? old_ : 0xffffffffu);                               \
  } while (0)
#define MEMORY_FILL(d, v, n) memory_fill(d, v, n)
#define MEMORY_COPY(d, s, n) memory_copy(d, s, n)
#define MEMORY_INIT(seg, d, s, n) memory_init(seg, d, s, n)
#define DATA_DROP(seg) (W.data_dropped[uint64_t(seg) * N + t] = 1)
#define TABLE_GET(tb, i, out) table_get(tb, i, out)
#define TABLE_SET(tb, i, v) table_set(tb, i, v)
#define TABLE_SIZE(tb) table_size(tb)
#define TABLE_GROW(tb, init, n) table_grow(tb, init, n)
#define TABLE_FILL(tb, i, v, n) table_fill(tb, i, v, n)
#define TABLE_COPY(td, ts, d, s, n) table_copy(td, ts, d, s, n)
#define TABLE_INIT(tb, seg, d, s, n) table_init(tb, seg, d, s, n)
#define ELEM_DROP(seg) (W.elem_dropped[uint64_t(seg) * N + t] = 1)
#define REF_FUNC(f) (uint64_t(f) + 1)

  // Table and bulk-memory helpers as lambdas: they need this thread's
  // view (t, N, mem) and return traps like the CPU's.
  auto table_size = [&](uint32_t tb) -> uint32_t {
    return W.tables_mutable ? W.table_size[uint64_t(tb) * N + t] : M.shared_table_size[tb];
  };
  auto table_elem = [&](uint32_t tb, uint32_t i) -> uint64_t {
    return W.tables_mutable ? W.tables[uint64_t(M.table_offset[tb] + i) * N + t]
                            : M.shared_tables[M.table_offset[tb] + i];
  };
  auto table_put = [&](uint32_t tb, uint32_t i, uint64_t v) {
    W.tables[uint64_t(M.table_offset[tb] + i) * N + t] = v;
  };
  auto table_get = [&](uint32_t tb, uint32_t i, uint64_t* out) -> TrapCode {
    if (i >= table_size(tb)) return TrapCode::TableOutOfBounds;
    *out = table_elem(tb, i);
    return TrapCode::None;
  };
  auto table_set = [&](uint32_t tb, uint32_t i, uint64_t v) -> TrapCode {
    if (i >= table_size(tb)) return TrapCode::TableOutOfBounds;
    table_put(tb, i, v);
    return TrapCode::None;
  };
  auto table_grow = [&](uint32_t tb, uint64_t init, uint32_t n) -> uint32_t {
    uint32_t old = table_size(tb);
    if (uint64_t(old) + n > M.table_cap[tb]) return 0xffffffffu;
    for (uint32_t i = 0; i < n; ++i) table_put(tb, old + i, init);
    W.table_size[uint64_t(tb) * N + t] = old + n;
    return old;
  };
  auto table_fill = [&](uint32_t tb, uint32_t i, uint64_t v, uint32_t n) -> TrapCode {
    if (uint64_t(i) + n > table_size(tb)) return TrapCode::TableOutOfBounds;
    for (uint32_t k = 0; k < n; ++k) table_put(tb, i + k, v);
    return TrapCode::None;
  };
  auto table_copy = [&](uint32_t td, uint32_t ts, uint32_t d, uint32_t s, uint32_t n) -> TrapCode {
    if (uint64_t(d) + n > table_size(td) || uint64_t(s) + n > table_size(ts))
      return TrapCode::TableOutOfBounds;
    if (d <= s) {
      for (uint32_t k = 0; k < n; ++k) table_put(td, d + k, table_elem(ts, s + k));
    } else {
      for (uint32_t k = n; k-- > 0;) table_put(td, d + k, table_elem(ts, s + k));
    }
    return TrapCode::None;
  };
  auto table_init = [&](uint32_t tb, uint32_t seg, uint32_t d, uint32_t s, uint32_t n) -> TrapCode {
    uint32_t seg_size = W.elem_dropped[uint64_t(seg) * N + t] ? 0 : M.elem_size[seg];
    if (uint64_t(s) + n > seg_size || uint64_t(d) + n > table_size(tb))
      return TrapCode::TableOutOfBounds;
    for (uint32_t k = 0; k < n; ++k) table_put(tb, d + k, M.elem_refs[M.elem_offset[seg] + s + k]);
    return TrapCode::None;
  };
  auto memory_fill = [&](uint32_t d, uint32_t v, uint32_t n) -> TrapCode {
    if (uint64_t(d) + n > mem_size) return TrapCode::MemoryOutOfBounds;
    for (uint32_t k = 0; k < n; ++k) mem.store8(uint64_t(d) + k, uint8_t(v));
    return TrapCode::None;
  };
  auto memory_copy = [&](uint32_t d, uint32_t s, uint32_t n) -> TrapCode {
    if (uint64_t(d) + n > mem_size || uint64_t(s) + n > mem_size) return TrapCode::MemoryOutOfBounds;
    if (d <= s) {
      for (uint32_t k = 0; k < n; ++k) mem.store8(uint64_t(d) + k, mem.load8(uint64_t(s) + k));
    } else {
      for (uint32_t k = n; k-- > 0;) mem.store8(uint64_t(d) + k, mem.load8(uint64_t(s) + k));
    }
    return TrapCode::None;
  };
  auto memory_init = [&](uint32_t seg, uint32_t d, uint32_t s, uint32_t n) -> TrapCode {
    uint32_t seg_size = W.data_dropped[uint64_t(seg) * N + t] ? 0 : M.data_size[seg];
    if (uint64_t(s) + n > seg_size || uint64_t(d) + n > mem_size) return TrapCode::MemoryOutOfBounds;
    const uint8_t* src = M.data_bytes + M.data_offset[seg] + s;
    for (uint32_t k = 0; k < n; ++k) mem.store8(uint64_t(d) + k, src[k]);
    return TrapCode::None;
  };

  {
    const FunctionCode& fc = M.funcs[cur];
    if (fc.frame_slots > W.stack_slots || W.max_depth == 0) {
      trap = TrapCode::CallStackExhausted;
      goto trapped;
    }
    for (uint32_t k = 0; k < fc.num_params; ++k) fr.at(k) = W.io[uint64_t(k) * N + t];
    for (uint32_t s = fc.num_params; s < fc.num_locals; ++s) fr.at(s) = 0;
  }

dispatch:
  switch (static_cast<BcOp>(*pc & 0xffffu)) {
#define WW_OP(Name, text, fmt, flags, ...) \
  case BcOp::Name: {                       \
    WW_DEC_##fmt(pc) __VA_ARGS__;          \
    pc += WW_WORDS_##fmt;                  \
    goto dispatch;                         \
  }
#include "bytecode/ops.def"
#undef WW_OP
    default:
      trap = TrapCode::HostError;
      goto trapped;
  }

do_call : {
  const FunctionCode& fc = M.funcs[call_target];
  if (depth + 1 >= W.max_depth || fb + call_base + fc.frame_slots > W.stack_slots)
    TRAP(CallStackExhausted);
  if (--fuel == 0) TRAP(FuelExhausted);
  const uint64_t rec = uint64_t(depth) * N + t;
  W.call_pc[rec] = uint32_t(ret_pc - code);
  W.call_func[rec] = cur;
  W.call_fb[rec] = fb;
  ++depth;
  fb += call_base;
  cur = call_target;
  for (uint32_t s = fc.num_params; s < fc.num_locals; ++s) fr.at(fb + s) = 0;
  cb = pc = code + fc.code_begin;
  goto dispatch;
}

do_return:
  if (depth == 0) goto finished;
  {
    --depth;
    const uint64_t rec = uint64_t(depth) * N + t;
    pc = code + W.call_pc[rec];
    cur = W.call_func[rec];
    fb = W.call_fb[rec];
    cb = code + M.funcs[cur].code_begin;
  }
  goto dispatch;

trapped:
  W.trap[t] = uint8_t(trap);
  W.trap_func[t] = nimp + cur;
  W.trap_pc[t] = uint32_t(pc - cb);
  goto done;
finished:
  for (uint32_t k = 0; k < M.funcs[W.entry].num_results; ++k) W.io[uint64_t(k) * N + t] = fr.at(k);
done:
  W.finished[t] = 1;
  atomicAdd(W.done, 1ull);
  return;

stopped:
  // The timeout: this instance has not finished; it reports so.
  W.finished[t] = 0;
  W.trap[t] = uint8_t(TrapCode::Timeout);
  W.trap_func[t] = nimp + cur;
  W.trap_pc[t] = uint32_t(pc - cb);
  (void)timed_out;
  atomicAdd(W.done, 1ull);

#undef SLOT
#undef JUMP
#undef CONST64
#undef MEM_SIZE
#undef MEM_PAGES
#undef LOAD8
#undef LOAD16
#undef LOAD32
#undef LOAD64
#undef STORE8
#undef STORE16
#undef STORE32
#undef STORE64
#undef GLOBAL_GET
#undef GLOBAL_SET
#undef BR_TABLE
#undef RETURN
#undef CALL
#undef CALL_IMPORT
#undef CALL_INDIRECT
#undef MEMORY_GROW
#undef MEMORY_FILL
#undef MEMORY_COPY
#undef MEMORY_INIT
#undef DATA_DROP
#undef TABLE_GET
#undef TABLE_SET
#undef TABLE_SIZE
#undef TABLE_GROW
#undef TABLE_FILL
#undef TABLE_COPY
#undef TABLE_INIT
#undef ELEM_DROP
#undef REF_FUNC
}

}  // namespace ww::gpu
