#include "cli/cli.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "cli/batch.h"
#include "cli/common.h"
#include "cli/mpi_world.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {
namespace {

constexpr const char* kUsage = R"(wasmwarp: WebAssembly, one instance or millions at once, on NVIDIA GPUs or the CPU

usage: wasmwarp COMMAND [OPTIONS] MODULE.wasm [ARGS...]

examples:
  wasmwarp run prog.wasm ARGS...                     a WASI command, once (as a shell runs it)
  wasmwarp run -n 1000000 --invoke f m.wasm @index   f(i) in a million instances, one row each

commands:
  run       run an export once, or in N independent instances (run --help)
  compile   compile a module to native code / a CUBIN and cache it (compile --help)
  validate  check a module; prints "valid" or the error
  inspect   imports, exports, per-function manifests, call graph, sizes, times
  disasm    print the register bytecode

options:
  --version   print the version
  --help      this text

exit codes: 0 success, 1 a WebAssembly trap (in a batch: any instance
trapped; output files are still complete), 2 a usage or input error.
)";

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "-V" || cmd == "version") {
    std::printf("wasmwarp 0.1.0\n");
    return kExitOk;
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "run") return cmd_run(argv[0], argc - 2, argv + 2);
  if (cmd == "compile") return cmd_compile(argc - 2, argv + 2);
  if (cmd == "validate") return cmd_validate(argc - 2, argv + 2);
  if (cmd == "inspect") return cmd_inspect(argc - 2, argv + 2);
  if (cmd == "disasm") return cmd_disasm(argc - 2, argv + 2);
  std::fprintf(
      stderr, "wasmwarp: error: unknown command '%s' (commands: run, compile, validate, inspect, disasm; see --help)\n",
      cmd.c_str());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  const MpiScope mpi(&argc, &argv);
  if (!mpi.status().ok()) {
    print_error(mpi.status().error().message);
    return kExitUsage;
  }
  const int rc = dispatch(argc, argv);
  if (rc == kExitUsage) mpi.abort(rc);
  // A compile the batch stopped waiting for (--compile-wait) ends with the
  // process, not the process with it (a rank under mpirun waited for its
  // own: engine_options).
  if (wasmwarp::background_compiles_running()) wasmwarp::exit_stopping_compiles(rc);
  return rc;
}

}  // namespace ww::cli
