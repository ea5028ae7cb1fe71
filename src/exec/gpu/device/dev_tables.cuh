// Tables and segments of one instance on the device, as the views that
// semantics/memory_ops.h's templates take. Tables are per instance when
// some function can change them (DevWave::tables_mutable), else shared.
#pragma once

#include <stdint.h>

#include "exec/gpu/device/dev_state.cuh"

namespace ww::gpu {

struct DevTableView {
  const DevModule* M;
  const DevWave* W;
  uint32_t t, tb;

  __device__ __forceinline__ uint32_t size() const {
    return W->tables_mutable ? W->table_size[uint64_t(tb) * W->n + t] : M->shared_table_size[tb];
  }
  __device__ __forceinline__ uint64_t max_size() const { return M->table_cap[tb]; }
  __device__ __forceinline__ uint64_t get(uint32_t i) const {
    return W->tables_mutable ? W->tables[uint64_t(M->table_offset[tb] + i) * W->n + t]
                             : M->shared_tables[M->table_offset[tb] + i];
  }
  // Only reached when tables_mutable: image building marks every module
  // with a table-changing op so.
  __device__ __forceinline__ void set(uint32_t i, uint64_t v) const {
    W->tables[uint64_t(M->table_offset[tb] + i) * W->n + t] = v;
  }
  __device__ __forceinline__ bool grow_to(uint32_t n, uint64_t init) const {
    for (uint32_t i = size(); i < n; ++i) set(i, init);
    W->table_size[uint64_t(tb) * W->n + t] = n;
    return true;
  }
};

struct DevElemView {
  const DevModule* M;
  const DevWave* W;
  uint32_t t, seg;

  __device__ __forceinline__ uint32_t size() const {
    return W->elem_dropped[uint64_t(seg) * W->n + t] ? 0 : M->elem_size[seg];
  }
  __device__ __forceinline__ uint64_t get(uint32_t i) const { return M->elem_refs[M->elem_offset[seg] + i]; }
  __device__ __forceinline__ void drop() const { W->elem_dropped[uint64_t(seg) * W->n + t] = 1; }
};

struct DevDataView {
  const DevModule* M;
  const DevWave* W;
  uint32_t t, seg;

  __device__ __forceinline__ uint64_t size() const {
    return W->data_dropped[uint64_t(seg) * W->n + t] ? 0 : M->data_size[seg];
  }
  __device__ __forceinline__ const uint8_t* bytes() const { return M->data_bytes + M->data_offset[seg]; }
  __device__ __forceinline__ void drop() const { W->data_dropped[uint64_t(seg) * W->n + t] = 1; }
};

// call_indirect's signature test on the device: references are function
// index + 1, other instances' functions past the index space (DevModule::
// num_funcs); a kDevForeignRef value (a store's externref) is no function.
struct DevSigCheck {
  const DevModule* M;
  uint32_t want;  // canonical type id
  __device__ __forceinline__ TrapCode operator()(uint64_t ref) const {
    if (ref & kDevForeignRef) return TrapCode::HostError;
    return M->func_canon[uint32_t(ref - 1)] == want ? TrapCode::None : TrapCode::IndirectCallTypeMismatch;
  }
};

}  // namespace ww::gpu
