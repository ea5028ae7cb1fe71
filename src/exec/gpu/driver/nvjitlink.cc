// nvJitLink, loaded with dlopen when a module was compiled in several
// units: it links their relocatable CUBINs into one, without a GPU (so a
// cache can be filled on a machine without one, like NVRTC).
#include <dlfcn.h>
#include <nvJitLink.h>

#include <mutex>

#include "exec/gpu/driver/cuda_library.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

// The library's versioned entry points (nvJitLink.h maps its API onto them).
struct JitLink {
  decltype(&::__nvJitLinkCreate_13_0) create = nullptr;
  decltype(&::__nvJitLinkDestroy_13_0) destroy = nullptr;
  decltype(&::__nvJitLinkAddData_13_0) add = nullptr;
  decltype(&::__nvJitLinkComplete_13_0) complete = nullptr;
  decltype(&::__nvJitLinkGetLinkedCubinSize_13_0) cubin_size = nullptr;
  decltype(&::__nvJitLinkGetLinkedCubin_13_0) cubin = nullptr;
  decltype(&::__nvJitLinkGetErrorLogSize_13_0) log_size = nullptr;
  decltype(&::__nvJitLinkGetErrorLog_13_0) log = nullptr;
};

Result<const JitLink*> load() {
  static std::once_flag once;
  static JitLink lib;
  static std::string failure;
  std::call_once(once, [] {
    void* h = dlopen_cuda_library({"libnvJitLink.so.13", "libnvJitLink.so"});
    if (!h) {
      failure = "nvJitLink not found (libnvJitLink.so.13), needed to link a module compiled in parts";
      return;
    }
    auto sym = [&](const char* name) { return dlsym(h, name); };
    lib.create = reinterpret_cast<decltype(lib.create)>(sym("__nvJitLinkCreate_13_0"));
    lib.destroy = reinterpret_cast<decltype(lib.destroy)>(sym("__nvJitLinkDestroy_13_0"));
    lib.add = reinterpret_cast<decltype(lib.add)>(sym("__nvJitLinkAddData_13_0"));
    lib.complete = reinterpret_cast<decltype(lib.complete)>(sym("__nvJitLinkComplete_13_0"));
    lib.cubin_size = reinterpret_cast<decltype(lib.cubin_size)>(sym("__nvJitLinkGetLinkedCubinSize_13_0"));
    lib.cubin = reinterpret_cast<decltype(lib.cubin)>(sym("__nvJitLinkGetLinkedCubin_13_0"));
    lib.log_size = reinterpret_cast<decltype(lib.log_size)>(sym("__nvJitLinkGetErrorLogSize_13_0"));
    lib.log = reinterpret_cast<decltype(lib.log)>(sym("__nvJitLinkGetErrorLog_13_0"));
    if (!lib.create || !lib.destroy || !lib.add || !lib.complete || !lib.cubin_size || !lib.cubin || !lib.log_size ||
        !lib.log)
      failure = "the nvJitLink library found lacks functions wasmwarp needs";
  });
  if (!failure.empty()) return err(failure);
  return &lib;
}

}  // namespace

Result<std::vector<uint8_t>> link_cubins(const std::vector<std::vector<uint8_t>>& objects, int cc_major, int cc_minor) {
  WW_ASSIGN_OR_RETURN(const JitLink* lib, load());
  const std::string arch = "-arch=sm_" + std::to_string(cc_major * 10 + cc_minor);
  const char* opts[] = {arch.c_str()};
  nvJitLinkHandle h = nullptr;
  if (lib->create(&h, 1, opts) != NVJITLINK_SUCCESS) return err("nvJitLink: cannot start a link");
  auto fail = [&](const std::string& what) {
    size_t n = 0;
    std::string log;
    if (lib->log_size(h, &n) == NVJITLINK_SUCCESS && n > 1) {
      log.resize(n);
      lib->log(h, log.data());
      log.resize(n - 1);
      if (size_t nl = log.find('\n'); nl != std::string::npos) log.resize(nl);
    }
    lib->destroy(&h);
    return err("nvJitLink " + what + (log.empty() ? "" : ": " + log));
  };
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string name = "unit" + std::to_string(i);
    if (lib->add(h, NVJITLINK_INPUT_CUBIN, objects[i].data(), objects[i].size(), name.c_str()) != NVJITLINK_SUCCESS)
      return fail("could not add " + name);
  }
  if (lib->complete(h) != NVJITLINK_SUCCESS) return fail("failed");
  size_t size = 0;
  std::vector<uint8_t> cubin;
  if (lib->cubin_size(h, &size) != NVJITLINK_SUCCESS) return fail("gave no CUBIN");
  cubin.resize(size);
  if (lib->cubin(h, cubin.data()) != NVJITLINK_SUCCESS) return fail("gave no CUBIN");
  lib->destroy(&h);
  return cubin;
}

}  // namespace ww::gpu
