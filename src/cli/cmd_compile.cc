// `wasmwarp compile`: fills the compiled-code cache ahead of time, and with
// --emit-source writes the generated C++ for reading.
#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/module_source.h"
#include "cli/run_support.h"
#include "common/text.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {
namespace {

constexpr const char* kCompileFooter = R"(
The compiled code is what `wasmwarp run --tier compiled|auto` uses: give
the same --invoke (several allowed; none: every exported function), and
--fuel / --timeout / --gpu-layout when the runs will use them, since
metered code, code that checks a deadline and each memory layout are
compiled separately. Without --gpu-layout, GPU code is compiled for both
layouts a run chooses between by itself: interleaved and, for a module
with a memory, sparse (run's summary says which a run used). The cache
is $WW_CACHE_DIR, else $XDG_CACHE_HOME/wasmwarp, else ~/.cache/wasmwarp
(or --cache-dir).
--emit-source FILE writes the self-contained translation unit the compiler
gets (the runtime headers first, the module's functions after them); a
large module compiled for the CPU is several units, written to FILE,
FILE.1, FILE.2, ... )";

std::string fmt_ms(double ms) { return format_fixed(ms, 1) + " ms"; }

}  // namespace

int cmd_compile(int argc, char** argv) {
  CLI::App app("Compile a module's functions to native code (CPU) or a CUBIN (GPU) and cache it.", "wasmwarp compile");
  app.footer(kCompileFooter);
  std::string module_path, backend = "auto", emit, cache_dir, fuel, timeout, layout = "auto";
  std::vector<std::string> invoke;
  bool no_cache = false;
  app.add_option("module", module_path, "the .wasm file")->required()->type_name("MODULE.wasm");
  app.add_option("--backend", backend, "cpu, gpu or auto (the GPU when one is usable)")->type_name("B");
  app.add_option("--invoke", invoke, "an export the runs will call (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME");
  app.add_option("--emit-source", emit, "write the generated C++ translation unit here")->type_name("FILE");
  app.add_option("--cache-dir", cache_dir, "the compiled-code cache")->type_name("DIR");
  app.add_flag("--no-cache", no_cache, "compile without reading or writing the cache");
  app.add_option("--fuel", fuel, "compile metered code, for runs with --fuel")->type_name("N");
  app.add_option("--timeout", timeout, "compile deadline checks, for GPU runs with --timeout")->type_name("S");
  app.add_option("--gpu-layout", layout,
                 "interleaved, contiguous or sparse: the layout the runs will use (default: interleaved and sparse)")
      ->type_name("L");
  std::string gpu_arch;
  app.add_option("--gpu-arch", gpu_arch, "compile for this GPU (sm_90) without one: fills the cache only")
      ->type_name("sm_XY");
  try {
    app.parse(argc + 1, argv - 1);  // argv[-1], the command name, stands in for the program name
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    print_error(std::string("compile: ") + e.what());
    return kExitUsage;
  }
  auto fail = [](const std::string& m) {
    print_error(m);
    return kExitUsage;
  };
  wasmwarp::EngineOptions eo;
  auto be = parse_backend(backend);
  if (!be.ok()) return fail(be.error().message);
  eo.backend = *be;
  eo.cache = !no_cache;
  eo.cache_dir = cache_dir;
  const std::optional<wasmwarp::MemoryLayout> chosen = wasmwarp::parse_memory_layout(layout);
  if (!chosen) return fail("--gpu-layout must be interleaved, contiguous or sparse, not '" + layout + "'");
  // A run picks interleaved memory while every instance's memory fits
  // and sparse past that: without --gpu-layout both are compiled, or
  // cached code for the layout of a large run would never be there.
  const bool both_layouts = *chosen == wasmwarp::MemoryLayout::Auto;
  if (!gpu_arch.empty()) {
    const int arch = gpu_arch.rfind("sm_", 0) == 0 ? std::atoi(gpu_arch.c_str() + 3) : 0;
    if (arch < 70 || arch > 200) return fail("--gpu-arch must be sm_70 or later, like sm_90, not '" + gpu_arch + "'");
  }
  auto m = load_module(module_path);
  if (!m.ok()) return fail(m.error().message);
  wasmwarp::CompileRequest req;
  req.exports = invoke;
  req.gpu_arch = gpu_arch;
  req.metered = !fuel.empty() && fuel != "0";
  req.deadline = !timeout.empty();
  req.gpu_layout = both_layouts ? wasmwarp::MemoryLayout::Interleaved : *chosen;
  const wasmwarp::Engine engine(eo);
  if (!emit.empty()) {
    // Written before compiling: the source is there to read when the
    // compiler fails on it.
    req.source_only = true;
    auto src = engine.compile(*m, req);
    if (!src) return fail(src.error().message);
    req.source_only = false;
    // FILE, then FILE.1, FILE.2, ... for the units of a split module.
    for (size_t u = 0; u < src->sources.size(); ++u) {
      std::string name = u == 0 ? emit : emit + "." + std::to_string(u);
      std::ofstream f(name, std::ios::binary);
      f << src->sources[u];
      if (!f.flush()) return fail("cannot write " + name);
    }
  }
  auto report = [&](const wasmwarp::CompileInfo& out) {
    const std::string target = out.target == wasmwarp::Backend::Gpu
                                   ? "GPU (" + std::string(wasmwarp::memory_layout_name(req.gpu_layout)) + " memory, "
                                   : std::string("CPU (");
    std::printf("%s: compiled for the %s%s): codegen %s, compile %s, load %s, total %s; %s\n", module_path.c_str(),
                target.c_str(), out.cache_hit ? "cache hit" : "cache miss", fmt_ms(out.generate_ms).c_str(),
                fmt_ms(out.compile_ms).c_str(), fmt_ms(out.load_ms).c_str(), fmt_ms(out.total_ms).c_str(),
                no_cache ? "not cached (--no-cache)" : ("cache " + out.cache_dir + " key " + out.key).c_str());
    if (!out.cache_note.empty()) std::fprintf(stderr, "wasmwarp: note: %s\n", out.cache_note.c_str());
  };
  auto out = engine.compile(*m, req);
  if (!out) return fail(out.error().message);
  report(*out);
  if (out->target == wasmwarp::Backend::Gpu && both_layouts && m->memory_count() > 0) {
    req.gpu_layout = wasmwarp::MemoryLayout::Sparse;
    auto sparse = engine.compile(*m, req);
    if (!sparse) return fail(sparse.error().message);
    report(*sparse);
  }
  return kExitOk;
}

}  // namespace ww::cli
