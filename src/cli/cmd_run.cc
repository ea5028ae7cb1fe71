// `wasmwarp run`: option parsing. Options come before the module; every
// token after the module is an argument of the export, so "-5" needs no
// escaping. The split is done here, by asking CLI11 which options take a
// value, and only the options part is handed to CLI11.
#include <CLI/CLI.hpp>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/value_format.h"

namespace ww::cli {
namespace {

constexpr const char* kRunFooter = R"(
Arguments of the export (after MODULE) are constants or per-instance values:
  42  -7  0xff  1.5  0x1.8p3  inf  -nan  nan:0x200000  null  (constants)
  @index             the instance index (0 .. N-1)
  @col:FILE[:K]      column K (default 0) of FILE, row i for instance i:
                     .npy (v1/v2, little-endian i1..i8/u1..u8/f4/f8, 1-D or 2-D),
                     .csv (one row per instance; a first row with no numbers
                     is a header), else raw little-endian elements of the
                     parameter's type. Fewer rows than instances is an error.
Memory I/O (memory 0 of each instance; ADDR is a number or an export: a
() -> i32 function called per instance, or an i32 global):
  --mem-in ADDR=FILE       record i of FILE written at ADDR before the call
                           (record size --mem-in-size, else size(FILE)/N)
  --mem-out ADDR:LEN=FILE  LEN bytes at ADDR after the call; FILE gets N*LEN
                           bytes in instance order (zeros for trapped ones)
  Out-of-bounds records trap that instance with "out of bounds memory access".
Output: a batch prints nothing per instance unless asked; the summary goes to
stderr (-q drops it, but never the line about trapped or unfinished
instances). --output FILE, one row per instance, written to a temporary file
and renamed when complete:
  -      tab-separated rows on stdout: INDEX, results (or "trap: MESSAGE")
  .csv   instance,result0,...,trap (results empty and trap message set when trapped)
  .json  [{"instance":0,"results":[...],"trap":null}, ...]; integers as
         numbers, floats/refs as exact text ("1.5", "nan:0x200000", "-0");
         a trapped row also names trap_function and trap_offset (the
         bytecode word offset in it, as `wasmwarp disasm` shows)
  .npy   numeric results: (N,) for one, (N,M) if all of one type, else a
         structured dtype. If any instance traps the file is not written
         (exit 1) unless --allow-traps: then trapped rows are zero and
         STEM.traps.npy (uint8, 0 = ok, else the trap code) is written too.
Backends: --backend auto runs on the GPU when one is usable, else on all CPU
cores (the summary says which, and why). Tiers: --tier interp runs the
interpreter (starts at once); --tier compiled translates the module to C++
and compiles it (NVRTC for the GPU, the host C++ compiler for the CPU),
cached on disk, falling back to the interpreter with a one-line reason when
that fails; --tier auto (default) uses cached code, or for large batches
starts on the interpreter while compiling in the background and switches
when the code is ready (the summary lists which tier ran which instances). On the GPU each instance is one
thread; batches larger than GPU memory run in waves (the summary shows the
plan: memory per instance, wave size). Instances start with small stacks
(64 frames, 384 slots) and go on in stack segments from a device pool, up
to --gpu-call-depth / --gpu-stack-slots (default: the CPU backend's
limits), so recursion that runs on the CPU runs on the GPU; compiled code
that outgrows the CUDA stack runs again on the interpreter kernel. The GPU
runs functions the module
defines and the `gpu` intrinsics; address exports of --mem-in/--mem-out are
evaluated once there (every instance starts from the same state).
Imports: the `gpu` module and, for WASI commands, wasi_snapshot_preview1;
any other import is an error before anything runs, unless it is a function
and --trap-unknown-imports (a call traps: "unknown import called: env.foo")
or --default-unknown-imports (a call returns zeros) stands in for it.
Intrinsics (module "gpu", both backends, identical results):
  get_thread_id, instance_count, get_time, set_pixel (--image WxH=FILE.png),
  read_state/write_state/atomic_add (--state N, --state-in, --state-out),
  texture_sample (--texture UNIT=FILE.png, --texture-filter nearest|bilinear).
--timeout SECONDS stops the batch: instances that had not finished are
reported as "not finished: timeout" (running instances stop too). Ctrl-C or
SIGTERM stops a batch the same way ("not finished: interrupted"): what
finished is written, and the exit code is 128 + the signal; a second signal
quits at once, removing temporary output files. Long batches print a
progress line on stderr. The summary splits the time by phase (read inputs,
translate, compile, plan, upload, memory set-up, kernel, download, write
outputs); --stats FILE.json writes it and the counts as JSON.
Set-up once: --init NAME[:A,B,...] (repeatable, in order; constant
arguments after the colon) runs those exports, and the
module's start function, once in one instance; every instance of the batch
then starts from a copy of that instance's memory, globals and tables
instead of running them itself. Without --invoke the export `_start` runs. A trap prints "wasm trap: MESSAGE"
on stderr. Exit codes: 0 ok, 1 trap (batch: any instance trapped or did not
finish), 2 usage or input error, 128 + N stopped by signal N. MODULE may be
a binary .wasm or the text format.)";

}  // namespace

int cmd_run(const char* prog, int argc, char** argv) {
  CLI::App app("Run an export of a WebAssembly module.", "wasmwarp run");
  app.footer(kRunFooter);
  RunSpec spec;
  std::string instances, threads, fuel, mem_in_size, module_name, timeout, state_size, seed, output_cap, compile_wait;
  std::string gpu_stack_slots, gpu_call_depth, gpu_memory_pages, gpu_max_wave, gpu_workers;
  std::vector<std::string> shown_args;
  app.add_option("--invoke", spec.invoke, "export to call (default: _start)")->type_name("NAME");
  app.add_option("--init", spec.init,
                 "run this export once before the batch; every instance starts from the state it leaves (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME[:ARGS]");
  app.add_option("--then", spec.then,
                 "then call this export on the same instances, K times (default 1), with constant or @index arguments; "
                 "repeatable, in order; the results are the last call's")
      ->allow_extra_args(false)
      ->type_name("NAME[:K[:ARGS]]");
  app.add_flag("--gpu-launch-per-call", spec.gpu_launch_per_call,
               "--then on the GPU: one kernel launch per call instead of one per chain (for comparison)");
  auto* n_opt = app.add_option("-n,--instances", instances, "run N independent instances (batch mode)")->type_name("N");
  app.add_option("--threads", threads, "worker threads (default: all cores)")->type_name("T");
  app.add_option("--fuel", fuel, "instructions per invocation before the trap 'fuel exhausted'")->type_name("N");
  app.add_option("--output", spec.output, "per-instance results: .csv, .json, .npy, or - for rows on stdout")
      ->type_name("FILE");
  app.add_flag("--allow-traps", spec.allow_traps, ".npy output: write zero rows for traps plus STEM.traps.npy");
  app.add_option("--mem-in", spec.mem_in, "per-instance bytes written into memory")
      ->allow_extra_args(false)
      ->type_name("ADDR=FILE");
  app.add_option("--mem-in-size", mem_in_size, "record size of --mem-in files in bytes")->type_name("BYTES");
  app.add_option("--mem-out", spec.mem_out, "per-instance bytes read from memory")
      ->allow_extra_args(false)
      ->type_name("ADDR:LEN=FILE");
  app.add_flag("--deny-recursion", spec.deny_recursion, "reject modules whose call graph has a cycle");
  app.add_flag("--trap-unknown-imports", spec.trap_unknown_imports,
               "function imports nothing provides trap when called (\"unknown import called: env.foo\") instead "
               "of failing the run");
  app.add_flag("--default-unknown-imports", spec.default_unknown_imports,
               "function imports nothing provides return zeros of their result types when called");
  app.add_flag("-q,--quiet", spec.quiet, "no batch summary and no progress line");
  app.add_option("--stats", spec.stats, "write the batch's counts and time split as JSON")->type_name("FILE.json");
  app.add_option("--backend", spec.backend, "auto (GPU when one is usable, else CPU), cpu or gpu")->type_name("B");
  app.add_option("--tier", spec.tier, "interp, compiled (the module compiled to native code) or auto (default)")
      ->type_name("T");
  app.add_option("--cache-dir", spec.cache_dir,
                 "compiled-code cache (default: $WW_CACHE_DIR, else $XDG_CACHE_HOME/wasmwarp)")
      ->type_name("DIR");
  app.add_flag("--no-cache", spec.no_cache, "neither read nor write the compiled-code cache");
  app.add_option("--compile-wait", compile_wait,
                 "--tier auto: how long a batch that ends before its background compile waits for it, for the cache "
                 "(default 1; 'end': until it ends); then the compile is stopped")
      ->type_name("SECONDS|end");
  app.add_option("--timeout", timeout, "stop the batch after this many seconds; unfinished instances are reported")
      ->type_name("SECONDS");
  app.add_option("--image", spec.image, "RGBA image for gpu.set_pixel, written as PNG")->type_name("WxH=FILE.png");
  app.add_option("--state", state_size, "state buffer of N i32 for gpu.read_state/write_state/atomic_add")
      ->type_name("N");
  app.add_option("--state-in", spec.state_in, "initial state values (raw little-endian i32 or .npy)")
      ->type_name("FILE");
  app.add_option("--state-out", spec.state_out, "final state values (raw i32, or .npy by extension)")
      ->type_name("FILE");
  app.add_option("--texture", spec.textures, "bind a PNG to a texture unit for gpu.texture_sample")
      ->allow_extra_args(false)
      ->type_name("UNIT=FILE.png");
  app.add_option("--texture-filter", spec.texture_filter, "nearest (default) or bilinear")->type_name("F");
  app.add_option("--gpu-layout", spec.gpu_layout,
                 "linear memory layout on the GPU: auto (default: interleaved when the batch's memory fits one wave, "
                 "else sparse), interleaved, contiguous or sparse")
      ->type_name("L");
  app.add_option("--gpu-stack-slots", gpu_stack_slots,
                 "most 64-bit frame slots a GPU instance may use (default: the CPU's, 4194304)")
      ->type_name("N");
  app.add_option("--gpu-call-depth", gpu_call_depth,
                 "most call frames a GPU instance may use (default: the CPU's, 20000)")
      ->type_name("N");
  app.add_option("--gpu-memory-pages", gpu_memory_pages, "linear memory capacity per GPU instance in 64 KiB pages")
      ->type_name("N");
  app.add_option("--gpu-max-wave", gpu_max_wave, "largest number of instances per GPU wave")->type_name("N");
  app.add_option("--gpu-workers", gpu_workers,
                 "wave loops per GPU, each with its share of its memory, so that one wave's transfers overlap "
                 "another's kernel (default 1)")
      ->type_name("N");
  app.add_option("--gpus", spec.gpus,
                 "GPUs to spread the batch over: all (default), a count N (the first N), or numbers 0,2,5 (one alone "
                 "as 3,); the faster GPU takes more instances")
      ->type_name("all|N|LIST");
  app.add_option("--dir", spec.dirs,
                 "WASI: preopen a host directory, read-only, under the guest name GUEST (default: HOST)")
      ->allow_extra_args(false)
      ->type_name("HOST[::GUEST]");
  app.add_option("--dir-rw", spec.dirs_rw,
                 "WASI: preopen a host directory the program may write (made when missing); in a batch {i} in HOST is "
                 "each instance's index, so that instances never write the same files")
      ->allow_extra_args(false)
      ->type_name("HOST[::GUEST]");
  app.add_option("--env", spec.env, "WASI: an environment variable of the program")
      ->allow_extra_args(false)
      ->type_name("NAME=VALUE");
  app.add_option(
         "--stdout", spec.stdout_pattern,
         "WASI batch: each instance's stdout to its own file, {i} = its index (default: in instance order on stdout)")
      ->type_name("PATTERN");
  app.add_option("--stderr", spec.stderr_pattern,
                 "WASI batch: each instance's stderr to its own file (default: in instance order on stderr)")
      ->type_name("PATTERN");
  app.add_option("--stdin", spec.stdin_pattern,
                 "WASI batch: each instance's stdin from a file, {i} = its index (default: empty)")
      ->type_name("PATTERN");
  app.add_option("--output-cap", output_cap,
                 "WASI batch: bytes of stdout, and of stderr, an instance may write; the rest is cut (default: 64 MiB)")
      ->type_name("BYTES");
  app.add_option("--seed", seed, "WASI batch: random_get's seed, for reproducible batches (default: from the OS)")
      ->type_name("S");
  app.add_option("module", module_name, "the .wasm file")->type_name("MODULE.wasm");
  app.add_option("args", shown_args, "arguments of the export")->type_name("ARGS");

  // Split: options (and their values) up to the first other token, which is
  // the module; everything after it belongs to the export.
  std::vector<std::string> opts;
  int i = 0;
  bool have_module = false;
  for (; i < argc; ++i) {
    std::string t = argv[i];
    if (t == "--") {
      ++i;
      break;
    }
    if (t.size() < 2 || t[0] != '-') break;
    opts.push_back(t);
    if (t.find('=') != std::string::npos) continue;
    bool takes_value = false;
    for (const CLI::Option* o : app.get_options())
      if (!o->get_positional() && o->check_name(t)) takes_value = o->get_expected_max() > 0;
    // "-n5" carries its value; "-n" and "--invoke" take the next token.
    if (takes_value && !(t[1] != '-' && t.size() > 2) && i + 1 < argc) opts.push_back(argv[++i]);
  }
  if (i < argc) {
    spec.module_path = argv[i++];
    have_module = true;
    for (; i < argc; ++i) spec.args.push_back(argv[i]);
  }
  std::vector<std::string> cli_argv{std::string(prog) + " run"};
  cli_argv.insert(cli_argv.end(), opts.begin(), opts.end());
  std::vector<char*> ptrs;
  for (auto& s : cli_argv) ptrs.push_back(s.data());
  try {
    app.parse(int(ptrs.size()), ptrs.data());
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    print_error(std::string("run: ") + e.what());
    return kExitUsage;
  }
  if (!have_module) {
    print_error("run: missing MODULE.wasm (usage: wasmwarp run [OPTIONS] MODULE.wasm [ARGS...])");
    return kExitUsage;
  }
  if (spec.trap_unknown_imports && spec.default_unknown_imports) {
    print_error("--trap-unknown-imports and --default-unknown-imports exclude each other: give one");
    return kExitUsage;
  }
  auto count = [](const std::string& text, const char* opt, uint64_t& out) -> bool {
    auto v = parse_u64(text);
    if (!v.ok()) {
      print_error(std::string(opt) + ": " + v.error().message);
      return false;
    }
    out = *v;
    return true;
  };
  // Seconds, more than 0 (or 0 too, with `zero`).
  auto seconds = [](const std::string& text, const char* opt, bool zero, double& out) -> bool {
    char* end = nullptr;
    const double s = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end || !(zero ? s >= 0 : s > 0) || s > 1e9) {
      print_error(std::string(opt) + ": expected " + (zero ? "0 or more" : "a positive number of") + " seconds" +
                  (zero ? " or 'end'" : "") + ", got '" + text + "'");
      return false;
    }
    out = s;
    return true;
  };
  uint64_t v = 0;
  if (n_opt->count()) {
    if (!count(instances, "--instances", spec.instances)) return kExitUsage;
    spec.batch = true;
  }
  if (!spec.output.empty() || !spec.stats.empty()) spec.batch = true;
  if (!threads.empty()) {
    if (!count(threads, "--threads", v)) return kExitUsage;
    if (v == 0 || v > 4096) {
      print_error("--threads must be between 1 and 4096");
      return kExitUsage;
    }
    spec.threads = unsigned(v);
  }
  if (!fuel.empty() && !count(fuel, "--fuel", spec.fuel)) return kExitUsage;
  if (!seed.empty()) {
    if (!count(seed, "--seed", v)) return kExitUsage;
    spec.seed = v;
  }
  if (!output_cap.empty()) {
    if (!count(output_cap, "--output-cap", v)) return kExitUsage;
    spec.output_cap = v;
  }
  if (!spec.stdout_pattern.empty() || !spec.stderr_pattern.empty() || !spec.stdin_pattern.empty()) spec.batch = true;
  if (!mem_in_size.empty()) {
    if (!count(mem_in_size, "--mem-in-size", v)) return kExitUsage;
    spec.mem_in_size = v;
  }
  if (!timeout.empty() && !seconds(timeout, "--timeout", false, spec.timeout)) return kExitUsage;
  if (compile_wait == "end") spec.compile_wait = -1;
  else if (!compile_wait.empty() && !seconds(compile_wait, "--compile-wait", true, spec.compile_wait))
    return kExitUsage;
  if (!state_size.empty() && !count(state_size, "--state", spec.state_size)) return kExitUsage;
  struct U32Opt {
    const std::string& text;
    const char* name;
    uint32_t& out;
    uint64_t lo, hi;
  };
  // 65536 pages: a 32-bit memory's 4 GiB.
  for (const U32Opt& o : {U32Opt{gpu_stack_slots, "--gpu-stack-slots", spec.gpu_stack_slots, 1, 1u << 24},
                          U32Opt{gpu_call_depth, "--gpu-call-depth", spec.gpu_call_depth, 1, 1u << 20},
                          U32Opt{gpu_memory_pages, "--gpu-memory-pages", spec.gpu_memory_pages, 1, 65536},
                          U32Opt{gpu_max_wave, "--gpu-max-wave", spec.gpu_max_wave, 1, 0xffffffffu},
                          U32Opt{gpu_workers, "--gpu-workers", spec.gpu_workers, 1, 8}}) {
    if (o.text.empty()) continue;
    if (!count(o.text, o.name, v)) return kExitUsage;
    if (v < o.lo || v > o.hi) {
      print_error(std::string(o.name) + " must be between " + std::to_string(o.lo) + " and " + std::to_string(o.hi));
      return kExitUsage;
    }
    o.out = uint32_t(v);
  }
  return run_modules(spec);
}

}  // namespace ww::cli
