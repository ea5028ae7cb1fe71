// NVRTC, loaded with dlopen the first time compiled GPU code is wanted, so
// the binary starts, and runs the interpreter, on machines without it.
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "common/parallel.h"
#include "common/text.h"
#include "exec/gpu/driver/cuda_library.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::gpu {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

struct Nvrtc {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  std::string version_text;
};

Result<const Nvrtc*> load() {
  static std::once_flag once;
  // Never destroyed: a load started by the GPU warm-up thread may still be
  // writing them while the process exits.
  static Nvrtc& lib = *new Nvrtc;
  static std::string& failure = *new std::string;
  std::call_once(once, [] {
    void* h = dlopen_cuda_library({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
    if (!h) {
      failure = "NVRTC not found (libnvrtc.so.13; set LD_LIBRARY_PATH or CUDA_HOME)";
      return;
    }
    auto sym = [&](const char* name) { return dlsym(h, name); };
    lib.version = reinterpret_cast<decltype(lib.version)>(sym("nvrtcVersion"));
    lib.error_string = reinterpret_cast<decltype(lib.error_string)>(sym("nvrtcGetErrorString"));
    lib.create = reinterpret_cast<decltype(lib.create)>(sym("nvrtcCreateProgram"));
    lib.compile = reinterpret_cast<decltype(lib.compile)>(sym("nvrtcCompileProgram"));
    lib.log_size = reinterpret_cast<decltype(lib.log_size)>(sym("nvrtcGetProgramLogSize"));
    lib.log = reinterpret_cast<decltype(lib.log)>(sym("nvrtcGetProgramLog"));
    lib.cubin_size = reinterpret_cast<decltype(lib.cubin_size)>(sym("nvrtcGetCUBINSize"));
    lib.cubin = reinterpret_cast<decltype(lib.cubin)>(sym("nvrtcGetCUBIN"));
    lib.destroy = reinterpret_cast<decltype(lib.destroy)>(sym("nvrtcDestroyProgram"));
    if (!lib.version || !lib.error_string || !lib.create || !lib.compile || !lib.log_size || !lib.log ||
        !lib.cubin_size || !lib.cubin || !lib.destroy) {
      failure = "the NVRTC library found lacks functions wasmwarp needs (too old?)";
      return;
    }
    int major = 0, minor = 0;
    lib.version(&major, &minor);
    lib.version_text = std::to_string(major) + "." + std::to_string(minor);
  });
  if (!failure.empty()) return err(failure);
  return &lib;
}

}  // namespace

Result<std::string> nvrtc_version() {
  WW_ASSIGN_OR_RETURN(const Nvrtc* lib, load());
  return lib->version_text;
}

std::vector<std::string> nvrtc_options(int cc_major, int cc_minor) {
  // The device's own architecture (a CUBIN, no JIT at load); no FMA
  // contraction; IEEE division, square root and denormals, as the spec wants.
  return {"-arch=sm_" + std::to_string(cc_major * 10 + cc_minor),
          "--fmad=false",
          "-ftz=false",
          "-prec-div=true",
          "-prec-sqrt=true",
          "-std=c++20",
          "--ptxas-options=-v"};
}

namespace {

// The stack frames ptxas reports in a compile log (--ptxas-options=-v):
// the largest of a function that recursion may repeat, and those of the
// kernel and the chain function it calls (the generator's ww_chain),
// which are once at the base of the stack. (The chain function holds an
// instance: counted per level, its frame would cut a deep recursion's
// room by many levels.)
struct Frames {
  uint32_t largest = 0, kernel = 0, chain = 0;
};
Frames stack_frames(const std::string& log) {
  Frames f;
  // A call through a table passes through a dispatcher function
  // (codegen/indirect_calls.cc): a recursion level may hold its frame too.
  uint32_t dispatcher = 0;
  uint32_t* slot = &f.largest;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("Function properties for ") != std::string::npos)
      slot = line.find("ww_chain") != std::string::npos             ? &f.chain
             : line.find("ww_compiled_kernel") != std::string::npos ? &f.kernel
             : line.find("dispatch_indirect") != std::string::npos  ? &dispatcher
                                                                    : &f.largest;
    size_t at = line.find(" bytes stack frame");
    if (at == std::string::npos) continue;
    size_t b = line.rfind(' ', at - 1);
    const uint32_t bytes = uint32_t(std::strtoul(line.c_str() + (b == std::string::npos ? 0 : b + 1), nullptr, 10));
    *slot = std::max(*slot, bytes);
  }
  if (dispatcher) f.largest += dispatcher + 16;
  return f;
}

struct UnitResult {
  Status status = Status::Ok();
  std::vector<uint8_t> cubin;
  uint32_t frame = 0;  // the largest frame recursion may repeat
  uint32_t base = 0;   // the kernel's and the chain function's, once per thread
};

UnitResult compile_unit(const Nvrtc& lib, const std::string& source, const std::string& name,
                        const std::vector<std::string>& opts) {
  UnitResult u;
  u.frame = 0;
  nvrtcProgram prog = nullptr;
  nvrtcResult r = lib.create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) {
    u.status = err(std::string("NVRTC: ") + lib.error_string(r));
    return u;
  }
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  r = lib.compile(prog, int(argv.size()), argv.data());
  size_t log_size = 0;
  std::string log;
  if (lib.log_size(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    lib.log(prog, log.data());
    log.resize(log_size - 1);
  }
  if (r != NVRTC_SUCCESS) {
    lib.destroy(&prog);
    u.status = err("NVRTC failed: " + first_error_line(log));
    return u;
  }
  size_t size = 0;
  r = lib.cubin_size(prog, &size);
  if (r == NVRTC_SUCCESS) {
    u.cubin.resize(size);
    r = lib.cubin(prog, reinterpret_cast<char*>(u.cubin.data()));
  }
  lib.destroy(&prog);
  if (r != NVRTC_SUCCESS) u.status = err(std::string("NVRTC: ") + lib.error_string(r));
  const Frames f = stack_frames(log);
  u.frame = std::min<uint32_t>(f.largest, 0xffff);
  u.base = std::min<uint32_t>(f.kernel + f.chain, 0xffff);
  return u;
}

}  // namespace

Result<std::vector<uint8_t>> nvrtc_compile(const std::vector<std::string>& units, const std::string& name, int cc_major,
                                           int cc_minor) {
  WW_ASSIGN_OR_RETURN(const Nvrtc* lib, load());
  if (units.empty()) return err("NVRTC: nothing to compile");
  std::vector<std::string> opts = nvrtc_options(cc_major, cc_minor);
  // Several units are relocatable code, compiled in parallel (NVRTC
  // programs are independent) and linked; one is whole-program code.
  if (units.size() > 1) opts.push_back("-rdc=true");
  std::vector<UnitResult> results(units.size());
  parallel_for(units.size(),
               [&](size_t i) { results[i] = compile_unit(*lib, units[i], name + "." + std::to_string(i), opts); });
  uint32_t frame = 0, base = 0;
  for (const UnitResult& u : results) {
    WW_TRY(u.status);
    frame = std::max(frame, u.frame);
    base = std::max(base, u.base);
  }
  std::vector<uint8_t> cubin;
  if (units.size() == 1) {
    cubin = std::move(results[0].cubin);
  } else {
    std::vector<std::vector<uint8_t>> objects;
    for (UnitResult& u : results) objects.push_back(std::move(u.cubin));
    WW_ASSIGN_OR_RETURN(cubin, link_cubins(objects, cc_major, cc_minor));
  }
  // The stack frames ptxas reported travel with the CUBIN (a trailer:
  // the largest function's in the low 16 bits, the kernel's and the chain
  // function's together in the high 16), for sizing the CUDA stack of
  // recursive code.
  const uint32_t trailer = frame | (base << 16);
  for (int k = 0; k < 4; ++k) cubin.push_back(uint8_t(trailer >> (8 * k)));
  return cubin;
}

}  // namespace ww::gpu
