// The flattened, pointer-free picture of one instantiated module that the
// GPU kernel runs from: the bytecode, the read-only tables the kernel needs,
// and the initial per-instance state (memory image, globals, tables,
// dropped segments). Built on the host from a Store instance, so the
// kernel never sees a host structure, and written back the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "store/store.h"

namespace ww::gpu {

// References inside the GPU image: 0 is null; a function of this instance's
// index space is (function index + 1); another instance's function that a
// table or global holds is (num_funcs + k + 1), foreign_funcs[k], which the
// device calls as an import the host serves (import slot
// num_imported_funcs + k); an externref keeps its store value with
// kForeignRef set.
inline constexpr uint64_t kForeignRef = uint64_t{1} << 63;

struct GpuImage {
  // Bytecode, as translated.
  std::vector<uint32_t> code;
  std::vector<uint64_t> consts;
  std::vector<uint32_t> br_tables;
  std::vector<FunctionCode> funcs;  // defined functions
  uint32_t num_imported_funcs = 0;
  uint32_t num_funcs = 0;   // the module's function index space
  uint32_t slot_width = 1;  // BytecodeModule::slot_width: 2 with v128
  // Per function of the index space, then per foreign function: canonical type id.
  std::vector<uint32_t> func_canon;
  std::vector<uint32_t> type_canon;  // per type index
  // Per imported function, then per foreign function (the host's).
  std::vector<uint8_t> import_intrinsic;  // Intrinsic, DevWasiCall or kDevHostImport
  std::vector<uint32_t> import_nparams, import_nresults;
  std::vector<uint32_t> foreign_funcs;  // store addresses of other instances' functions

  // Segments.
  std::vector<uint8_t> data_bytes;
  std::vector<uint32_t> data_offset, data_size;
  std::vector<uint8_t> data_dropped;  // initial, per segment
  std::vector<uint64_t> elem_refs;    // every segment's refs, GPU encoding
  std::vector<uint32_t> elem_offset, elem_size;
  std::vector<uint8_t> elem_dropped;

  // Memory 0 (absent when has_memory is false).
  bool has_memory = false;
  // Initial contents up to the last non-zero byte; the rest of init_pages
  // * 64 KiB is zeros. (Copied and scanned whole, a Rust module's 1 MiB
  // stack would weigh on every batch's set-up.)
  std::vector<uint8_t> memory;
  uint32_t init_pages = 0;
  uint32_t max_pages = 0;  // the memory's own maximum (declared max, store cap)

  // Globals: initial bits, GPU reference encoding for funcref globals; in
  // a module with v128 globals, then the high word of every global (global
  // g's at global_types.size() + g: rows of their own keep the low words
  // where every other global's are).
  std::vector<uint64_t> globals;
  std::vector<ValType> global_types;

  // Tables: initial contents, concatenated; table_offset[t] is where table
  // t's capacity starts.
  std::vector<uint64_t> table_elems;  // initial size of each table, GPU encoding
  std::vector<uint32_t> table_init_size, table_cap, table_offset;
  std::vector<ValType> table_types;
  // True when some function can change a table (table.set/grow/fill/copy/
  // init): then each instance gets its own copy, else all share one.
  bool tables_mutable = false;
  bool uses_memory_grow = false;
  // False when nothing the module runs can write its memory (no store or
  // bulk memory op, no import the host or WASI serves): a sparse batch then
  // needs no pool to speak of.
  bool writes_memory = true;

  uint32_t total_table_cap() const;
};

// Builds the image of `instance` of `store`. `intrinsic_of` maps each
// imported function's store address to an Intrinsic id, or kDevHostImport
// (calling such an import on the GPU traps). Fails with a clear message for
// what the GPU cannot run (a function import from another module that the
// batch would call is allowed to exist; it traps only if called).
// Tables that can change get a capacity of min(declared max,
// max_table_size), or their size plus kTableGrowRoom when max_table_size is 0.
inline constexpr uint32_t kTableGrowRoom = 1024;
// `fresh`: the instance is as instantiation left it (no --init ran in it).
Result<GpuImage> build_image(StoreImpl& store, uint32_t instance, const std::vector<uint8_t>& import_intrinsics,
                             uint32_t max_table_size = 0, bool fresh = false);

// Converts between store references and GPU references of `instance`;
// to_gpu_ref gives another instance's function its place in img.
uint64_t to_gpu_ref(const StoreImpl& store, const InstanceRec& inst, GpuImage& img, ValType t, uint64_t v);
uint64_t from_gpu_ref(const InstanceRec& inst, const GpuImage& img, ValType t, uint64_t v);

// Writes one instance's final state back into the store: memory (pages and
// bytes), globals, tables, dropped segments.
struct InstanceState {
  uint32_t pages = 0;
  std::vector<uint8_t> memory;
  std::vector<uint64_t> globals;
  std::vector<uint32_t> table_size;
  std::vector<uint64_t> table_elems;  // capacity layout of GpuImage
  std::vector<uint8_t> data_dropped, elem_dropped;
};
void write_back(StoreImpl& store, uint32_t instance, const GpuImage& img, const InstanceState& st);

}  // namespace ww::gpu
