// The CPU interpreter: a computed-goto dispatch loop whose handlers are
// generated from bytecode/ops.def. wasm->wasm calls within one instance
// push an explicit frame record instead of recursing in C++; only calls into
// host functions or other instances go through cpu_call() again.
#include "exec/cpu/interpreter.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "bytecode/ops.h"
#include "semantics/memory_ops.h"
#include "semantics/semantics.h"
#include "semantics/simd.h"
#include "store/store_views.h"

namespace ww {

namespace {

// Back-edges and calls count a slice of fuel down; at zero, refill()
// looks at the interrupt flag and draws the next slice from the budget (the
// --fuel limit, or without one a budget never used up). Checking the flag
// only there keeps the hot path a single decrement.
constexpr uint64_t kFuelSlice = 1u << 16;

struct FuelCounter {
  uint64_t slice;    // ticks left in this slice
  uint64_t reserve;  // budget beyond the slice

  [[gnu::always_inline]] void load(uint64_t total) {
    slice = std::min(total, kFuelSlice);
    reserve = total - slice;
  }
  uint64_t total() const { return slice + reserve; }
  // The slice ran out: the trap that stops the code, or None with a new slice.
  [[gnu::always_inline]] TrapCode refill(const StoreImpl& S) {
    if (S.limits.interrupt) {
      uint8_t code = S.limits.interrupt->load(std::memory_order_relaxed);
      if (code) return TrapCode(code);
    }
    if (reserve == 0) return TrapCode::FuelExhausted;
    load(reserve);
    return TrapCode::None;
  }
};

struct Frame {
  const uint32_t* ret_pc;
  uint64_t* fp;
  uint32_t def;
};

// Runs defined function `def` of `instance` with its frame at `slots`.
TrapCode run(StoreImpl& S, Store& api, uint32_t instance, uint32_t def, uint64_t* slots) {
  InstanceRec& inst = S.instances[instance];
  const CompiledModule& cm = *inst.module;
  const BytecodeModule& bc = cm.code.bytecode;
  const uint32_t* const code = bc.code.data();
  const FunctionCode* const funcs = bc.funcs.data();
  const uint64_t* const consts = bc.consts.data();
  const uint32_t* const br_tables = bc.br_tables.data();
  uint64_t* const* const globals = inst.global_ptrs.data();
  const uint32_t nimp = cm.module.num_imported_funcs;
  uint64_t* const stack_begin = S.stack.data();
  uint64_t* const stack_end = stack_begin + S.stack.size();
  const uint32_t max_depth = S.limits.max_call_depth;
  const uint32_t entry_depth = S.depth;
  const bool metered = S.limits.fuel != 0;
  // Mixed tiers: a callee with compiled code runs it; tier-up counts the
  // calls and back-edges of each function (NativeCode::runnable, profile).
  const std::atomic<uint8_t>* const native_ready = inst.native ? inst.native->runnable(S) : nullptr;
  TierProfile* const profile = native_ready ? inst.native->profile() : nullptr;
  uint32_t* const counts = profile ? profile->counts() : nullptr;
  const uint32_t hot_mask = profile ? profile->every - 1 : 0;
  // Unmetered runs count down from a number never reached.
  FuelCounter fuel;
  fuel.load(metered ? S.fuel_left : ~uint64_t{0});
  // Views are built whether or not the module has a memory: validated
  // code uses MEMV only when it does.
  const StoreMemView memv{inst.memories.empty() ? nullptr : &S.memories[inst.memories[0]]};
  uint8_t* mem = nullptr;
  uint8_t* written = nullptr;
  uint64_t mem_size = 0;
  auto refresh_memory = [&] {
    if (memv.m) {
      mem = memv.m->data.data();
      mem_size = memv.m->data.size();
      written = memv.m->written_flags();
    }
  };
  refresh_memory();

  std::vector<Frame> frames;
  uint64_t* fp = slots;
  uint32_t cur = def;
  const uint32_t* cb = nullptr;  // current function's first word
  const uint32_t* pc = nullptr;
  TrapCode trap = TrapCode::None;
  // Operands of a same-instance call, shared by call and call_indirect.
  uint64_t* call_fp = nullptr;
  uint32_t call_def = 0;
  const uint32_t* ret_pc = nullptr;

  static const void* const kLabels[] = {
#define WW_OP(Name, text, fmt, flags, ...) &&L_##Name,
#include "bytecode/ops.def"
#undef WW_OP
  };
#define DISPATCH() goto* kLabels[*pc & 0xffffu]

  // The entry frame.
  {
    const FunctionCode& fc = funcs[cur];
    if (S.depth >= max_depth || size_t(stack_end - fp) < fc.frame_slots) {
      S.last_trap = TrapInfo{TrapCode::CallStackExhausted, nimp + cur, 0};
      return TrapCode::CallStackExhausted;
    }
    ++S.depth;
    std::memset(fp + fc.num_params, 0, sizeof(uint64_t) * (fc.num_locals - fc.num_params));
    cb = pc = code + fc.code_begin;
    if (counts && (++counts[cur] & hot_mask) == 0) profile->hot(cur);
  }
  DISPATCH();

  // ---- accessors used by the handler bodies
#define SLOT(s) fp[s]
#include "bytecode/handler_macros.h"
#define TICK_SLOW() TRAP_IF(fuel.refill(S))
  // Backward jumps are loop back-edges: they burn fuel, and count.
#define JUMP(t)                                                         \
  do {                                                                  \
    const uint32_t* np_ = cb + (t);                                     \
    if (np_ <= pc) {                                                    \
      if (counts && (++counts[cur] & hot_mask) == 0) profile->hot(cur); \
      if (--fuel.slice == 0) TICK_SLOW();                               \
    }                                                                   \
    pc = np_;                                                           \
    DISPATCH();                                                         \
  } while (0)
#define CONST64(k) consts[k]
#define CONST64_NEXT(k) consts[(k) + 1]
#define LOAD8(a) sem::load8(mem + (a))
#define LOAD16(a) sem::load16(mem + (a))
#define LOAD32(a) sem::load32(mem + (a))
#define LOAD64(a) sem::load64(mem + (a))
  // Stores flag their granule (sem::mark_written, MemoryInst::written).
#define STORE8(a, v) (sem::mark_written(written, (a)), sem::store8(mem + (a), (v)))
#define STORE16(a, v) (sem::mark_written(written, (a)), sem::store16(mem + (a), (v)))
#define STORE32(a, v) (sem::mark_written(written, (a)), sem::store32(mem + (a), (v)))
#define STORE64(a, v) (sem::mark_written(written, (a)), sem::store64(mem + (a), (v)))
#define MEM_SIZE mem_size
#define MEM_PAGES uint32_t(mem_size / kPageSize)
#define GLOBAL_GET(g) (*globals[g])
#define GLOBAL_SET(g, v) (*globals[g] = (v))
  // A v128 global's high word follows its low word (GlobalInst::hi).
#define GLOBAL_GET_V128(g) sem::v128_of(globals[g][0], globals[g][1])
#define GLOBAL_SET_V128(g, v)  \
  do {                         \
    const sem::V128 gv_ = (v); \
    globals[g][0] = gv_.lo;    \
    globals[g][1] = gv_.hi;    \
  } while (0)
#define BR_TABLE(v, start, count)                  \
  do {                                             \
    uint32_t v_ = (v);                             \
    uint32_t k_ = v_ < (count)-1 ? v_ : (count)-1; \
    JUMP(br_tables[(start) + k_]);                 \
  } while (0)
#define RETURN() goto do_return
#define CALL(base, f)           \
  do {                          \
    call_fp = fp + (base);      \
    call_def = (f)-nimp;        \
    ret_pc = pc + WW_WORDS_S1I; \
    goto do_call;               \
  } while (0)
#define CALL_IMPORT(base, f)    \
  do {                          \
    ret_pc = pc + WW_WORDS_S1I; \
    call_fp = fp + (base);      \
    call_def = inst.funcs[f];   \
    goto do_call_store;         \
  } while (0)
#define CALL_INDIRECT(base, idx, type, tbl)                                                             \
  do {                                                                                                  \
    uint64_t ref_ = 0;                                                                                  \
    TRAP_IF(sem::call_indirect_ref(TABLEV(tbl), (idx), StoreSigCheck{&S, inst.type_ids[type]}, &ref_)); \
    const FuncInst& f_ = S.funcs[uint32_t(ref_ - 1)];                                                   \
    ret_pc = pc + WW_WORDS_S2II;                                                                        \
    call_fp = fp + (base);                                                                              \
    if (f_.instance == instance) {                                                                      \
      call_def = f_.defined_index;                                                                      \
      goto do_call;                                                                                     \
    }                                                                                                   \
    call_def = uint32_t(ref_ - 1);                                                                      \
    goto do_call_store;                                                                                 \
  } while (0)
#define MEMV memv
#define MEM_REFRESH() refresh_memory()
#define DATAV(seg) StoreDataView::of(cm, inst, (seg))
#define TABLEV(t) table_view(S, inst, (t))
#define ELEMV(seg) elem_view(inst, (seg))
#define REF_FUNC(f) (uint64_t(inst.funcs[f]) + 1)

#define WW_OP(Name, text, fmt, flags, ...) \
  L_##Name : {                             \
    WW_DEC_##fmt(pc) __VA_ARGS__;          \
    pc += WW_WORDS_##fmt;                  \
    DISPATCH();                            \
  }
#include "bytecode/ops.def"
#undef WW_OP

do_call : {
  if (counts && (++counts[call_def] & hot_mask) == 0) profile->hot(call_def);
  if (native_ready && native_ready[call_def].load(std::memory_order_acquire)) {
    call_def = inst.funcs[nimp + call_def];  // the callee's compiled code, through the store
    goto do_call_store;
  }
  const FunctionCode& fc = funcs[call_def];
  if (S.depth >= max_depth || size_t(stack_end - call_fp) < fc.frame_slots) TRAP(CallStackExhausted);
  if (--fuel.slice == 0) TICK_SLOW();
  frames.push_back({ret_pc, fp, cur});
  ++S.depth;
  fp = call_fp;
  cur = call_def;
  std::memset(fp + fc.num_params, 0, sizeof(uint64_t) * (fc.num_locals - fc.num_params));
  cb = pc = code + fc.code_begin;
  DISPATCH();
}

do_call_store : {
  // A host function, another instance's function or compiled code: re-enter through
  // cpu_call with the callee's frame at call_fp.
  const FuncInst& f = S.funcs[call_def];
  const FuncType& ft = S.types[f.type_id];
  const size_t np = ft.params.size(), nr = ft.results.size();
  // A module with v128 values and one without lay values out differently
  // (BytecodeModule::slot_width): the arguments and results move between.
  const uint32_t callee_w = slot_width_of(S, call_def);
  if (callee_w != bc.slot_width && size_t(stack_end - call_fp) < std::max(np, nr) * 2) TRAP(CallStackExhausted);
  relayout_slots(call_fp, np, bc.slot_width, callee_w);
  if (f.instance == kHostInstance) {
    size_t need = std::max(np, nr);
    if (size_t(stack_end - call_fp) < need) TRAP(CallStackExhausted);
    // A host function that re-enters Store::invoke builds frames above ours.
    S.stack_top = uint32_t(call_fp - stack_begin + need);
  }
  if (--fuel.slice == 0) TICK_SLOW();
  if (metered) S.fuel_left = fuel.total();
  TrapCode t = cpu_call(S, api, call_def, call_fp);
  if (metered) fuel.load(S.fuel_left);
  refresh_memory();
  if (t != TrapCode::None) {
    trap = t;
    goto trapped;
  }
  relayout_slots(call_fp, nr, callee_w, bc.slot_width);
  pc = ret_pc;
  DISPATCH();
}

do_return:
  --S.depth;
  if (frames.empty()) {
    if (metered) S.fuel_left = fuel.total();
    return TrapCode::None;
  }
  {
    const Frame& f = frames.back();
    pc = f.ret_pc;
    fp = f.fp;
    cur = f.def;
    cb = code + funcs[cur].code_begin;
    frames.pop_back();
  }
  DISPATCH();

trapped:
  // The innermost frame that sees a trap records where it happened.
  if (S.last_trap.code == TrapCode::None) {
    S.last_trap = TrapInfo{trap, nimp + cur, uint32_t(pc - cb)};
  }
  if (metered) S.fuel_left = fuel.total();
  S.depth = entry_depth;
  return trap;
}

}  // namespace

TrapCode cpu_call(StoreImpl& store, Store& api, uint32_t func_addr, uint64_t* slots) {
  const FuncInst& f = store.funcs[func_addr];
  if (f.instance != kHostInstance) {
    const InstanceRec& inst = store.instances[f.instance];
    if (inst.native && inst.native->has(store, f.defined_index))
      return inst.native->call(store, api, f.instance, f.defined_index, slots);
    return run(store, api, f.instance, f.defined_index, slots);
  }
  if (store.depth >= store.limits.max_call_depth) return TrapCode::CallStackExhausted;
  ++store.depth;
  TrapCode t = f.host(api, slots);
  --store.depth;
  return t;
}

}  // namespace ww
