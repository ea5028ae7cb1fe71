// `mpirun -np R wasmwarp run ...`: each rank runs its share of the batch
// (cli/mpi_world.h's mpi_share), and the outputs are the files one process
// would write, byte for byte, each rank writing its own rows at their place
// (MPI-IO) so that no rank holds more than its share. Rank 0 prints the
// summary, with the counts of every rank and a line per rank.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/batch.h"
#include "cli/mpi_world.h"
#include "cli/run_outputs.h"
#include "cli/run_report.h"

namespace ww::cli {

// What a run under mpirun cannot do yet: one clear error before any work.
[[nodiscard]] Status check_mpi_run(const RunSpec& spec);

// Under mpirun without --gpus: the host's rank r of n (n > 1) takes GPU
// r % count and plans with its share of that GPU's memory (the ranks on
// it divide it); a host's only rank uses all its GPUs. A launcher that bound GPUs to ranks (CUDA_VISIBLE_DEVICES
// set, as Slurm's --gpus-per-task does) chose already: every GPU the rank
// sees is its own.
void choose_rank_gpus(const RunSpec& spec, wasmwarp::EngineOptions::Gpu& g);

// Under mpirun without --threads: this rank's part of the host's cores,
// for its CPU workers and its host-side copies around GPU waves (the
// cores it is bound to, and no more than the host's cores over the ranks
// on it: unbound ranks that each took every core would run their copies
// side by side on too few).
void share_rank_cores(const RunSpec& spec, wasmwarp::EngineOptions& e);

// This rank's rows of an argument column or of --mem-in records that were
// read for every instance.
void keep_share(std::vector<uint64_t>& column, uint64_t instances);

// Where the outputs of a run go (the paths; the files were opened on every
// rank only to find an unwritable path before any work).
struct MpiOutputPaths {
  OutFormat fmt = OutFormat::None;
  std::string output, trap_path;
  std::vector<std::string> mem_out;
  std::vector<uint64_t> mem_out_len;  // bytes per instance
};

// Collective: --output rows (or, for .npy with traps and no --allow-traps,
// nothing: `refused`), the .npy trap codes and --mem-out records of every
// rank, in instance order.
[[nodiscard]] Status write_mpi_outputs(const MpiOutputPaths& paths, const wasmwarp::Module& m,
                                       const wasmwarp::ResultColumns& r, uint64_t total, bool refused);

// The rows of a rank whose call failed (it has no result): every instance
// "not finished: interrupted", zero results and memory outputs, so that
// the other ranks' rows are still written where they belong.
struct LostRows {
  std::vector<uint64_t> results;
  std::vector<uint8_t> traps;
  std::vector<uint32_t> sites;
  std::vector<std::vector<uint8_t>> memory;
  wasmwarp::ResultColumns columns;
  RunCounts counts;
  void make(uint64_t n, const std::vector<wasmwarp::ValueType>& types, const std::vector<uint64_t>& mem_len);
};

// Collective: the counts of every rank's instances (first_trapped as the
// whole batch's index).
RunCounts mpi_counts(const RunCounts& mine);
// Collective: what each rank did, for rank 0 (its summary lines and the
// "mpi" object of --stats: ranks, the slowest rank's wall, per_rank).
struct MpiRanks {
  double slowest_wall_s = 0;
  std::vector<std::string> lines;
  nlohmann::ordered_json json;
};
MpiRanks mpi_ranks(const RunCounts& all, const RunCounts& mine, const wasmwarp::CallResult& r);
// Collective: what rank 0 prints after the run (the summary unless
// `quiet`, the problem lines, a line per rank); the other ranks get "".
std::string mpi_report(const RunCounts& all, const RunCounts& mine, const MpiRanks& ranks,
                       const wasmwarp::CallResult& r, bool quiet);
// Collective: the ranks' canvases (--image) as one PNG, written by rank 0.
[[nodiscard]] Status write_mpi_canvas(const std::string& path, const wasmwarp::CallResult& r);

}  // namespace ww::cli
