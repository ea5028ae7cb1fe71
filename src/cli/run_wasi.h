// `wasmwarp run MODULE.wasm [ARGS...]` for a WASI command (a module that
// imports wasi_snapshot_preview1): one instance on the CPU whose `_start`
// runs with ARGS as its argv, the process's stdio, --env variables and
// --dir preopens, exiting with the program's code like `wasmtime run`.
#pragma once

#include <memory>

#include "batch/batch.h"
#include "cli/batch.h"
#include "wasi/wasi.h"
#include "common/result.h"
#include "runtime/runtime.h"

namespace ww::cli {

// The program's exit code (proc_exit's, or 0 when _start returns), or
// kExitTrap after printing its trap.
Result<int> run_wasi_command(const RunSpec& spec, std::shared_ptr<const CompiledModule> module);

// --env and --dir, and argv from the module's path and ARGS.
Result<wasi::Config> wasi_config_of(const RunSpec& spec);
// A batch's (-n, --output, --stdout...): ARGS with @index, the patterns,
// the seed (--seed, else from the OS).
Result<std::shared_ptr<const batch::WasiBatch>> wasi_batch_of(const RunSpec& spec);

}  // namespace ww::cli
