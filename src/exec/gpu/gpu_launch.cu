// Host side of the GPU backend: device probing, memory planning and waves,
// uploads, launches, progress and timeout, downloads. Every CUDA call is
// checked and a failure becomes an Error naming the call. The CUDA runtime
// is linked statically and loads the driver at run time, so this binary
// starts (and reports "no GPU") on machines without one.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/gpu_image.h"
#include "exec/gpu/device/interp_kernel.cuh"
#include "exec/gpu/gpu_plan.h"

namespace ww::gpu {

namespace {

#define WW_CUDA(call)                                                                     \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess)                                                                \
      return make_error(kNoOffset, std::string("CUDA error in ") + #call + ": " +         \
                                       cudaGetErrorString(e_));                           \
  } while (0)

// Device allocations freed on every exit path.
class DeviceArena {
 public:
  ~DeviceArena() {
    for (void* p : ptrs_) cudaFree(p);
  }
  template <class T>
  Status alloc(T** out, size_t count) {
    void* p = nullptr;
    size_t bytes = std::max<size_t>(count * sizeof(T), 16);
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess)
      return make_error(kNoOffset, "GPU out of memory allocating " + std::to_string(bytes) +
                                       " bytes: " + cudaGetErrorString(e));
    ptrs_.push_back(p);
    *out = static_cast<T*>(p);
    return Status::Ok();
  }
  template <class T>
  Status upload(const T** out, const std::vector<T>& v) {
    T* p;
    WW_TRY(alloc(&p, v.size()));
    if (!v.empty()) WW_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    *out = p;
    return Status::Ok();
  }

 private:
  std::vector<void*> ptrs_;
};

__global__ void read_timer_kernel(uint64_t* out) { *out = global_timer_ns(); }

// Fills every instance's linear memory: the image's words, then zeros up to
// the capacity (memory.grow hands out zeroed pages).
template <bool kInterleaved>
__global__ void init_memory_kernel(DevWave W, const uint32_t* image, uint64_t image_words) {
  const uint64_t cap_words = W.mem_cap / 4;
  const uint64_t total = cap_words * W.n;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += uint64_t(gridDim.x) * blockDim.x) {
    // Consecutive threads write consecutive addresses: in the interleaved
    // layout the same word of consecutive instances, in the contiguous one
    // consecutive words of one instance.
    uint32_t t = kInterleaved ? uint32_t(i % W.n) : uint32_t(i / cap_words);
    uint64_t w = kInterleaved ? i / W.n : i % cap_words;
    uint32_t v = w < image_words ? image[w] : 0u;
    Mem<kInterleaved> m = Mem<kInterleaved>::make(W, t);
    *m.word_ptr(w * 4) = v;
  }
}

__global__ void init_state_kernel(DevModule M, DevWave W, const uint64_t* globals, uint32_t nglobals,
                                  const uint8_t* data_dropped, uint32_t ndatas,
                                  const uint8_t* elem_dropped, uint32_t nelems, uint32_t init_pages,
                                  const uint32_t* table_init_size, uint32_t total_table_cap) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= W.n) return;
  const uint32_t N = W.n;
  W.mem_pages[t] = init_pages;
  for (uint32_t g = 0; g < nglobals; ++g) W.globals[uint64_t(g) * N + t] = globals[g];
  for (uint32_t d = 0; d < ndatas; ++d) W.data_dropped[uint64_t(d) * N + t] = data_dropped[d];
  for (uint32_t e = 0; e < nelems; ++e) W.elem_dropped[uint64_t(e) * N + t] = elem_dropped[e];
  if (W.tables_mutable) {
    for (uint32_t k = 0; k < total_table_cap; ++k) W.tables[uint64_t(k) * N + t] = M.shared_tables[k];
    for (uint32_t tb = 0; tb < M.num_tables; ++tb) W.table_size[uint64_t(tb) * N + t] = table_init_size[tb];
  }
  W.trap[t] = 0;
  W.finished[t] = 0;
  W.trap_func[t] = 0;
  W.trap_pc[t] = 0;
}

// Writes record t of `records` into instance t's memory at `address`; an
// instance whose record does not fit its memory traps before it runs.
template <bool kInterleaved>
__global__ void mem_in_kernel(DevWave W, const uint8_t* records, uint32_t record_size, uint32_t address) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= W.n) return;
  uint64_t size = uint64_t(W.mem_pages[t]) * kPageSize;
  if (uint64_t(address) + record_size > size) {
    W.trap[t] = uint8_t(TrapCode::MemoryOutOfBounds);
    W.trap_pc[t] = kNoTrapPc;
    return;
  }
  Mem<kInterleaved> m = Mem<kInterleaved>::make(W, t);
  const uint8_t* r = records + uint64_t(t) * record_size;
  for (uint32_t k = 0; k < record_size; ++k) m.store8(uint64_t(address) + k, r[k]);
}

template <bool kInterleaved>
__global__ void mem_out_kernel(DevWave W, uint8_t* out, uint32_t length, uint32_t address) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= W.n) return;
  uint8_t* o = out + uint64_t(t) * length;
  uint64_t size = uint64_t(W.mem_pages[t]) * kPageSize;
  // A trapped instance's record stays zeros, as on the CPU.
  if (W.trap[t] != 0 || uint64_t(address) + length > size) {
    for (uint32_t k = 0; k < length; ++k) o[k] = 0;
    if (W.trap[t] == 0) {
      W.trap[t] = uint8_t(TrapCode::MemoryOutOfBounds);
      W.trap_pc[t] = kNoTrapPc;
    }
    return;
  }
  Mem<kInterleaved> m = Mem<kInterleaved>::make(W, t);
  for (uint32_t k = 0; k < length; ++k) o[k] = m.load8(uint64_t(address) + k);
}

// Instance 0's linear memory, de-interleaved, for writing state back.
template <bool kInterleaved>
__global__ void gather_memory_kernel(DevWave W, uint8_t* out, uint64_t bytes) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += uint64_t(gridDim.x) * blockDim.x) {
    out[i] = Mem<kInterleaved>::make(W, 0).load8(i);
  }
}

template <class T>
Status download_column0(std::vector<T>& out, const T* dev, uint32_t rows, uint32_t n) {
  // Element k of instance 0 lives at dev[k * n]: one strided copy.
  out.resize(rows);
  if (rows)
    WW_CUDA(cudaMemcpy2D(out.data(), sizeof(T), dev, sizeof(T) * n, sizeof(T), rows,
                         cudaMemcpyDeviceToHost));
  return Status::Ok();
}

std::vector<uint8_t> import_intrinsics_of(const StoreImpl& s, uint32_t instance) {
  const InstanceRec& inst = s.instances[instance];
  const Module& m = inst.module->module;
  std::vector<uint8_t> ids;
  for (const Import& im : m.imports) {
    if (im.kind != ExternKind::Func) continue;
    const IntrinsicInfo* info = im.module == kModuleName ? find_intrinsic(im.field) : nullptr;
    ids.push_back(info ? uint8_t(info->id) : kNoIntrinsic);
  }
  return ids;
}

}  // namespace

bool built_with_cuda() { return true; }

DeviceInfo probe_device() {
  DeviceInfo d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    d.reason = std::string("no usable NVIDIA GPU: ") + cudaGetErrorString(e);
    return d;
  }
  if (count == 0) {
    d.reason = "no NVIDIA GPU found";
    return d;
  }
  cudaDeviceProp p{};
  if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) {
    d.reason = std::string("cannot read GPU properties: ") + cudaGetErrorString(e);
    return d;
  }
  size_t free_b = 0, total_b = 0;
  if ((e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
    d.reason = std::string("cannot read GPU memory: ") + cudaGetErrorString(e);
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.total_bytes = total_b;
  d.free_bytes = free_b;
  return d;
}

Result<BatchResult> run_batch(const BatchRequest& req) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  DeviceInfo dev = probe_device();
  if (!dev.available) return make_error(kNoOffset, dev.reason);
  if (!req.module) return make_error(kNoOffset, "GPU batch: no module");
  const Module& mod = req.module->module;
  if (req.func_index < mod.num_imported_funcs || req.func_index >= mod.num_funcs())
    return make_error(kNoOffset, "GPU batch: the export is not a function defined by the module");
  if (req.instances == 0) return make_error(kNoOffset, "GPU batch: no instances");

  // The instances' initial state: a fresh CPU instantiation, or the
  // caller's instance.
  std::unique_ptr<Store> own_store;
  GpuBatch fallback_batch;
  GpuContext ctx{req.batch ? req.batch : &fallback_batch, 0};
  Store* store = req.source_store;
  uint32_t instance = req.source_instance;
  if (!store) {
    own_store = std::make_unique<Store>();
    store = own_store.get();
    auto imports = link_gpu_imports(*store, mod, &ctx);
    if (!imports) return imports.error();
    auto inst = store->instantiate(req.module, *imports);
    if (auto* err = std::get_if<InstantiateError>(&inst)) return make_error(kNoOffset, err->message);
    instance = std::get<uint32_t>(inst);
  }
  StoreImpl& S = store->impl();
  auto img_r = build_image(S, instance, import_intrinsics_of(S, instance), req.max_table_size);
  if (!img_r) return img_r.error();
  GpuImage& img = *img_r;
  const InstanceRec& irec = S.instances[instance];

  WW_ASSIGN_OR_RETURN(BatchPlan plan, plan_for(req, img, dev.free_bytes));
  if (req.on_plan) req.on_plan(plan, dev.name);
  const FuncType& ftype = mod.func_type(req.func_index);
  const uint32_t nparams = uint32_t(ftype.params.size());
  const uint32_t nres = uint32_t(ftype.results.size());
  if (req.args.size() != (req.args_per_instance ? uint64_t(req.instances) * nparams : nparams))
    return make_error(kNoOffset, "GPU batch: argument count does not match the function");

  DeviceArena arena;
  // Read-only module data.
  DevModule M{};
  WW_TRY(arena.upload(&M.code, img.code));
  WW_TRY(arena.upload(&M.consts, img.consts));
  WW_TRY(arena.upload(&M.br_tables, img.br_tables));
  WW_TRY(arena.upload(&M.funcs, img.funcs));
  M.num_imported_funcs = img.num_imported_funcs;
  WW_TRY(arena.upload(&M.func_canon, img.func_canon));
  WW_TRY(arena.upload(&M.type_canon, img.type_canon));
  WW_TRY(arena.upload(&M.import_intrinsic, img.import_intrinsic));
  WW_TRY(arena.upload(&M.data_bytes, img.data_bytes));
  WW_TRY(arena.upload(&M.data_offset, img.data_offset));
  WW_TRY(arena.upload(&M.data_size, img.data_size));
  WW_TRY(arena.upload(&M.elem_refs, img.elem_refs));
  WW_TRY(arena.upload(&M.elem_offset, img.elem_offset));
  WW_TRY(arena.upload(&M.elem_size, img.elem_size));
  WW_TRY(arena.upload(&M.table_offset, img.table_offset));
  WW_TRY(arena.upload(&M.table_cap, img.table_cap));
  WW_TRY(arena.upload(&M.shared_tables, img.table_elems));
  WW_TRY(arena.upload(&M.shared_table_size, img.table_init_size));
  M.num_tables = uint32_t(img.table_cap.size());
  const uint64_t* d_globals_init;
  const uint8_t *d_data_dropped, *d_elem_dropped;
  const uint32_t* d_table_init_size;
  WW_TRY(arena.upload(&d_globals_init, img.globals));
  WW_TRY(arena.upload(&d_data_dropped, img.data_dropped));
  WW_TRY(arena.upload(&d_elem_dropped, img.elem_dropped));
  WW_TRY(arena.upload(&d_table_init_size, img.table_init_size));
  std::vector<uint32_t> image_words((img.memory.size() + 3) / 4, 0);
  if (!img.memory.empty()) std::memcpy(image_words.data(), img.memory.data(), img.memory.size());
  const uint32_t* d_image_words;
  WW_TRY(arena.upload(&d_image_words, image_words));

  // Intrinsics.
  GpuBatch* gb = req.batch;
  DevIntrinsics I{};
  I.filter = gb ? gb->filter : TextureFilter::Nearest;
  WW_TRY(arena.alloc(&I.ignored_pixels, 1));
  WW_CUDA(cudaMemset(I.ignored_pixels, 0, sizeof(unsigned long long)));
  if (gb && gb->image) {
    I.image_w = gb->image->width;
    I.image_h = gb->image->height;
    const uint32_t* p;
    WW_TRY(arena.upload(&p, gb->image->pixels));
    I.image = const_cast<uint32_t*>(p);
  }
  if (gb && !gb->state.empty()) {
    const int32_t* p;
    WW_TRY(arena.upload(&p, gb->state));
    I.state = const_cast<int32_t*>(p);
    I.state_size = uint32_t(gb->state.size());
  }
  for (int u = 0; gb && u < kMaxTextureUnits; ++u) {
    if (!gb->texture_bound(u)) continue;
    const Image& tex = gb->textures[u];
    const uint8_t* p;
    WW_TRY(arena.upload(&p, tex.rgba));
    I.textures[u] = TextureView{p, tex.width, tex.height};
  }

  // Per-wave buffers, sized for the largest wave.
  const uint32_t WV = plan.wave_size;
  DevWave W{};
  W.total = req.instances;
  W.entry = req.func_index - mod.num_imported_funcs;
  W.stack_slots = req.stack_slots;
  W.max_depth = req.max_call_depth;
  W.mem_cap = uint64_t(plan.memory_pages) * kPageSize;
  W.mem_max_pages = img.has_memory ? std::min(img.max_pages, plan.memory_pages) : 0;
  W.fuel = req.fuel;
  W.tables_mutable = img.tables_mutable;
  const uint32_t nglobals = uint32_t(img.globals.size());
  const uint32_t ndatas = uint32_t(img.data_size.size());
  const uint32_t nelems = uint32_t(img.elem_size.size());
  const uint32_t table_cap = img.total_table_cap();
  // Whole warps of stacks: the layout groups instances by 32.
  WW_TRY(arena.alloc(&W.slots, uint64_t(req.stack_slots) * ((uint64_t(WV) + 31) / 32 * 32)));
  WW_TRY(arena.alloc(&W.io, uint64_t(std::max(nparams, nres)) * WV));
  WW_TRY(arena.alloc(&W.call_pc, uint64_t(req.max_call_depth) * WV));
  WW_TRY(arena.alloc(&W.call_func, uint64_t(req.max_call_depth) * WV));
  WW_TRY(arena.alloc(&W.call_fb, uint64_t(req.max_call_depth) * WV));
  // The interleaved layout hands out memory in groups of 32 instances: a
  // wave that is not a multiple of 32 still owns its last whole group.
  WW_TRY(arena.alloc(&W.mem, W.mem_cap * ((uint64_t(WV) + 31) / 32 * 32)));
  WW_TRY(arena.alloc(&W.mem_pages, WV));
  WW_TRY(arena.alloc(&W.globals, uint64_t(nglobals) * WV));
  WW_TRY(arena.alloc(&W.tables, img.tables_mutable ? uint64_t(table_cap) * WV : 1));
  WW_TRY(arena.alloc(&W.table_size, img.tables_mutable ? uint64_t(M.num_tables) * WV : 1));
  WW_TRY(arena.alloc(&W.data_dropped, uint64_t(ndatas) * WV));
  WW_TRY(arena.alloc(&W.elem_dropped, uint64_t(nelems) * WV));
  WW_TRY(arena.alloc(&W.trap, WV));
  WW_TRY(arena.alloc(&W.trap_func, WV));
  WW_TRY(arena.alloc(&W.trap_pc, WV));
  WW_TRY(arena.alloc(&W.finished, WV));
  std::vector<uint8_t*> d_mem_in(req.mem_in.size()), d_mem_out(req.mem_out.size());
  for (size_t k = 0; k < req.mem_in.size(); ++k)
    WW_TRY(arena.alloc(&d_mem_in[k], uint64_t(req.mem_in[k].record_size) * WV));
  for (size_t k = 0; k < req.mem_out.size(); ++k)
    WW_TRY(arena.alloc(&d_mem_out[k], uint64_t(req.mem_out[k].length) * WV));

  unsigned long long* done_host = nullptr;
  WW_CUDA(cudaHostAlloc(&done_host, sizeof(unsigned long long), cudaHostAllocMapped));
  struct HostFree {
    void* p;
    ~HostFree() { cudaFreeHost(p); }
  } done_guard{done_host};
  *done_host = 0;
  WW_CUDA(cudaHostGetDevicePointer(&W.done, done_host, 0));

  uint64_t* d_timer;
  WW_TRY(arena.alloc(&d_timer, 1));
  read_timer_kernel<<<1, 1>>>(d_timer);
  WW_CUDA(cudaGetLastError());
  WW_CUDA(cudaMemcpy(&W.start_ns, d_timer, sizeof(uint64_t), cudaMemcpyDeviceToHost));
  W.deadline_ns = req.timeout_s > 0 ? W.start_ns + uint64_t(req.timeout_s * 1e9) : 0;
  if (gb) gb->start_clock();

  BatchResult out;
  out.result_types = ftype.results;
  out.results.assign(uint64_t(req.instances) * nres, 0);
  out.traps.assign(req.instances, 0);
  out.trap_func.assign(req.instances, 0);
  out.trap_pc.assign(req.instances, 0);
  out.finished.assign(req.instances, 0);
  out.plan = plan;
  out.device_name = dev.name;
  out.setup_ms = std::chrono::duration<double, std::milli>(clock::now() - t_start).count();

  const bool inter = req.layout == MemoryLayout::Interleaved;
  cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
  struct Events {
    cudaEvent_t& a;
    cudaEvent_t& b;
    ~Events() {
      if (a) cudaEventDestroy(a);
      if (b) cudaEventDestroy(b);
    }
  } events_guard{ev_start, ev_stop};
  WW_CUDA(cudaEventCreate(&ev_start));
  WW_CUDA(cudaEventCreate(&ev_stop));
  std::vector<uint64_t> slot_rows;
  std::vector<uint8_t> u8buf;
  std::vector<uint32_t> u32buf;
  double kernel_ms = 0;

  for (uint32_t first = 0; first < req.instances; first += WV) {
    const uint32_t n = std::min(WV, req.instances - first);
    W.n = n;
    W.first = first;
    const uint32_t blocks = (n + kBlock - 1) / kBlock;
    const bool past_deadline =
        W.deadline_ns && std::chrono::duration<double>(clock::now() - t_start).count() > req.timeout_s;
    if (past_deadline) {
      for (uint32_t t = 0; t < n; ++t) out.traps[first + t] = uint8_t(TrapCode::Timeout);
      continue;
    }
    init_state_kernel<<<blocks, 128>>>(M, W, d_globals_init, nglobals, d_data_dropped, ndatas,
                                       d_elem_dropped, nelems, img.init_pages, d_table_init_size,
                                       table_cap);
    WW_CUDA(cudaGetLastError());
    if (W.mem_cap) {
      if (inter) init_memory_kernel<true><<<4096, 256>>>(W, d_image_words, image_words.size());
      else init_memory_kernel<false><<<4096, 256>>>(W, d_image_words, image_words.size());
      WW_CUDA(cudaGetLastError());
    }
    // Arguments into slots 0..nparams-1 of each instance's first frame.
    if (nparams) {
      slot_rows.assign(uint64_t(nparams) * n, 0);
      for (uint32_t t = 0; t < n; ++t)
        for (uint32_t k = 0; k < nparams; ++k)
          slot_rows[uint64_t(k) * n + t] =
              req.args[req.args_per_instance ? uint64_t(first + t) * nparams + k : k];
      WW_CUDA(cudaMemcpy(W.io, slot_rows.data(), slot_rows.size() * 8, cudaMemcpyHostToDevice));
    }
    for (size_t k = 0; k < req.mem_in.size(); ++k) {
      const MemIn& mi = req.mem_in[k];
      WW_CUDA(cudaMemcpy(d_mem_in[k], mi.data + uint64_t(first) * mi.record_size,
                         uint64_t(n) * mi.record_size, cudaMemcpyHostToDevice));
      if (inter) mem_in_kernel<true><<<blocks, 128>>>(W, d_mem_in[k], mi.record_size, mi.address);
      else mem_in_kernel<false><<<blocks, 128>>>(W, d_mem_in[k], mi.record_size, mi.address);
      WW_CUDA(cudaGetLastError());
    }

    WW_CUDA(cudaEventRecord(ev_start));
    if (inter) interpret_kernel<true><<<blocks, kBlock>>>(M, W, I);
    else interpret_kernel<false><<<blocks, kBlock>>>(M, W, I);
    WW_CUDA(cudaGetLastError());
    WW_CUDA(cudaEventRecord(ev_stop));
    auto last_report = clock::now();
    // Short batches (the spec runner's) finish in microseconds: poll from
    // 20 us, backing off to 20 ms for long ones.
    auto nap = std::chrono::microseconds(20);
    while (cudaEventQuery(ev_stop) == cudaErrorNotReady) {
      std::this_thread::sleep_for(nap);
      nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(20));
      if (req.progress && clock::now() - last_report > std::chrono::milliseconds(500)) {
        last_report = clock::now();
        req.progress(*static_cast<volatile unsigned long long*>(done_host), req.instances,
                     std::chrono::duration<double>(clock::now() - t_start).count());
      }
    }
    WW_CUDA(cudaEventSynchronize(ev_stop));
    WW_CUDA(cudaGetLastError());
    float ms = 0;
    WW_CUDA(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    kernel_ms += ms;

    for (size_t k = 0; k < req.mem_out.size(); ++k) {
      const MemOut& mo = req.mem_out[k];
      if (inter) mem_out_kernel<true><<<blocks, 128>>>(W, d_mem_out[k], mo.length, mo.address);
      else mem_out_kernel<false><<<blocks, 128>>>(W, d_mem_out[k], mo.length, mo.address);
      WW_CUDA(cudaGetLastError());
      WW_CUDA(cudaMemcpy(mo.data + uint64_t(first) * mo.length, d_mem_out[k], uint64_t(n) * mo.length,
                         cudaMemcpyDeviceToHost));
    }
    if (nres) {
      slot_rows.assign(uint64_t(nres) * n, 0);
      WW_CUDA(cudaMemcpy(slot_rows.data(), W.io, slot_rows.size() * 8, cudaMemcpyDeviceToHost));
      for (uint32_t t = 0; t < n; ++t)
        for (uint32_t k = 0; k < nres; ++k) {
          uint64_t v = slot_rows[uint64_t(k) * n + t];
          if (is_ref(ftype.results[k])) v = from_gpu_ref(S, irec, ftype.results[k], v);
          out.results[uint64_t(first + t) * nres + k] = v;
        }
    }
    WW_CUDA(cudaMemcpy(out.traps.data() + first, W.trap, n, cudaMemcpyDeviceToHost));
    WW_CUDA(cudaMemcpy(out.trap_func.data() + first, W.trap_func, n * 4, cudaMemcpyDeviceToHost));
    WW_CUDA(cudaMemcpy(out.trap_pc.data() + first, W.trap_pc, n * 4, cudaMemcpyDeviceToHost));
    WW_CUDA(cudaMemcpy(out.finished.data() + first, W.finished, n, cudaMemcpyDeviceToHost));

    if (req.write_back && first == 0) {
      InstanceState st;
      WW_CUDA(cudaMemcpy(&st.pages, W.mem_pages, 4, cudaMemcpyDeviceToHost));
      if (img.has_memory) {
        uint64_t bytes = uint64_t(st.pages) * kPageSize;
        uint8_t* d_tmp;
        WW_TRY(arena.alloc(&d_tmp, bytes));
        if (inter) gather_memory_kernel<true><<<1024, 256>>>(W, d_tmp, bytes);
        else gather_memory_kernel<false><<<1024, 256>>>(W, d_tmp, bytes);
        WW_CUDA(cudaGetLastError());
        st.memory.resize(bytes);
        WW_CUDA(cudaMemcpy(st.memory.data(), d_tmp, bytes, cudaMemcpyDeviceToHost));
      }
      WW_TRY(download_column0(st.globals, W.globals, nglobals, n));
      WW_TRY(download_column0(st.data_dropped, W.data_dropped, ndatas, n));
      WW_TRY(download_column0(st.elem_dropped, W.elem_dropped, nelems, n));
      if (img.tables_mutable) {
        WW_TRY(download_column0(st.table_size, W.table_size, M.num_tables, n));
        WW_TRY(download_column0(st.table_elems, W.tables, table_cap, n));
      } else {
        st.table_size = img.table_init_size;
        st.table_elems = img.table_elems;
      }
      write_back(S, instance, img, st);
    }
    if (req.progress) {
      req.progress(first + n, req.instances,
                   std::chrono::duration<double>(clock::now() - t_start).count());
    }
  }
  if (gb) {
    if (gb->image && I.image)
      WW_CUDA(cudaMemcpy(gb->image->pixels.data(), I.image, gb->image->pixels.size() * 4,
                         cudaMemcpyDeviceToHost));
    if (I.state)
      WW_CUDA(cudaMemcpy(gb->state.data(), I.state, gb->state.size() * 4, cudaMemcpyDeviceToHost));
    unsigned long long ignored = 0;
    WW_CUDA(cudaMemcpy(&ignored, I.ignored_pixels, sizeof ignored, cudaMemcpyDeviceToHost));
    gb->ignored_pixels += ignored;
  }
  out.kernel_ms = kernel_ms;
  out.total_ms = std::chrono::duration<double, std::milli>(clock::now() - t_start).count();
  return out;
}

}  // namespace ww::gpu
