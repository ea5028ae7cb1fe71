// The GPU backend of a build without the CUDA toolkit: every entry point
// says so, so that `--backend auto` falls back to the CPU and `--backend
// gpu` fails with a clear message.
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {

bool built_with_cuda() { return false; }

DeviceInfo probe_device() {
  DeviceInfo d;
  d.reason = "this wasmwarp was built without CUDA support";
  return d;
}

Result<BatchResult> run_batch(const BatchRequest&) {
  return make_error(kNoOffset, "this wasmwarp was built without CUDA support");
}

}  // namespace ww::gpu
