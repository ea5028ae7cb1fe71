// `wasmwarp run`: one instance, or N independent instances of the same export
// spread over CPU threads, with per-instance arguments, memory input/output
// and result files.
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

struct RunSpec {
  std::string module_path;
  std::string invoke;             // empty: _start
  std::vector<std::string> args;  // constants, "@index", "@col:FILE[:K]"
  uint64_t instances = 1;
  bool batch = false;             // -n or --output given: summary + per-instance rows
  unsigned threads = 0;           // 0: hardware_concurrency
  uint64_t fuel = 0;
  bool deny_recursion = false;
  std::string output;             // .csv, .json or .npy
  bool allow_traps = false;       // .npy: write zero rows + a trap-code file
  std::vector<std::string> mem_in;   // "ADDR=FILE"
  std::optional<uint64_t> mem_in_size;
  std::vector<std::string> mem_out;  // "ADDR:LEN=FILE"
  bool quiet = false;             // no summary
};

// Runs the spec; prints results, errors ("wasmwarp: error: ...") and the
// summary; returns the exit code.
int run_modules(const RunSpec& spec);

}  // namespace ww::cli
