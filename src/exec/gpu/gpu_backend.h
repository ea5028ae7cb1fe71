// The GPU backend's host API, what its users call (the GPU executor and
// its start-up, the public API, the spec runner and the differential
// test): the GPUs and their start-up, host memory registered for direct
// copies, a batch (wave/batch_request.h) run whole or kept resident,
// NVRTC. Plain C++ (no CUDA types), so that they include it whether or not
// this build has CUDA; without CUDA every entry point says so clearly
// (gpu_backend_nocuda.cc).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "exec/gpu/plan/memory_layout.h"
#include "exec/gpu/tuning.h"
#include "exec/gpu/wave/batch_request.h"
#include "intrinsics/gpu_batch.h"

namespace ww::gpu {

// The `gpu` module's host side, which batches carry (BatchRequest::batch).
using intrinsics::GpuContext;
using intrinsics::OutputImage;

struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string name;
  int sm_count = 0;
  uint64_t resident_threads = 0;  // threads the device runs at once (SMs x threads per SM)
  int cc_major = 0, cc_minor = 0;
  uint64_t total_bytes = 0, free_bytes = 0;
  uint64_t idle_block_bytes = 0;  // the device block kept between batches (counted free)
};
// The calling thread's GPU (use_device). Never fails: a machine without
// a driver or a GPU, or a build without CUDA, gives available = false and
// a one-line reason.
DeviceInfo probe_device();
bool built_with_cuda();
// GPUs this process sees (CUDA_VISIBLE_DEVICES applies); 0 without any.
int device_count();
// Makes GPU `ordinal` the calling thread's: its batches, buffers and
// compiled code's loaded modules go there. Threads start on GPU 0.
Status use_device(int ordinal);
int current_device();
// The calling thread on `ordinal` until the scope ends, then back where
// it was.
class DeviceScope {
 public:
  explicit DeviceScope(int ordinal) : before_(current_device()), status_(use_device(ordinal)) {}
  ~DeviceScope() { (void)use_device(before_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  [[nodiscard]] const Status& status() const { return status_; }

 private:
  int before_;
  Status status_;
};
// Pins the host buffers batches copy through (the staging, at the
// tuning's size), ahead of the first batch: the GPU's start-up thread
// calls it while the inputs are read, after warm_idle_block and before
// load_kernels.
void prepare_transfers(const Tuning& tuning);
// Buffers smaller than this cross through the staging: their copies are
// short, and each registration is a system call.
inline constexpr uint64_t kHostPinMinBytes = uint64_t(4) << 20;
// Registered by the start-up, behind the CUDA context's creation, a
// smaller buffer costs the batch nothing: thread-id's 1M results (4 MB)
// then come down without the staging.
inline constexpr uint64_t kStartUpPinMinBytes = uint64_t(1) << 20;
// Host memory the GPU copies to and from directly instead of through the
// pinned staging pieces: `bytes` at `p`, registered with CUDA (page-locked)
// by the GPU's start-up once its staging is pinned, or at once when the
// start-up is past that. Registering huge-page memory costs about what
// the staging's host copies of it do, as for a hash-wasm batch's 96 MB
// (bench/scale/alloc_cost.cu times pinning and copies), and the start-up
// hides it. Buffers under kHostPinMinBytes are left to the staging. One
// request per buffer; release_host_pin unregisters it and must come
// before the memory is freed.
void request_host_pin(const void* p, uint64_t bytes);
// The same, from kStartUpPinMinBytes, only while the start-up has not
// pinned yet (so that it hides the registration); false, and nothing
// requested, after.
bool request_host_pin_at_start_up(const void* p, uint64_t bytes);
void release_host_pin(const void* p);
// Whether all of [p, p + bytes) lies in registered memory.
bool host_range_pinned(const void* p, uint64_t bytes);
// Where a kernel of the current GPU writes `bytes` at `p` straight into
// host memory: `p` itself or its mapping, when the range is pinned
// (host_range_pinned); null otherwise.
void* pinned_for_kernels(void* p, uint64_t bytes);
// Registers what was requested so far; later requests register at once.
void pin_requested_host_ranges();
// A request_host_pin released when it goes (before the memory it names).
class HostPin {
 public:
  HostPin(const void* p, uint64_t bytes) : p_(p) { request_host_pin(p, bytes); }
  // request_host_pin_at_start_up's: empty() when it came too late.
  struct AtStartUp {};
  HostPin(AtStartUp, const void* p, uint64_t bytes) : p_(request_host_pin_at_start_up(p, bytes) ? p : nullptr) {}
  bool empty() const { return p_ == nullptr; }
  HostPin(HostPin&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  HostPin(const HostPin&) = delete;
  HostPin& operator=(const HostPin&) = delete;
  HostPin& operator=(HostPin&&) = delete;
  ~HostPin() {
    if (p_) release_host_pin(p_);
  }

 private:
  const void* p_;
};

// The current GPU's idle block (resources/gpu_resources.h): allocated
// when it holds none (the GPU's start-up), and its bytes (0: none), which
// a plan counts as free memory (probe_device).
void warm_idle_block();
uint64_t idle_block_bytes();
// The current GPU's CUDA stack a thread, as the driver holds it: raised
// while launchers of recursive compiled code live (compiled_launcher.cu).
uint64_t cuda_stack_bytes();
// Returns once every background free (DeviceArena::release_in_background)
// has finished: before reading the device's free memory or planning the
// next batch.
void wait_for_background_frees();

// Loads the kernels every batch launches, and with `interpreter` the
// interpreter's (CUDA loads a kernel lazily, at its first launch): the
// GPU's start-up calls it while the module and the inputs are read.
void load_kernels(bool interpreter);
// Drops `object` (compiled code holding a loaded module, a finished
// wave loop) on the thread that frees finished batches' device
// memory, after those frees, with the calling thread's GPU selected:
// unloading a module waits for them, and the caller has outputs to write
// meanwhile.
void retire_in_background(std::shared_ptr<void> object);
// GPU memory of `bytes` bytes, freed when the last owner goes (for
// results that stay on the device).
Result<std::shared_ptr<void>> device_buffer(uint64_t bytes);
// Waits for all work on the device (arrays another library wrote).
Status device_synchronize();

// ---------------------------------------------------------------- NVRTC

// The NVRTC library's version ("13.0"), loaded with dlopen on first use;
// errors say why it cannot be loaded (not installed, built without CUDA).
Result<std::string> nvrtc_version();
// The options compiled GPU code is built with for a device of compute
// capability major.minor: its real architecture, exact float semantics.
std::vector<std::string> nvrtc_options(int cc_major, int cc_minor);
// Compiles CUDA C++ translation units to one CUBIN: one unit whole, or
// several as relocatable code, compiled in parallel and linked with
// nvJitLink. The result is the CUBIN followed by 4 bytes (little-endian):
// the largest stack frame ptxas reported (low 16 bits) and the kernel's
// and the chain function's (high 16), which load_compiled_kernel reads.
// Errors carry NVRTC's first error line.
Result<std::vector<uint8_t>> nvrtc_compile(const std::vector<std::string>& units, const std::string& name, int cc_major,
                                           int cc_minor);
// Links relocatable CUBINs into one (nvJitLink, loaded with dlopen).
Result<std::vector<uint8_t>> link_cubins(const std::vector<std::vector<uint8_t>>& objects, int cc_major, int cc_minor);
// Loads a CUBIN through the driver API and returns the launcher of its
// kernel `kernel` (which takes the interpreter kernel's parameters).
// `recursive`: the code recurses, so the CUDA stack is sized for the
// batch's call depth. `leave_words`: codegen::Generated's, for code whose
// calls may leave for the host. `background`: the load runs on a thread
// of its own, which the first use waits for.
Result<std::shared_ptr<KernelLauncher>> load_compiled_kernel(const std::vector<uint8_t>& cubin,
                                                             const std::string& kernel, bool recursive,
                                                             uint64_t leave_words = 0, bool background = true);

// Instances that stay on the device between calls: their memories,
// globals and tables as the last call left them. Each call runs an export
// (and a chain after it) on every instance; an instance that trapped keeps
// its trap and is skipped. Only what a call asks for comes back.
class ResidentBatch {
 public:
  virtual ~ResidentBatch() = default;
  virtual uint32_t instances() const = 0;
  virtual const BatchPlan& plan() const = 0;
  virtual const std::string& device_name() const = 0;
  // Runs `call`'s export on every instance: its func_index, arguments,
  // chain (then, launch_per_call), fuel, timeout_s, cancel, mem_in,
  // mem_out and progress; the rest stays the batch's. The result's
  // kernel_ms and phases are this call's.
  virtual Result<RunResult> call(const BatchRequest& call) = 0;
  // `len` bytes at `addr` of every instance into `out` (instances x len;
  // zeros for an instance that trapped), and `record` bytes per instance
  // from `data` written there. A range past an instance's memory is an
  // error (nothing is read or written).
  virtual Status read_memory(uint64_t addr, uint64_t len, uint8_t* out) = 0;
  virtual Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data) = 0;
};
// `req`: the module, instances, launcher (null: the interpreter), layout,
// stacks, memory pages and source instance as for run_batch; its export
// and arguments are unused. Errors when the instances do not fit the
// device at once, or the module's imports need the host.
Result<std::unique_ptr<ResidentBatch>> make_resident(const BatchRequest& req);

// Errors: no GPU / no CUDA, an import that cannot run on the GPU (only
// `gpu.*` intrinsics can), a request that cannot fit the device memory, a
// CUDA failure (named with the call that failed).
Result<RunResult> run_batch(const BatchRequest& req);

}  // namespace ww::gpu
