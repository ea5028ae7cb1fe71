// What `wasmwarp run` says about a batch: the outcome counts, the summary
// on stderr (how it ran, where the time went, the GPU's memory per
// instance), the one trap line even -q keeps, and --stats FILE.json.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/result.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {

struct RunCounts {
  uint64_t instances = 0;
  uint64_t completed = 0;                   // finished without a trap
  uint64_t trapped = 0;                     // finished by a trap
  uint64_t unfinished = 0;                  // stopped by the timeout or a signal, or never started
  std::map<uint8_t, uint64_t> trap_counts;  // finished instances, by trap code
  uint64_t first_trapped = 0;               // valid when trapped > 0
  uint8_t unfinished_code = 0;              // TrapCode::Timeout or ::Interrupted
};
RunCounts count_outcomes(const wasmwarp::CallResult& r);

// The summary (several lines, ends with a newline).
std::string summary_text(const RunCounts& c, const wasmwarp::CallResult& r);
// "wasm trap: instance 7: integer divide by zero" (with "(first of N
// trapped)" when several did) plus a line for unfinished instances; empty
// when every instance completed.
std::string problem_lines(const RunCounts& c, const wasmwarp::CallResult& r);
// The same, given the first trapped instance's message.
std::string problem_text(const RunCounts& c, const std::string& first_trap_message);
// The summary's figures as JSON, written atomically.
Status write_stats(const std::string& path, const RunCounts& c, const wasmwarp::RunReport& r,
                   const std::string& mpi_json = {});

}  // namespace ww::cli
