// The interpreter kernel, compiled with the project, behind the launcher
// interface: the program is data, so nothing here depends on the module.
#include "exec/gpu/device/interp_kernel.cuh"
#include "exec/gpu/driver/kernel_launcher.cuh"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

class InterpreterLauncher final : public KernelLauncher {
 public:
  const char* tier_name() const override { return "interpreter"; }
  bool needs_frames() const override { return true; }
  Status launch(const DevModule& m, const DevWave& w, const DevIntrinsics& in, uint32_t blocks, DevLayout layout,
                cudaStream_t stream) override {
    switch (layout) {
      case DevLayout::Interleaved:
        interpret_kernel<DevLayout::Interleaved><<<blocks, kBlock, 0, stream>>>(m, w, in);
        break;
      case DevLayout::Contiguous:
        interpret_kernel<DevLayout::Contiguous><<<blocks, kBlock, 0, stream>>>(m, w, in);
        break;
      case DevLayout::Sparse: interpret_kernel<DevLayout::Sparse><<<blocks, kBlock, 0, stream>>>(m, w, in); break;
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      return make_error(kNoOffset,
                        std::string("CUDA error launching the interpreter kernel: ") + cudaGetErrorString(e));
    return Status::Ok();
  }
};

}  // namespace

KernelLauncher& interpreter_launcher() {
  static InterpreterLauncher l;
  return l;
}

void load_interpreter_kernels() {
  // Launched once with no instances (every thread returns at once): a
  // launch, not only a load, since a kernel's first launch also has the
  // driver reserve its local memory, which the interpreter's frames make
  // large. What fails here fails again, checked, at a batch's launch.
  for (DevLayout l : {DevLayout::Interleaved, DevLayout::Contiguous, DevLayout::Sparse})
    (void)interpreter_launcher().launch(DevModule{}, DevWave{}, DevIntrinsics{}, 1, l, nullptr);
  (void)cudaStreamSynchronize(cudaStreamPerThread);
  (void)cudaGetLastError();
}

}  // namespace ww::gpu
