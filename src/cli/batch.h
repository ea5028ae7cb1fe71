// `wasmwarp run`'s options: one instance, or N independent instances of the
// same export, with per-instance arguments, memory input/output and result
// files. The batch engine (src/batch) does the running.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ww::cli {

// Exit codes of the command line (documented in `wasmwarp --help`).
inline constexpr int kExitOk = 0;
inline constexpr int kExitTrap = 1;   // the export (or any batch instance) trapped
inline constexpr int kExitUsage = 2;  // bad arguments, files or modules
// A batch stopped by signal S (Ctrl-C: SIGINT) exits with 128 + S, as a
// shell reports a process killed by it.

struct RunSpec {
  std::string module_path;
  std::string invoke;                // empty: _start
  std::vector<std::string> init;     // --init: exports run once, their state shared
  std::vector<std::string> then;     // --then NAME[:K[:ARGS]]: calls after the export, on the same instances
  bool gpu_launch_per_call = false;  // --then on the GPU: a launch per call, not per chain
  std::vector<std::string> args;     // constants, "@index", "@col:FILE[:K]"
  uint64_t instances = 1;
  bool batch = false;    // -n or --output given: a summary; rows only with --output
  unsigned threads = 0;  // 0: every core the process may use
  uint64_t fuel = 0;
  bool deny_recursion = false;
  // Function imports nothing provides: trap when called, naming the import
  // (--trap-unknown-imports), or return zeros (--default-unknown-imports).
  bool trap_unknown_imports = false;
  bool default_unknown_imports = false;
  std::string output;               // .csv, .json or .npy
  bool allow_traps = false;         // .npy: write zero rows + a trap-code file
  std::vector<std::string> mem_in;  // "ADDR=FILE"
  std::optional<uint64_t> mem_in_size;
  std::vector<std::string> mem_out;  // "ADDR:LEN=FILE"
  bool quiet = false;                // no summary and no progress line
  std::string stats;                 // --stats FILE.json: the summary's figures
  // WASI programs (modules importing wasi_snapshot_preview1).
  std::vector<std::string> dirs;     // --dir HOST[::GUEST]: read-only preopens
  std::vector<std::string> dirs_rw;  // --dir-rw HOST[::GUEST]: writable ("{i}": per instance)
  std::vector<std::string> env;      // --env NAME=VALUE
  // Batches of them: "{i}" in a pattern is the instance's index.
  std::string stdout_pattern, stderr_pattern, stdin_pattern;
  std::optional<uint64_t> seed;        // random_get; default: from the OS
  std::optional<uint64_t> output_cap;  // bytes of stdout (and of stderr) per instance

  std::string backend = "auto";  // auto | cpu | gpu
  std::string tier = "auto";     // auto | interp | compiled
  std::string cache_dir;         // --cache-dir (else WW_CACHE_DIR, XDG)
  bool no_cache = false;
  double timeout = 0;       // seconds; 0 = none
  double compile_wait = 1;  // --compile-wait seconds; negative: until the compile ends
  // The `gpu` intrinsics.
  std::string image;        // "WIDTHxHEIGHT=out.png"
  uint64_t state_size = 0;  // --state N
  std::string state_in, state_out;
  std::vector<std::string> textures;  // "UNIT=image.png"
  std::string texture_filter = "nearest";
  // GPU tuning.
  std::string gpu_layout = "auto";
  uint32_t gpu_stack_slots = 0;  // limits; 0 = the CPU backend's
  uint32_t gpu_call_depth = 0;
  uint32_t gpu_memory_pages = 0;  // 0 = automatic
  uint32_t gpu_max_wave = 0;      // 0 = as large as memory allows
  std::string gpus;               // --gpus; empty: not given (every GPU, or under mpirun a rank's own)
  uint32_t gpu_workers = 1;       // --gpu-workers
};

// Runs the spec; prints results, errors ("wasmwarp: error: ...") and the
// summary; returns the exit code.
int run_modules(const RunSpec& spec);

}  // namespace ww::cli
