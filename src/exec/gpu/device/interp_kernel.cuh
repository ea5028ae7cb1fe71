// The device interpreter: one WebAssembly instance per GPU thread, running
// the register bytecode with handlers generated from bytecode/ops.def and
// arithmetic from semantics/ -- the same code the CPU runs. State, memory,
// tables and intrinsics come from the device headers beside this one, which
// NVRTC-compiled code includes too.
#pragma once

#include <stdint.h>

#include "bytecode/ops.h"
#include "exec/gpu/device/dev_host_calls.cuh"
#include "exec/gpu/device/dev_imports.cuh"
#include "exec/gpu/device/dev_memory.cuh"
#include "exec/gpu/device/dev_stack.cuh"
#include "exec/gpu/device/dev_state.cuh"
#include "exec/gpu/device/dev_tables.cuh"
#include "semantics/memory_ops.h"
#include "semantics/semantics.h"
#include "semantics/simd.h"

namespace ww::gpu {

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

// ------------------------------------------------------------ the kernel

template <DevLayout L>
__global__ void __launch_bounds__(kBlock) interpret_kernel(DevModule M, DevWave W, DevIntrinsics I) {
  const uint32_t t = wave_thread(W);
  if (t >= W.n) return;
  if (W.hc.resuming && !W.hc.waiting[t]) return;  // finished in an earlier launch
  if (W.trap[t] != uint8_t(TrapCode::None)) {
    // Failed before the call (a memory input), or, in a later launch of a
    // chain run a call per launch, stopped in an earlier one.
    if (W.pos_begin == 0) finish_instance(W, t, TrapCode::None, 0, 0, true);
    return;
  }
  const uint32_t N = W.n;
  const uint32_t nimp = M.num_imported_funcs;
  const CodePtr code{M.code};
  const MemAccess<L> mem = MemAccess<L>::make(W, t);
  uint64_t mem_size = uint64_t(W.mem_pages[t]) * kDevPageSize;
  const DevMemView<L> memv{mem, &mem_size, W.self, t};  // W is a parameter: its address would copy it
  MemCache<L> mc = mem.cache();                         // dev_memory.cuh; MEMV makes it forget the image
  uint64_t fuel = W.fuel ? W.fuel : ~uint64_t{0};
  uint32_t ticks = 0;

  uint32_t cur = call_at(W, W.pos_begin).entry;
  uint32_t fb = 0;  // frame base slot
  uint32_t depth = 0;
  const Frames fr{W.slots + (uint64_t(t >> 5) * W.stack_slots) * 32 + (t & 31)};
  CodePtr cb = code + M.funcs[cur].code_begin;
  CodePtr pc = cb;
  TrapCode trap = TrapCode::None;
  uint32_t call_base = 0, call_target = 0;
  CodePtr ret_pc{nullptr};

#define SLOT(s) fr.at(fb + (s))
#include "bytecode/handler_macros.h"
  // Backward jumps are loop back-edges: they burn fuel and, once in
  // kDeadlineTickMask + 1, look at the deadline, out of line: the deadline
  // is read from device memory (the host moves it to stop a wave), and
  // that read inline in every jump handler would slow interpreted kernels
  // (bench/gpu/kernel-ab.sh compares interpreter kernels). ret_pc carries
  // the target there; it is free outside a call.
#define JUMP(tg)                                                 \
  do {                                                           \
    const CodePtr np_ = cb + (tg);                               \
    if (np_ <= pc) {                                             \
      if (--fuel == 0) TRAP(FuelExhausted);                      \
      if (W.deadline_ns && (++ticks & kDeadlineTickMask) == 0) { \
        ret_pc = np_;                                            \
        goto deadline_tick;                                      \
      }                                                          \
    }                                                            \
    pc = np_;                                                    \
    goto dispatch;                                               \
  } while (0)
#define CONST64(k) M.consts[k]
#define CONST64_NEXT(k) M.consts[(k) + 1]
#define MEM_SIZE mem_size
#define MEM_PAGES uint32_t(mem_size / kDevPageSize)
#define LOAD8(a) uint8_t(mem.load8(mc, a))
#define LOAD16(a) uint16_t(mem.load(mc, (a), 2))
#define LOAD32(a) uint32_t(mem.load(mc, (a), 4))
#define LOAD64(a) mem.load(mc, (a), 8)
#define STORE8(a, v) mem.store8(mc, (a), uint8_t(v))
#define STORE16(a, v) mem.store(mc, (a), uint64_t(v), 2)
#define STORE32(a, v) mem.store(mc, (a), uint64_t(v), 4)
#define STORE64(a, v) mem.store(mc, (a), uint64_t(v), 8)
#define GLOBAL_GET(g) W.globals[uint64_t(g) * N + t]
#define GLOBAL_SET(g, v) (W.globals[uint64_t(g) * N + t] = (v))
#define GLOBAL_GET_V128(g) sem::v128_of(GLOBAL_GET(g), GLOBAL_GET(M.global_hi_row + (g)))
#define GLOBAL_SET_V128(g, v)                  \
  do {                                         \
    const sem::V128 gv_ = (v);                 \
    GLOBAL_SET(g, gv_.lo);                     \
    GLOBAL_SET(M.global_hi_row + (g), gv_.hi); \
  } while (0)
#define BR_TABLE(v, start, count)                  \
  do {                                             \
    uint32_t v_ = (v);                             \
    uint32_t k_ = v_ < (count)-1 ? v_ : (count)-1; \
    JUMP(M.br_tables[(start) + k_]);               \
  } while (0)
#define RETURN() goto do_return
#define CALL(base, f)           \
  do {                          \
    call_base = (base);         \
    call_target = (f)-nimp;     \
    ret_pc = pc + WW_WORDS_S1I; \
    goto do_call;               \
  } while (0)
#define CALL_IMPORT(base, f)                                                       \
  do {                                                                             \
    if (--fuel == 0) TRAP(FuelExhausted);                                          \
    bool leave_ = false;                                                           \
    call_target = (f);                                                             \
    TRAP_IF(device_import(M, W, I, t, (f), MEMV, frame_io(fb + (base)), &leave_)); \
    if (leave_) {                                                                  \
      call_base = (base) | uint32_t(WW_WORDS_S1I) << 24;                           \
      goto leave;                                                                  \
    }                                                                              \
    pc += WW_WORDS_S1I;                                                            \
    goto dispatch;                                                                 \
  } while (0)
#define CALL_INDIRECT(base, idx, type, tbl)                                                          \
  do {                                                                                               \
    uint64_t ref_ = 0;                                                                               \
    TRAP_IF(sem::call_indirect_ref(TABLEV(tbl), (idx), DevSigCheck{&M, M.type_canon[type]}, &ref_)); \
    uint32_t f_ = uint32_t(ref_ - 1);                                                                \
    if (f_ < nimp || f_ >= M.num_funcs) {                                                            \
      if (f_ >= nimp) f_ = f_ - M.num_funcs + nimp; /* another instance's: the host's */             \
      if (--fuel == 0) TRAP(FuelExhausted);                                                          \
      bool leave_ = false;                                                                           \
      call_target = f_;                                                                              \
      TRAP_IF(device_import(M, W, I, t, f_, MEMV, frame_io(fb + (base)), &leave_));                  \
      if (leave_) {                                                                                  \
        call_base = (base) | uint32_t(WW_WORDS_S2II) << 24;                                          \
        goto leave;                                                                                  \
      }                                                                                              \
      pc += WW_WORDS_S2II;                                                                           \
      goto dispatch;                                                                                 \
    }                                                                                                \
    call_base = (base);                                                                              \
    call_target = f_ - nimp;                                                                         \
    ret_pc = pc + WW_WORDS_S2II;                                                                     \
    goto do_call;                                                                                    \
  } while (0)
#define MEMV (mc.forget_image(), memv)
#define MEM_REFRESH() ((void)0)
#define DATAV(seg) \
  DevDataView { &M, &W, t, (seg) }
#define TABLEV(tb) \
  DevTableView { &M, &W, t, (tb) }
#define ELEMV(seg) \
  DevElemView { &M, &W, t, (seg) }
#define REF_FUNC(f) (uint64_t(f) + 1)

  // An import's value k at slot base + k * slot_width: intrinsics, WASI and
  // the host's call records take one word per value (no import of a v128
  // module has v128 in its type: Module::imports_v128_functions).
  auto frame_io = [&](uint32_t base) {
    return [&fr, base, w = M.slot_width](uint32_t k) -> uint64_t& { return fr.at(base + k * w); };
  };

  if (W.hc.resuming) {
    cur = W.hc.rs_func[t];
    fb = W.hc.rs_fb[t];
    depth = W.hc.rs_depth[t];
    fuel = W.hc.rs_fuel[t];
    cb = code + M.funcs[cur].code_begin;
    pc = code + W.hc.rs_pc[t];
    const uint32_t packed = W.hc.rs_base[t], base = packed & 0xffffffu;
    trap = resume_from_host(M, W, t, memv, frame_io(fb + base));
    if (trap != TrapCode::None) goto trapped;
    pc += packed >> 24;
    goto dispatch;
  }
  if (W.pos_end) W.pos[t] = W.pos_begin;
start_call : {
  const FunctionCode& fc = M.funcs[cur];
  cb = pc = code + fc.code_begin;
  if (fc.frame_slots > W.stack_slots || W.depth_limit == 0) {
    trap = TrapCode::CallStackExhausted;
    goto trapped;
  }
  const CallAt at = call_at(W, W.pos_end ? W.pos[t] : 0);
  for (uint32_t s = 0; s < fc.num_params; ++s) fr.at(s) = call_arg(W, at, s, t);
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
    default: trap = TrapCode::HostError; goto trapped;
  }

do_call : {
  // A frame base above the instance's own stack is in a segment: those
  // calls, and calls that do not fit, take the longer way.
  const FunctionCode& fc = M.funcs[call_target];
  if (depth + 1 >= W.max_depth || fb + call_base + fc.frame_slots > W.stack_slots || fb > W.stack_slots)
    goto segment_call;
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

segment_call : {
  const FunctionCode& fc = M.funcs[call_target];
  const SegmentMove mv = segment_call(W, t, fr, fb, call_base, fc, depth, cur, uint32_t(ret_pc - code));
  if (mv.trap != TrapCode::None) {
    trap = mv.trap;
    goto trapped;
  }
  if (--fuel == 0) TRAP(FuelExhausted);
  ++depth;
  fb = mv.fb;
  cur = call_target;
  for (uint32_t s = fc.num_params; s < fc.num_locals; ++s) fr.at(fb + s) = 0;
  cb = pc = code + fc.code_begin;
  goto dispatch;
}

do_return:
  if (depth == 0) goto finished;
  if (fb > W.stack_slots) goto segment_return;
  {
    --depth;
    const uint64_t rec = uint64_t(depth) * N + t;
    pc = code + W.call_pc[rec];
    cur = W.call_func[rec];
    fb = W.call_fb[rec];
    cb = code + M.funcs[cur].code_begin;
  }
  goto dispatch;

segment_return : {
  const SegmentReturn r = segment_return(W, t, fr, fb, depth, M.funcs[cur].num_results);
  --depth;
  fb = r.fb;
  pc = code + r.ret_off;
  cur = r.func;
  cb = code + M.funcs[cur].code_begin;
  goto dispatch;
}

leave:
  // Everything else of the instance is in device memory already: frames,
  // call records, globals, memory.
  leave_for_host(M, W, t, call_target, frame_io(fb + (call_base & 0xffffffu)));
  W.hc.rs_pc[t] = uint32_t(pc - code);
  W.hc.rs_func[t] = cur;
  W.hc.rs_fb[t] = fb;
  W.hc.rs_depth[t] = depth;
  W.hc.rs_base[t] = call_base;
  W.hc.rs_fuel[t] = fuel;
  return;

trapped:
  // An unknown import's trap has the import as its site (call_target, set
  // before every import call), so that its message names it.
  if (trap == TrapCode::UnknownImport) finish_instance(W, t, trap, call_target, kNoTrapPc, true);
  else finish_instance(W, t, trap, nimp + cur, uint32_t(pc - cb), true);
  return;
finished:
  if (W.pos_end) {
    // The chain's next call starts on the state this one left, with fuel
    // of its own (as a top-level invoke on the CPU).
    const uint32_t p = W.pos[t] + 1;
    if (p < W.pos_end) {
      W.pos[t] = p;
      cur = call_at(W, p).entry;
      fuel = W.fuel ? W.fuel : ~uint64_t{0};
      goto start_call;
    }
    if (p < W.pos_total) {  // the next launch goes on
      finish_instance(W, t, TrapCode::None, 0, 0, true);
      return;
    }
  }
  for (uint32_t k = 0; k < M.funcs[cur].num_results; ++k) W.io[uint64_t(k) * N + t] = fr.at(k);
  finish_instance(W, t, TrapCode::None, 0, 0, true);
  return;

deadline_tick:
  if (!past_deadline(W)) {
    pc = ret_pc;
    goto dispatch;
  }
stopped:
  // The timeout: this instance has not finished; it reports so.
  finish_instance(W, t, TrapCode::Timeout, nimp + cur, uint32_t(pc - cb), false);

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
#undef GLOBAL_GET_V128
#undef GLOBAL_SET_V128
#undef BR_TABLE
#undef RETURN
#undef CALL
#undef CALL_IMPORT
#undef CALL_INDIRECT
#undef MEMV
#undef MEM_REFRESH
#undef DATAV
#undef TABLEV
#undef ELEMV
#undef REF_FUNC
}

}  // namespace ww::gpu
