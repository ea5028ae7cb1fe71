// The WASI side of `wasmwarp run`: --dir, --dir-rw, --env, ARGS, the
// stdio patterns and --seed as the API's WasiOptions.
#pragma once

#include <vector>

#include "cli/batch.h"
#include "common/result.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {

// --dir and --dir-rw (HOST[::GUEST]; the guest name defaults to the host
// path, as in wasmtime, without a "{i}").
Result<std::vector<wasmwarp::WasiOptions::Dir>> dirs_of(const RunSpec& spec);
// A WASI command's world: argv (the module's path, then ARGS), --env,
// the directories, the patterns, --output-cap and the seed (--seed, else
// from the OS).
Result<wasmwarp::WasiOptions> wasi_options_of(const RunSpec& spec);

}  // namespace ww::cli
