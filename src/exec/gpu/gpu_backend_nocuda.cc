// The GPU backend of a build without the CUDA toolkit: every entry point
// says so, so that `--backend auto` falls back to the CPU and `--backend
// gpu` fails with a clear message.
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

bool built_with_cuda() { return false; }
int device_count() { return 0; }
int current_device() { return 0; }
void prepare_transfers(const Tuning&) {}
void load_kernels(bool) {}
void warm_idle_block() {}
void retire_in_background(std::shared_ptr<void>) {}
void request_host_pin(const void*, uint64_t) {}
bool request_host_pin_at_start_up(const void*, uint64_t) { return false; }
void release_host_pin(const void*) {}
bool host_range_pinned(const void*, uint64_t) { return false; }
void pin_requested_host_ranges() {}

DeviceInfo probe_device() {
  DeviceInfo d;
  d.reason = "this wasmwarp was built without CUDA support";
  return d;
}

namespace {
Error no_cuda() { return make_error(kNoOffset, "this wasmwarp was built without CUDA support"); }
}  // namespace

Status use_device(int) { return no_cuda(); }
Result<RunResult> run_batch(const BatchRequest&) { return no_cuda(); }
Result<std::shared_ptr<void>> device_buffer(uint64_t) { return no_cuda(); }
Status device_synchronize() { return no_cuda(); }
Result<std::unique_ptr<ResidentBatch>> make_resident(const BatchRequest&) { return no_cuda(); }
Result<std::string> nvrtc_version() { return no_cuda(); }
std::vector<std::string> nvrtc_options(int, int) { return {}; }
Result<std::vector<uint8_t>> nvrtc_compile(const std::vector<std::string>&, const std::string&, int, int) {
  return no_cuda();
}
Result<std::vector<uint8_t>> link_cubins(const std::vector<std::vector<uint8_t>>&, int, int) { return no_cuda(); }
Result<std::shared_ptr<KernelLauncher>> load_compiled_kernel(const std::vector<uint8_t>&, const std::string&, bool,
                                                             uint64_t, bool) {
  return no_cuda();
}

}  // namespace ww::gpu
