// What a GPU kernel sees of a batch: the module's read-only data, one
// wave's per-instance state and the `gpu` intrinsics' buffers. The
// interpreter kernel and NVRTC-compiled code take the same three structs,
// so one wave loop (exec/gpu/wave/wave_loop.cuh) launches either.
//
// Layout of per-instance state for a wave of N instances (t = instance in
// the wave): globals, call records, tables and dropped flags at [k * N + t],
// so the same item of consecutive instances is contiguous (coalesced).
// Linear memory is interleaved or contiguous (dev_memory.cuh).
//
// Compiles with nvcc and NVRTC: no host headers beyond <stdint.h>.
#pragma once

#include <stdint.h>

#include "bytecode/function_code.h"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "semantics/intrinsics.h"
#include "semantics/traps.h"

namespace ww::gpu {

inline constexpr uint64_t kDevForeignRef = uint64_t{1} << 63;

// Threads per block of every batch kernel.
inline constexpr uint32_t kBlock = 128;

// Read-only module data, shared by every instance.
struct DevModule {
  const uint32_t* code;
  const uint64_t* consts;
  const uint32_t* br_tables;
  const FunctionCode* funcs;
  uint32_t num_imported_funcs;
  // References past the index space (num_funcs + k + 1) are other
  // instances' functions: calls to them leave for the host as import slot
  // num_imported_funcs + k (import_* arrays cover them).
  uint32_t num_funcs;
  const uint32_t* func_canon;
  const uint32_t* type_canon;
  const uint8_t* import_intrinsic;
  const uint32_t* import_nparams;  // per imported function
  const uint32_t* import_nresults;
  const uint8_t* data_bytes;
  const uint32_t* data_offset;
  const uint32_t* data_size;
  const uint64_t* elem_refs;
  const uint32_t* elem_offset;
  const uint32_t* elem_size;
  const uint32_t* table_offset;
  const uint32_t* table_cap;
  const uint64_t* shared_tables;  // when tables are immutable
  const uint32_t* shared_table_size;
  uint32_t num_tables;
  // Slots per value (BytecodeModule::slot_width): 2 in a module with v128,
  // whose value k then takes slots 2k and 2k+1, in a frame as in the
  // wave's argument and result rows (DevWave::io).
  uint32_t slot_width;
  // A v128 global g's high word: globals row global_hi_row + g (GpuImage).
  uint32_t global_hi_row;
};

// WASI calls served on the device (dev_wasi.cuh; host_call_server.h's
// DeviceWasi says what each field holds). Per-instance arrays are the
// wave's, at [k * n + t].
struct DevWasi {
  bool on;
  const uint8_t *argv, *env;
  const uint32_t *argv_off, *env_off;
  uint32_t argc, envc;
  // fd 1 and fd 2 writes (log_fd[fd - 1]) become records in `log`: u32
  // instance in the wave, u32 (fd - 1) | length << 1, the bytes padded to
  // 8. A write that finds it full lowers *log_limit to where it would
  // have gone and leaves for the host, which drains the log first.
  bool log_fd[2];
  uint8_t* log;
  uint64_t log_cap;
  unsigned long long *log_used, *log_limit;
  uint64_t out_cap;
  uint64_t* out_bytes;  // [(fd - 1) * n + t]: bytes written so far
  uint8_t* stdio_host;  // [t]: fds 0-2 are the host's from now on
  uint64_t seed;
  uint64_t* rand_count;  // [t]: random_get's counter
  uint64_t* exit_code;   // [t]: code | 1 << 32 once proc_exit ran here
  int64_t clock_base[4];
  uint64_t clock_res[4];
  bool stdio_fdstat_known;
  uint8_t stdio_fdstat[3][wasi::kFdstatSize];
  // Preopens (fds 3 ..): their names one after another; preopen_host[t]
  // once the instance closed one (the host answers for them from then on).
  uint32_t npreopens;
  const uint8_t* preopen_names;
  const uint32_t* preopen_off;
  uint8_t* preopen_host;
  // Read-only files the device holds (null when none may be): file k's
  // bytes, size, largest seek offset the host's file system allows, and
  // kDevFileMetaBytes of metadata. An instance's descriptor j of them at
  // [j * n + t]: fd + 1 (0: free), the file, the offset; the host sets
  // fd_of/file_of between launches, the device moves fd_pos.
  const uint8_t* const* file_data;
  const uint64_t* file_size;
  const uint64_t* file_max_seek;
  const uint8_t* file_meta;
  uint32_t* fd_of;
  uint32_t* file_of;
  uint64_t* fd_pos;
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
  DevWasi wasi;
};

// Calls the host serves (dev_host_calls.cuh). An instance that calls such
// an import writes the call into the next free record and leaves the
// kernel; the host serves every record of the launch in one pass and the
// next launch (`resuming`) takes the instances that left back to the call
// site. Records are dense (an atomic counter hands them out), so the host
// downloads only the calls made, not a row per instance.
struct DevHostCalls {
  bool enabled;    // a server takes the calls; without one they trap (HostError)
  bool resuming;   // this launch resumes the instances that left, and only them
  uint32_t width;  // io values per record
  // Records come in two halves of `wave` each: a launch writes new calls
  // from out_base on while the instances it resumes still read theirs in
  // the other half (a resumed instance may leave again before another has
  // read its results, in blocks that run later).
  uint32_t out_base;
  unsigned long long* count;  // records taken this launch
  uint32_t* calls;            // per record: instance in the wave, import index, memory pages
  uint64_t* io;               // per record: arguments in, results out, `width` values
  uint8_t* trap;              // per record: the host's trap, or 0
  // Per record, the bytes the host wrote into the instance's memory: at
  // patches + patch_off, patch_bytes bytes of {u32 address, u32 length,
  // bytes padded to 4}, applied by the instance itself when it resumes
  // (its own thread materialises sparse chunks, as for any store).
  const uint64_t* patch_off;
  const uint32_t* patch_bytes;
  const uint8_t* patches;
  uint32_t* slot;    // per instance: its record
  uint8_t* waiting;  // per instance: left, not yet resumed
  // Where an interpreted instance resumes: the call's op, function, frame
  // base, depth, the call's base slot | op words << 24, and fuel left.
  uint32_t *rs_pc, *rs_func, *rs_fb, *rs_depth, *rs_base;
  uint64_t* rs_fuel;
  // Compiled code unwinds instead (codegen/generator.cc): each function on
  // the way out saves its slots and where to resume into `frames`, in two
  // halves of `frames_half` words that alternate as the records do; an
  // instance reserves its whole chain at once (frames_used counts this
  // launch's words) and keeps where it ends in rs_frames.
  uint64_t* frames;
  uint64_t frames_half;
  unsigned long long* frames_used;
  uint64_t* rs_frames;
};

// The initial per-instance state besides memory, from the image
// (wave_kernels.cuh's init_state_kernel copies it into every instance).
struct InitState {
  const uint64_t* globals;
  uint32_t nglobals;
  const uint8_t* data_dropped;
  uint32_t ndatas;
  const uint8_t* elem_dropped;
  uint32_t nelems;
  uint32_t init_pages;
  const uint32_t* table_init_size;
  uint32_t total_table_cap;
};

// A call of the chain after the export (BatchRequest::then): the defined
// function, the position past its last repetition, and where its
// arguments start in DevWave::then_args.
struct DevThenCall {
  uint32_t entry;
  uint32_t end;
  uint32_t args;
};

// Per-wave mutable state.
struct DevWave {
  uint32_t n;      // instances in this wave (the interleave stride)
  uint32_t first;  // global index of the wave's first instance
  // The instance a launch's first thread runs: a wave with large inputs
  // per instance runs in slices, one launch each, so that one slice's
  // transfers overlap another's kernel (wave_slices.cu; a multiple of kBlock).
  uint32_t t_base;
  uint32_t total;  // instances in the whole batch
  uint32_t entry;  // defined-function index of the export
  uint32_t stack_slots, max_depth;
  // The interpreter's frame stack: slot a of instance t at slots[((t / 32)
  // * stack_slots + a) * 32 + t % 32]: each warp's stacks side by side, so
  // a slot of a converged warp is one 256-byte access. (Keeping the bottom
  // slots in shared memory is slower: bench/gpu/kernel-ab.sh compares such
  // kernels.) Compiled code keeps its frames in registers and leaves these
  // unallocated.
  uint64_t* slots;
  // Past them, segments of seg_slots slots from stack_pool (dev_stack.cuh):
  // stack_per_lane for each lane t % 32, stack_used[lane] taken this wave.
  // Per instance, stack_seg[t] is the place of the segment it runs in and
  // stack_next[t] that of its first once taken (0: none). slots_limit and
  // depth_limit are the CPU backend's (or the user's) limits on the whole
  // stack, which the segments make reachable.
  uint64_t* stack_pool;
  uint32_t seg_slots, stack_per_lane;
  unsigned int* stack_used;
  uint32_t *stack_seg, *stack_next;
  uint32_t slots_limit, depth_limit;
  // Arguments in, results out: slot k of instance t at io[k * n + t], a
  // value taking DevModule::slot_width slots as in a frame.
  uint64_t* io;
  // Arguments every instance shares: slot k at args[k], and io only holds
  // results (reading one broadcast value beats n copies of it).
  const uint64_t* args;
  bool args_uniform;
  // With uniform arguments: per slot, 0 = args[k], else the instance's
  // index as an i32, i64, f32 or f64 (1..4), made here instead of uploaded.
  const uint8_t* arg_index_kind;
  // A chain of calls: position 0 is the export (entry, with the arguments
  // above), positions 1.. the calls of `then` (one repeated k times takes
  // k). A launch runs positions [pos_begin, pos_end) of each instance, of
  // pos_total; pos_end == 0: no chain. pos[t] is the position instance t
  // runs, in memory rather than a register: the interpreter's loop has
  // none to spare, and it is read once per call.
  const DevThenCall* then;
  const uint64_t* then_args;
  const uint8_t* then_arg_kind;  // as arg_index_kind
  uint32_t pos_begin, pos_end, pos_total;
  uint32_t* pos;
  uint32_t* call_pc;    // interpreter: return word offset (absolute in code)
  uint32_t* call_func;  // interpreter: caller's defined-function index
  uint32_t* call_fb;    // interpreter: caller's frame base slot
  uint8_t* mem;
  uint64_t mem_cap;  // bytes of capacity per instance
  // The sparse layout (dev_memory.cuh): per group of 32 instances,
  // mem_cap >> chunk_shift entries of chunk_table; chunks of 32 << chunk_shift
  // bytes from `pool`; reads of what an instance never wrote come from
  // `image` (the initial memory, padded to whole chunks and followed by one
  // chunk of zeros).
  uint64_t* chunk_table;
  uint8_t* pool;
  uint32_t* pool_used;  // [0] chunks handed out, [1] chunks in the pool
  const uint8_t* image;
  uint32_t image_chunks;
  uint32_t chunk_shift;
  uint32_t cap_chunks;
  // Entries from one group's table to the next: cap_chunks, or 0 where
  // every group reads one table (BatchPlan::chunk_table_shared).
  uint32_t table_stride;
  // This struct's own copy in device memory, for the rare paths (a chunk
  // running out) that need more of it than a memory view carries.
  const DevWave* self;
  // One flag per page of each group of 32 instances (the interleaved
  // layout's unit): set by the first store into it, so that the next wave
  // restores only the pages a wave wrote (dev_memory.cuh, wave_kernels.cuh).
  uint8_t* mem_dirty;
  uint32_t mem_cap_pages;
  uint32_t* mem_pages;
  uint32_t mem_max_pages;  // the pages reserved: what memory.grow reaches in place
  // What memory.grow may reach (the memory's maximum): past mem_max_pages
  // the instance stops and runs again with more reserved. Equal to
  // mem_max_pages where it may not run again (grow then fails there).
  uint32_t mem_grow_limit;
  uint64_t* globals;
  uint64_t* tables;      // per-instance tables (mutable case)
  uint32_t* table_size;  // per-instance sizes (mutable case)
  uint8_t* data_dropped;
  uint8_t* elem_dropped;
  uint8_t* trap;
  uint32_t* trap_func;
  uint32_t* trap_pc;
  uint8_t* finished;
  uint64_t fuel;      // 0 = unlimited
  uint64_t start_ns;  // globaltimer at batch start
  // 0 = none: code does not look at the clock. The host may move the
  // device copy's (self's) to 1 while a wave runs, to stop it (Ctrl-C).
  uint64_t deadline_ns;
  // Instances finished, in device memory; the host copies it on a stream of
  // its own while the kernel runs (the progress line).
  unsigned long long* done;
  // Instances of this wave that trapped: without any, the host skips
  // downloading where they trapped. Then those that finished (trapped or
  // not; the next word): with all of them, their flags are not downloaded.
  unsigned long long* trapped;
  unsigned long long* finished_count;
  // A wave whose results come down while it runs (wave_stream.cu): the
  // instances finished in each stretch of stream_rows, which the host
  // copies while the kernel runs. Null: the results come down after it.
  unsigned int* stream_done;
  uint32_t stream_rows;
  // Streamed 32-bit results, packed as each instance finishes: result k of
  // instance t at packed32[k * n + t], to come down as they are, with no
  // kernel of their own beside the wave's (null: packed after the kernel).
  uint32_t* packed32;
  uint32_t packed_results;
  bool tables_mutable;
  DevHostCalls hc;
};

// The instance (index in the wave) this thread runs.
__device__ __forceinline__ uint32_t wave_thread(const DevWave& w) {
  return w.t_base + blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Whether the wave's deadline has passed, read from the device copy past
// the caches: the host moves it to stop a running wave.
__device__ __forceinline__ bool past_deadline(const DevWave& w) {
  return global_timer_ns() > *reinterpret_cast<const volatile uint64_t*>(&w.self->deadline_ns);
}

// Instance index i as an argument of index kind `kind` (1 i32, 2 i64,
// 3 f32, 4 f64).
__device__ __forceinline__ uint64_t index_arg(uint8_t kind, uint64_t i) {
  switch (kind) {
    case 1: return i & 0xffffffffu;
    case 2: return i;
    case 3: return __float_as_uint(__ull2float_rn(i));
    default: return uint64_t(__double_as_longlong(__ull2double_rn(i)));
  }
}

// Argument slot k of instance t.
__device__ __forceinline__ uint64_t wave_arg(const DevWave& w, uint32_t k, uint32_t t) {
  if (!w.args_uniform) return w.io[uint64_t(k) * w.n + t];
  if (!w.arg_index_kind || !w.arg_index_kind[k]) return w.args[k];
  return index_arg(w.arg_index_kind[k], uint64_t(w.first) + t);
}

// The call at position p of a chain: its defined function and where its
// arguments come from (null: the wave's, as wave_arg reads them). Looked
// up once per call, not per argument: chains are a few calls long.
struct CallAt {
  uint32_t entry;
  const uint64_t* values;
  const uint8_t* kinds;  // as arg_index_kind
};

__device__ __forceinline__ CallAt call_at(const DevWave& w, uint32_t p) {
  if (!w.pos_end || p == 0) return {w.entry, nullptr, nullptr};
  uint32_t c = 0;
  while (w.then[c].end <= p) ++c;
  const DevThenCall& d = w.then[c];
  return {d.entry, w.then_args + d.args, w.then_arg_kind + d.args};
}

// Argument slot k of instance t for the call `c`.
__device__ __forceinline__ uint64_t call_arg(const DevWave& w, const CallAt& c, uint32_t k, uint32_t t) {
  if (!c.values) return wave_arg(w, k, t);
  return c.kinds[k] ? index_arg(c.kinds[k], uint64_t(w.first) + t) : c.values[k];
}

// Backward jumps look at the clock once in this many, when a deadline is set.
inline constexpr uint32_t kDeadlineTickMask = 1023;

// The end of one instance's run, whatever became of it: the progress
// counter the host polls sees every instance once. The threads of a warp
// that finish together add in one atomic: one per instance would cap
// every kernel's rate of instances, whatever it computed.
__device__ __forceinline__ void finish_instance(const DevWave& w, uint32_t t, TrapCode trap, uint32_t func, uint32_t pc,
                                                bool finished) {
  if (trap != TrapCode::None) {
    w.trap[t] = uint8_t(trap);
    w.trap_func[t] = func;
    w.trap_pc[t] = pc;
  }
  w.finished[t] = finished ? 1 : 0;
  for (uint32_t k = 0; w.packed32 && k < w.packed_results; ++k)
    w.packed32[uint64_t(k) * w.n + t] = uint32_t(w.io[uint64_t(k) * w.n + t]);
  const unsigned together = __activemask();
  // Streamed: the warp's results are visible on the device before its
  // stretch counts them, so a copy that the count starts reads them. The
  // warp's barrier orders its threads' writes before its leader's fence
  // (a fence in every thread would slow a short kernel such as thread-id's).
  if (w.stream_done) __syncwarp(together);
  const unsigned trapped = __ballot_sync(together, trap != TrapCode::None);
  const unsigned ended = __ballot_sync(together, finished);
  if ((threadIdx.x & 31u) == unsigned(__ffs(together) - 1)) {
    atomicAdd(w.done, (unsigned long long)__popc(together));
    if (trapped) atomicAdd(w.trapped, (unsigned long long)__popc(trapped));
    if (ended) atomicAdd(w.finished_count, (unsigned long long)__popc(ended));
    if (w.stream_done) {
      // A warp's instances share a stretch: stream_rows is whole warps.
      const uint32_t s = t / w.stream_rows;
      const unsigned k = unsigned(__popc(together));
      __threadfence();
      atomicAdd(&w.stream_done[s], k);
    }
  }
}

}  // namespace ww::gpu
