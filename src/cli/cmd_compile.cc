// `wasmwarp compile`: fills the compiled-code cache ahead of time, and with
// --emit-source writes the generated C++ for reading.
#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>

#include "batch/batch.h"
#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/module_source.h"
#include "common/text.h"
#include "compiled/compiled_tier.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::cli {
namespace {

constexpr const char* kCompileFooter = R"(
The compiled code is what `wasmwarp run --tier compiled|auto` uses: give
the same --invoke (several allowed; none: every exported function), and
--fuel / --timeout / --gpu-layout when the runs will use them, since
metered code, code that checks a deadline and each memory layout are
compiled separately. The cache is $WW_CACHE_DIR, else
$XDG_CACHE_HOME/wasmwarp, else ~/.cache/wasmwarp (or --cache-dir).
--emit-source FILE writes the self-contained translation unit the compiler
gets (the runtime headers first, the module's functions after them); a
large module compiled for the CPU is several units, written to FILE,
FILE.1, FILE.2, ... )";

std::string fmt_ms(double ms) { return format_fixed(ms, 1) + " ms"; }

}  // namespace

int cmd_compile(int argc, char** argv) {
  CLI::App app("Compile a module's functions to native code (CPU) or a CUBIN (GPU) and cache it.",
               "wasmwarp compile");
  app.footer(kCompileFooter);
  std::string module_path, backend = "auto", emit, cache_dir, fuel, timeout, layout = "interleaved";
  std::vector<std::string> invoke;
  bool no_cache = false;
  app.add_option("module", module_path, "the .wasm file")->required()->type_name("MODULE.wasm");
  app.add_option("--backend", backend, "cpu, gpu or auto (the GPU when one is usable)")->type_name("B");
  app.add_option("--invoke", invoke, "an export the runs will call (repeatable)")->allow_extra_args(false)->type_name("NAME");
  app.add_option("--emit-source", emit, "write the generated C++ translation unit here")->type_name("FILE");
  app.add_option("--cache-dir", cache_dir, "the compiled-code cache")->type_name("DIR");
  app.add_flag("--no-cache", no_cache, "compile without reading or writing the cache");
  app.add_option("--fuel", fuel, "compile metered code, for runs with --fuel")->type_name("N");
  app.add_option("--timeout", timeout, "compile deadline checks, for GPU runs with --timeout")->type_name("S");
  app.add_option("--gpu-layout", layout,
                 "interleaved (default), contiguous or sparse: the layout the runs will use (run's summary says which)")
      ->type_name("L");
  std::string gpu_arch;
  app.add_option("--gpu-arch", gpu_arch, "compile for this GPU (sm_90) without one: fills the cache only")->type_name("sm_XY");
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
  auto be = batch::parse_backend(backend);
  if (!be.ok()) return fail(be.error().message);
  const auto parsed_layout = gpu::parse_layout(layout);
  if (!parsed_layout || *parsed_layout == gpu::MemoryLayout::Auto)
    return fail("--gpu-layout must be interleaved, contiguous or sparse, not '" + layout + "'");
  auto cm = compile_module_file(module_path);
  if (!cm.ok()) return fail(module_path + ": " + cm.error().to_string());

  compiled::Request req;
  req.module = *cm;
  for (const std::string& name : invoke) {
    uint32_t index = 0;
    auto t = batch::export_function_type((*cm)->module, name, &index);
    if (!t.ok()) return fail(t.error().message);
    req.entries.push_back(index);
  }
  bool gpu = *be == batch::Backend::Gpu || !gpu_arch.empty();
  if (*be == batch::Backend::Auto && gpu_arch.empty()) gpu = gpu::probe_device().available;
  if (!gpu_arch.empty()) {
    int arch = 0;
    if (gpu_arch.rfind("sm_", 0) == 0) arch = std::atoi(gpu_arch.c_str() + 3);
    if (arch < 70 || arch > 200) return fail("--gpu-arch must be sm_70 or later, like sm_90, not '" + gpu_arch + "'");
    req.gpu_arch = arch;
    req.load = gpu::probe_device().available;
  } else if (*be == batch::Backend::Gpu) {
    gpu::DeviceInfo dev = gpu::probe_device();
    if (!dev.available) return fail("--backend gpu: " + dev.reason);
  }
  req.target = gpu ? compiled::Target::Gpu : compiled::Target::Cpu;
  req.metered = !fuel.empty() && fuel != "0";
  req.deadline = !timeout.empty();
  req.layout = *parsed_layout;
  req.cache.enabled = !no_cache;
  req.cache.dir = cache_dir;

  if (!emit.empty()) {
    auto units = compiled::translation_units(req);
    if (!units.ok()) return fail(units.error().message);
    // FILE, then FILE.1, FILE.2, ... for the units of a split module.
    for (size_t u = 0; u < units->size(); ++u) {
      std::string name = u == 0 ? emit : emit + "." + std::to_string(u);
      std::ofstream f(name, std::ios::binary);
      f << (*units)[u];
      if (!f.flush()) return fail("cannot write " + name);
    }
  }
  compiled::Outcome out;
  auto t0 = std::chrono::steady_clock::now();
  Status s = Status::Ok();
  if (gpu) {
    auto r = compiled::compile_gpu(req, &out);
    if (!r.ok()) s = r.error();
  } else {
    auto r = compiled::compile_cpu(req, &out);
    if (!r.ok()) s = r.error();
  }
  if (!s.ok()) return fail(s.error().message);
  double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: compiled for the %s (%s): codegen %s, compile %s, load %s, total %s; %s\n",
              module_path.c_str(), gpu ? "GPU" : "CPU", out.cache_hit ? "cache hit" : "cache miss",
              fmt_ms(out.generate_ms).c_str(), fmt_ms(out.compile_ms).c_str(), fmt_ms(out.load_ms).c_str(),
              fmt_ms(total).c_str(),
              no_cache ? "not cached (--no-cache)"
                       : ("cache " + resolve_cache_dir(req.cache) + " key " + out.key).c_str());
  if (!out.cache_note.empty()) std::fprintf(stderr, "wasmwarp: note: %s\n", out.cache_note.c_str());
  return kExitOk;
}

}  // namespace ww::cli
