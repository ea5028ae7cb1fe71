// Pieces of `wasmwarp run` around the batch: the progress line and the
// `gpu` intrinsics' files.
#pragma once

#include <cstdint>

#include "cli/batch.h"
#include "common/result.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {

// --backend auto|cpu|gpu and --tier auto|interp|compiled; the error
// names the accepted words.
Result<wasmwarp::Backend> parse_backend(const std::string& s);
Result<wasmwarp::Tier> parse_tier(const std::string& s);
// --gpus: "all", a count ("2": the first two GPUs) or GPU numbers ("0,2,5";
// one alone with a trailing comma, "3,", as "3" is a count).
Status parse_gpus(const std::string& text, wasmwarp::EngineOptions::Gpu& o);

// The progress line of long batches on stderr: instances done, rate, time
// left. Silent for the first second, then at most twice a second; on a
// terminal it rewrites one line, elsewhere it prints a line every 10 s.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  void update(uint64_t done, uint64_t total, double seconds);
  void finish();  // ends the line, if one was shown

 private:
  bool enabled_, tty_, shown_ = false;
  double last_ = 0;
};

// The intrinsics' shared state from --image, --state, --state-in,
// --texture and --texture-filter.
Status setup_intrinsics(const RunSpec& spec, wasmwarp::GpuIntrinsics& g);
// Fails naming the option when --stats or --state-out, written after the
// batch, could not be written (a missing folder, one without write access).
Status check_output_paths(const RunSpec& spec);
// Writes --image and --state-out after the batch.
Status write_intrinsics_outputs(const RunSpec& spec, const wasmwarp::CallResult& r);

}  // namespace ww::cli
