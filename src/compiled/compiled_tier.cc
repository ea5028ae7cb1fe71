#include "compiled/compiled_tier.h"

namespace ww::compiled {

bool cached(const Request&) { return false; }
Result<std::shared_ptr<const NativeCode>> compile_cpu(const Request&, Outcome*) {
  return make_error(kNoOffset, "not yet");
}
Result<std::shared_ptr<gpu::KernelLauncher>> compile_gpu(const Request&, Outcome*) {
  return make_error(kNoOffset, "not yet");
}

}  // namespace ww::compiled
