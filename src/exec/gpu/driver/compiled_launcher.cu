// NVRTC-compiled code behind the launcher interface: the CUBIN is loaded
// through the driver API (its entry points come from the CUDA runtime, so
// nothing more is linked) into the runtime's primary context, where the
// wave loop's buffers live, and launched with the interpreter kernel's
// parameters.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <deque>
#include <future>
#include <map>
#include <mutex>

#include "exec/gpu/driver/cuda_check.cuh"
#include "exec/gpu/driver/kernel_launcher.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

struct Driver {
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**,
                     void**) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
};

Result<const Driver*> driver() {
  static std::once_flag once;
  static Driver d;
  static std::string failure;
  std::call_once(once, [] {
    auto get = [](const char* name, void** fn) {
      cudaDriverEntryPointQueryResult q{};
      return cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
             q == cudaDriverEntryPointSuccess && *fn;
    };
    bool ok = get("cuModuleLoadData", reinterpret_cast<void**>(&d.module_load_data)) &&
              get("cuModuleUnload", reinterpret_cast<void**>(&d.module_unload)) &&
              get("cuModuleGetFunction", reinterpret_cast<void**>(&d.module_get_function)) &&
              get("cuLaunchKernel", reinterpret_cast<void**>(&d.launch)) &&
              get("cuGetErrorString", reinterpret_cast<void**>(&d.error_string));
    if (!ok) failure = "the CUDA driver lacks functions wasmwarp needs for compiled code";
  });
  if (!failure.empty()) return err(failure);
  return &d;
}

std::string cu_error(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.error_string && d.error_string(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUDA driver error " + std::to_string(int(r));
}

// The CUDA stack per thread is reserved for every thread the device can
// hold at once, whatever the launch (64 KiB x 270k threads = 17 GiB on an
// H200), so it may take at most a share of the device's memory, and CUDA
// allows at most 512 KiB a thread (local memory per thread, programming
// guide). Recursion deeper than the stack allows stops earlier (with "call
// stack exhausted", never an overflow) and runs again on the interpreter
// kernel. SQLite's largest frame is 6 KiB: 64 KiB holds 10 levels, too few
// for one query (25 to 32), so every compiled instance would run twice.
constexpr uint64_t kMinStackPerThread = 64 * 1024;
constexpr uint64_t kCudaMaxStackPerThread = 512 * 1024;
constexpr uint64_t kStackShareOfMemory = 2;  // at most 1/2
constexpr uint64_t kDefaultFrameBytes = 512;

// Room for the kernel's own frame below the recursion.
constexpr uint64_t kKernelFrameBytes = 1024;

// The CUDA stack is the context's, one size for every kernel on a GPU.
// Each launcher of recursive code asks for what its frames need, and the
// GPU holds the largest request of the launchers alive: a smaller request
// set after a larger one would have cut the frames of the other's running
// waves short. When the last launcher goes, the GPU gets the size it had
// before, so that one recursive batch's stack (up to half the GPU's
// memory) is not kept from every later batch of the process.
class StackLimits {
 public:
  // On the calling thread's GPU, `device`: at least `bytes` a thread for
  // `who`. Returns the limit the driver holds (it may round or clamp).
  Result<uint64_t> hold(int device, const void* who, uint64_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    Gpu& gpu = gpus_[device];
    if (gpu.wants.empty()) {
      size_t before = 0;
      WW_CUDA(cudaDeviceGetLimit(&before, cudaLimitStackSize));
      gpu.before = before;
    }
    gpu.wants[who] = bytes;
    WW_TRY(apply(gpu));
    return gpu.held;
  }
  // `who` is gone (on its GPU, `device`).
  void release(int device, const void* who) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = gpus_.find(device);
    if (it == gpus_.end() || !it->second.wants.erase(who)) return;
    // A failure leaves a larger stack than needed, nothing worse.
    if (!apply(it->second).ok()) (void)cudaGetLastError();
  }

 private:
  struct Gpu {
    uint64_t before = 0;  // the limit before the first holder
    std::map<const void*, uint64_t> wants;
    uint64_t set = 0, held = 0;
  };
  static Status apply(Gpu& gpu) {
    uint64_t want = gpu.before;
    for (const auto& [who, bytes] : gpu.wants) want = std::max(want, bytes);
    if (want == gpu.set) return Status::Ok();
    WW_CUDA(cudaDeviceSetLimit(cudaLimitStackSize, want));
    size_t held = 0;
    WW_CUDA(cudaDeviceGetLimit(&held, cudaLimitStackSize));
    gpu.set = gpu.wants.empty() ? 0 : want;
    gpu.held = held;
    return Status::Ok();
  }
  std::mutex mu_;
  std::map<int, Gpu> gpus_;
};

// Never destroyed: a launcher may be retired after static destruction
// began (a destroyed one would leave the compiled recursive programs'
// processes to abort with a corrupted heap at exit).
StackLimits& stack_limits() {
  static StackLimits* s = new StackLimits;
  return *s;
}

}  // namespace

uint64_t cuda_stack_bytes() {
  size_t bytes = 0;
  if (cudaDeviceGetLimit(&bytes, cudaLimitStackSize) != cudaSuccess) (void)cudaGetLastError();
  return bytes;
}

namespace {

// Loaded into a device's primary context: the calling thread's GPU
// (use_device) when the batch starts there.
struct LoadedCode {
  int device = 0;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  uint64_t stack_set = 0;   // the device's CUDA stack limit as this code last asked it
  uint64_t stack_held = 0;  // and as the driver set it
};

Result<LoadedCode> load_on_current_device(const Driver& d, const std::vector<uint8_t>& cubin,
                                          const std::string& kernel) {
  // The runtime's primary context must exist before a driver-API load.
  WW_CUDA(cudaFree(nullptr));
  LoadedCode c;
  c.device = current_device();
  CUresult r = d.module_load_data(&c.mod, cubin.data());
  if (r != CUDA_SUCCESS)
    return err("cannot load compiled GPU code on GPU " + std::to_string(c.device) + ": " + cu_error(d, r));
  r = d.module_get_function(&c.fn, c.mod, kernel.c_str());
  if (r != CUDA_SUCCESS) {
    d.module_unload(c.mod);
    return err("compiled GPU code has no kernel " + kernel + ": " + cu_error(d, r));
  }
  // A function's first launch costs several times what a later one does:
  // paid here, where the load is, by a launch of no instances (every
  // thread returns at once). What fails here fails again, checked, at the
  // batch's launch.
  DevModule no_module{};
  DevWave no_instances{};
  DevIntrinsics no_intrinsics{};
  void* params[] = {&no_module, &no_instances, &no_intrinsics};
  if (d.launch(c.fn, 1, 1, 1, kBlock, 1, 1, 0, CU_STREAM_PER_THREAD, params, nullptr) == CUDA_SUCCESS)
    (void)cudaStreamSynchronize(cudaStreamPerThread);
  (void)cudaGetLastError();
  return c;
}

class CompiledLauncher final : public KernelLauncher {
 public:
  // `frames`: nvrtc_compile's trailer (the largest frame recursion may
  // repeat, low 16 bits; the kernel's and the chain function's, once at
  // the base, high 16).
  // The module loads on `device`, on a thread of its own while the batch
  // prepares (a load is a visible share of a batch's set-up,
  // bench/gpu/trace.sh) when `background`; the first use waits for it.
  CompiledLauncher(const Driver& d, std::vector<uint8_t> cubin, std::string kernel, int device, bool recursive,
                   uint32_t frames, uint64_t leave_words, bool background)
      : d_(d),
        cubin_(std::move(cubin)),
        kernel_(std::move(kernel)),
        recursive_(recursive),
        leave_words_(leave_words),
        frame_((frames & 0xffff) ? (frames & 0xffff) + 16 : kDefaultFrameBytes),
        base_(kKernelFrameBytes + (frames >> 16)) {
    int sms = 0, threads = 0;
    size_t free_b = 0, total_b = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device) == cudaSuccess &&
        cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && sms > 0 && threads > 0) {
      resident_threads_ = uint64_t(sms) * uint64_t(threads);
      const uint64_t share = total_b / kStackShareOfMemory / resident_threads_ / 1024 * 1024;
      stack_cap_ = std::clamp(share, kMinStackPerThread, kCudaMaxStackPerThread);
    }
    (void)cudaGetLastError();
    auto load = [this, device]() -> Result<LoadedCode> {
      DeviceScope on(device);
      WW_TRY(on.status());
      return load_on_current_device(d_, cubin_, kernel_);
    };
    if (background) {
      first_ = std::async(std::launch::async, load);
    } else {
      std::promise<Result<LoadedCode>> now;
      now.set_value(load());
      first_ = now.get_future();
    }
  }
  ~CompiledLauncher() override {
    join_first_load();
    for (const LoadedCode& c : loaded_) {
      DeviceScope on(c.device);
      if (c.stack_set) stack_limits().release(c.device, this);
      d_.module_unload(c.mod);
    }
  }

  const char* tier_name() const override { return "compiled"; }
  bool needs_frames() const override { return false; }
  uint64_t leave_words() const override { return leave_words_; }
  bool holds_stack() const override { return recursive_; }
  Status hold_stack(uint32_t max_call_depth) override {
    if (!recursive_) return Status::Ok();
    WW_ASSIGN_OR_RETURN(LoadedCode * code, on_this_device());
    return held_stack(*code, max_call_depth).status();
  }

  Status launch(const DevModule& m, const DevWave& w, const DevIntrinsics& in, uint32_t blocks, DevLayout,
                cudaStream_t stream) override {
    WW_ASSIGN_OR_RETURN(LoadedCode * code, on_this_device());
    DevWave wave = w;
    if (recursive_) {
      WW_ASSIGN_OR_RETURN(const uint64_t bytes, held_stack(*code, w.max_depth));
      // As many frames as the stack holds, at most the requested depth.
      wave.max_depth = uint32_t(std::min<uint64_t>(w.max_depth, (bytes - base_) / frame_));
    }
    DevModule mod = m;
    DevIntrinsics intr = in;
    void* params[] = {&mod, &wave, &intr};
    // The runtime's stream 0 is the thread's own (per-thread default
    // streams); the driver's is the legacy one unless named so.
    const CUstream s = stream ? reinterpret_cast<CUstream>(stream) : CU_STREAM_PER_THREAD;
    CUresult r = d_.launch(code->fn, blocks, 1, 1, kBlock, 1, 1, 0, s, params, nullptr);
    if (r != CUDA_SUCCESS) return err("CUDA error launching compiled code: " + cu_error(d_, r));
    return Status::Ok();
  }

 private:
  // The device's CUDA stack per thread for calls up to `max_depth` deep,
  // set on the code's GPU when it differs from the last request.
  Result<uint64_t> held_stack(LoadedCode& code, uint32_t max_depth) {
    const uint64_t bytes = stack_bytes(max_depth);
    // Two wave loops may share a GPU, and this code.
    std::lock_guard<std::mutex> g(mu_);
    if (bytes != code.stack_set) {
      WW_ASSIGN_OR_RETURN(const uint64_t held, stack_limits().hold(code.device, this, bytes));
      code.stack_set = bytes;
      code.stack_held = std::min<uint64_t>(bytes, held);
    }
    if (code.stack_held <= base_)
      return err("compiled GPU code: the CUDA stack holds no frame (" + std::to_string(code.stack_held) + " bytes)");
    return code.stack_held;
  }

  uint64_t stack_bytes(uint32_t max_depth) const {
    return std::min<uint64_t>(stack_cap_, uint64_t(std::max<uint32_t>(max_depth, 1)) * frame_ + base_);
  }

  // The code's module on the calling thread's GPU, loaded there on its
  // first launch (a batch spread over several GPUs launches it on each).
  Result<LoadedCode*> on_this_device() {
    const int dev = current_device();
    std::lock_guard<std::mutex> g(mu_);
    join_first_load();
    if (!first_failure_.empty()) return err(first_failure_);
    for (LoadedCode& c : loaded_)
      if (c.device == dev) return &c;
    WW_ASSIGN_OR_RETURN(LoadedCode c, load_on_current_device(d_, cubin_, kernel_));
    loaded_.push_back(c);
    return &loaded_.back();
  }

  // The first GPU's load, once it is done: its code joins loaded_, or its
  // failure is kept for every later use (under mu_, or in the destructor).
  void join_first_load() {
    if (!first_.valid()) return;
    Result<LoadedCode> first = first_.get();
    if (first.ok()) loaded_.push_back(*first);
    else first_failure_ = first.error().message;
  }

  const Driver& d_;
  const std::vector<uint8_t> cubin_;
  const std::string kernel_;
  std::mutex mu_;
  std::deque<LoadedCode> loaded_;          // per GPU; a deque keeps the pointers launches hold
  std::future<Result<LoadedCode>> first_;  // the first GPU's, until a use takes it
  std::string first_failure_;
  bool recursive_;
  uint64_t leave_words_;
  uint64_t frame_;
  uint64_t base_;  // the kernel's frame and the chain function's, below the recursion
  uint64_t resident_threads_ = 132 * 2048;
  uint64_t stack_cap_ = kMinStackPerThread;  // per thread
};

}  // namespace

Result<std::shared_ptr<KernelLauncher>> load_compiled_kernel(const std::vector<uint8_t>& payload,
                                                             const std::string& kernel, bool recursive,
                                                             uint64_t leave_words, bool background) {
  // The payload is nvrtc_compile's: the CUBIN, then 4 bytes of the largest
  // stack frame ptxas reported.
  if (payload.size() < 8) return err("compiled GPU code is truncated");
  const size_t cubin_size = payload.size() - 4;
  uint32_t frame = 0;
  for (int k = 0; k < 4; ++k) frame |= uint32_t(payload[cubin_size + k]) << (8 * k);
  WW_ASSIGN_OR_RETURN(const Driver* d, driver());
  std::vector<uint8_t> cubin(payload.begin(), payload.begin() + ptrdiff_t(cubin_size));
  // The runtime's primary context must exist before a driver-API load;
  // made here, on the caller's thread, so that a load on a thread of its
  // own finds it made.
  WW_CUDA(cudaFree(nullptr));
  return std::shared_ptr<KernelLauncher>(std::make_shared<CompiledLauncher>(
      *d, std::move(cubin), kernel, current_device(), recursive, frame, leave_words, background));
}

}  // namespace ww::gpu
