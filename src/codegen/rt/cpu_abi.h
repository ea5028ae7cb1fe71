// The binary interface between generated CPU code (a shared object built
// by the host compiler) and wasmwarp: plain structs and function pointers,
// so nothing of the Store's C++ types crosses it. The host side lives in
// src/compiled/cpu_native.cc.
//
// Generated code reads memory, tables, segments and globals directly
// through CpuInst and calls back only for what changes the Store's storage
// (growing a memory or a table, elem.drop) and for calls that leave the
// compiled code (imports, other instances' functions, functions that were
// not compiled). After each call-back the host refreshes the pointers,
// since the callee may have grown a shared memory or table.
#pragma once

#include <stdint.h>

namespace ww::rt {

// Bumped whenever these structs or the entry table change: a cached shared
// object of another version is rebuilt, never loaded.
inline constexpr uint32_t kCpuAbiVersion = 4;

struct CpuTable {
  uint64_t* elems;
  uint32_t size;
  uint64_t max;  // the size table.grow may reach
};

struct CpuElem {
  const uint64_t* refs;
  uint32_t size;  // 0 once dropped
};

struct CpuData {
  const uint8_t* bytes;
  uint32_t size;
  uint8_t* dropped;  // the instance's own flag
};

struct CpuInst;
using CpuEntryFn = uint32_t (*)(CpuInst* I, uint64_t* slots);

struct CpuHostApi {
  // Grows memory 0 to `pages`; refreshes mem/written/mem_size. 0 when the host
  // cannot allocate.
  uint32_t (*memory_grow)(CpuInst* I, uint32_t pages);
  // Grows table t to n entries filled with init; refreshes tables[t].
  uint32_t (*table_grow)(CpuInst* I, uint32_t t, uint32_t n, uint64_t init);
  void (*elem_drop)(CpuInst* I, uint32_t seg);
  // Calls imported function `func` (module function index) with its
  // arguments in io[0..params), results back in io[0..results). `depth` is
  // the caller's call depth. Returns a TrapCode.
  uint32_t (*call_import)(CpuInst* I, uint32_t func, uint64_t* io, uint32_t depth);
  // call_indirect of a reference the generated code does not call itself
  // (another instance's function, one that was not compiled): the
  // signature check against module type `type_index`, then the call.
  uint32_t (*call_ref)(CpuInst* I, uint64_t ref, uint32_t type_index, uint64_t* io, uint32_t depth);
};

struct CpuInst {
  uint8_t* mem;
  uint8_t* written;  // the written-granule flags of mem (sem::mark_written)
  uint64_t mem_size;
  uint32_t mem_max_pages;
  uint64_t* const* globals;  // one pointer per global of the index space
  CpuTable* tables;
  CpuElem* elems;
  CpuData* datas;
  const uint32_t* funcs;  // store address of each function of the index space
  uint32_t func_base;     // store address of defined function 0
  uint32_t max_depth;
  uint32_t depth;  // the entry function's depth
  uint64_t fuel;   // metered code: instructions left
  // Code built with a deadline reads this byte every kHostTickMask + 1
  // back-edges: non-zero stops it with that trap code (never null).
  const uint8_t* interrupt;
  uint32_t ticks;
  const char* stack_limit;  // recursion stops before the native stack runs out
  uint32_t trap, trap_func, trap_pc;
  const CpuHostApi* api;
  void* host;
  // Tier-up: every loaded unit's entry by defined function (null where
  // none), read with an atomic acquire load: a unit calls another unit's
  // function through it, without the host. Null: calls leave through
  // call_import.
  const CpuEntryFn* direct;
};

struct CpuEntry {
  uint32_t def;  // defined-function index
  CpuEntryFn fn;
};

}  // namespace ww::rt
