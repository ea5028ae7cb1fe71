// The backends and tiers a batch test runs on: the CPU's two tiers
// everywhere (CI), the GPU's where a GPU is present.
#pragma once

#include <string>
#include <vector>

#include "batch/batch.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::batch {

struct Way {
  Backend backend;
  Tier tier;
};

inline std::string name_of(const Way& w) { return std::string(backend_name(w.backend)) + "/" + tier_name(w.tier); }

inline std::vector<Way> ways() {
  std::vector<Way> w = {{Backend::Cpu, Tier::Interp}, {Backend::Cpu, Tier::Compiled}};
  if (gpu::probe_device().available)
    for (Tier t : {Tier::Interp, Tier::Compiled}) w.push_back({Backend::Gpu, t});
  return w;
}

}  // namespace ww::batch
