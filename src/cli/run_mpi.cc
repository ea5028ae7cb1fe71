#include "cli/run_mpi.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/image_files.h"
#include "cli/io_formats.h"
#include "common/cores.h"
#include "common/host_workers.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

}  // namespace

Status check_mpi_run(const RunSpec& spec) {
  const MpiWorld& w = mpi_world();
  if (!w.active()) return Status::Ok();
  const std::string np = "mpirun with " + std::to_string(w.size) + " ranks";
  if (!spec.batch) return err(np + " runs batches: give -n N (each rank runs its share of the N instances)");
  if (spec.instances < uint64_t(w.size))
    return err(np + ": -n " + std::to_string(spec.instances) + " leaves a rank without instances");
  // A state buffer's reads, writes and atomic adds act on one buffer that
  // every instance sees at once; ranks' copies cannot be merged into that.
  if (!spec.state_out.empty() || !spec.state_in.empty() || spec.state_size)
    return err(np + ": --state is one buffer every instance reads and writes at once, which ranks cannot share");
  return Status::Ok();
}

void choose_rank_gpus(const RunSpec& spec, wasmwarp::EngineOptions::Gpu& g) {
  const MpiWorld& w = mpi_world();
  // One rank on its host uses all of the host's GPUs.
  if (!w.active() || w.local_size == 1 || !spec.gpus.empty() || spec.backend == "cpu" ||
      std::getenv("CUDA_VISIBLE_DEVICES"))
    return;
  const int count = wasmwarp::gpu_count();
  if (count == 0) return;
  const int device = w.local_rank % count;
  const int sharing = (w.local_size - device + count - 1) / count;  // local ranks j with j % count == device
  g.devices = {device};
  g.memory_share = 1.0 / std::max(sharing, 1);
}

void share_rank_cores(const RunSpec& spec, wasmwarp::EngineOptions& e) {
  const MpiWorld& w = mpi_world();
  if (!w.active()) return;
  const unsigned host = std::max(1u, std::thread::hardware_concurrency());
  const unsigned mine = std::max(1u, std::min(usable_cores(), host / unsigned(std::max(w.local_size, 1))));
  if (spec.threads == 0) e.threads = mine;
  limit_host_workers(mine);
}

void keep_share(std::vector<uint64_t>& column, uint64_t instances) {
  if (!mpi_world().active()) return;
  const MpiShare s = mpi_share(instances);
  column.erase(column.begin() + std::min<uint64_t>(column.size(), s.first + s.count), column.end());
  column.erase(column.begin(), column.begin() + std::min<uint64_t>(column.size(), s.first));
}

Status write_mpi_outputs(const MpiOutputPaths& paths, const wasmwarp::Module& m, const wasmwarp::ResultColumns& r,
                         uint64_t total, bool refused) {
  const MpiWorld& w = mpi_world();
  const MpiShare share = mpi_share(total);
  if (paths.fmt != OutFormat::None && !refused) {
    std::string mine;
    ResultWriter rows(r, m, paths.fmt,
                      [&mine](std::string_view b) {
                        mine.append(b);
                        return Status::Ok();
                      },
                      {share.first, total});
    // Formatting into memory cannot fail; only the writes below can.
    if (w.rank == 0) (void)rows.begin();
    (void)rows.rows(0, r.instances);
    if (w.rank + 1 == w.size) (void)rows.end();
    WW_TRY(mpi_write_ordered(paths.output, mine));
    if (!paths.trap_path.empty()) {
      std::string codes = w.rank == 0 ? npy_header("'|u1'", false, {total}) : "";
      codes.append(reinterpret_cast<const char*>(r.traps), r.instances);
      WW_TRY(mpi_write_ordered(paths.trap_path, codes));
    }
  }
  for (size_t k = 0; k < paths.mem_out.size(); ++k) {
    const uint64_t bytes = r.instances * (k < paths.mem_out_len.size() ? paths.mem_out_len[k] : 0);
    WW_TRY(mpi_write_ordered(paths.mem_out[k], {reinterpret_cast<const char*>(r.memory_out[k]), bytes}));
  }
  return Status::Ok();
}

void LostRows::make(uint64_t n, const std::vector<wasmwarp::ValueType>& types, const std::vector<uint64_t>& mem_len) {
  results.assign(n * std::max<size_t>(types.size(), 1), 0);
  traps.assign(n, wasmwarp::kTrapInterrupted);
  sites.assign(n, 0);
  columns = {};
  columns.instances = n;
  columns.types = types;
  columns.results = results.data();
  columns.traps = traps.data();
  columns.trap_function = sites.data();
  columns.trap_offset = sites.data();
  memory.clear();
  for (uint64_t len : mem_len) memory.emplace_back(n * len, 0);
  for (const std::vector<uint8_t>& b : memory) columns.memory_out.push_back(b.data());
  counts = {};
  counts.instances = n;
  counts.unfinished = n;
  counts.unfinished_code = wasmwarp::kTrapInterrupted;
}

RunCounts mpi_counts(const RunCounts& mine) {
  RunCounts all;
  all.instances = mpi_sum(mine.instances);
  all.completed = mpi_sum(mine.completed);
  all.trapped = mpi_sum(mine.trapped);
  all.unfinished = mpi_sum(mine.unfinished);
  all.unfinished_code = uint8_t(mpi_max(mine.unfinished_code));
  std::vector<uint64_t> by_code(256, 0);
  for (auto [code, n] : mine.trap_counts) by_code[code] = n;
  mpi_sum_each(by_code);
  for (unsigned code = 1; code < 256; ++code)
    if (by_code[code]) all.trap_counts[uint8_t(code)] = by_code[code];
  // The lowest index of a trapped instance: the complement's maximum.
  const uint64_t first = mine.trapped ? mpi_share(all.instances).first + mine.first_trapped : ~uint64_t{0};
  all.first_trapped = ~mpi_max(~first);
  return all;
}

MpiRanks mpi_ranks(const RunCounts& all, const RunCounts& mine, const wasmwarp::CallResult& r) {
  const MpiWorld& w = mpi_world();
  const MpiShare share = mpi_share(all.instances);
  const wasmwarp::RunReport& rep = r.report();
  const bool gpu = rep.backend == wasmwarp::Backend::Gpu;
  const std::string line = "  rank " + std::to_string(w.rank) + ": instances " + std::to_string(share.first) + ".." +
                           std::to_string(share.first + share.count - 1) + ", " + std::to_string(mine.completed) +
                           " completed, " + std::to_string(mine.trapped) + " trapped, wall " + seconds(rep.wall_s) +
                           " s, backend=" + wasmwarp::backend_name(rep.backend) +
                           (gpu ? " device=\"" + rep.device + "\"" : "") + "\n";
  nlohmann::ordered_json j = {{"rank", w.rank},
                              {"first", share.first},
                              {"instances", share.count},
                              {"completed", mine.completed},
                              {"trapped", mine.trapped},
                              {"wall_s", rep.wall_s},
                              {"backend", wasmwarp::backend_name(rep.backend)}};
  if (gpu) j["device"] = rep.device;
  MpiRanks out;
  out.lines = mpi_gather(line);
  const std::vector<std::string> per_rank = mpi_gather(j.dump());
  // The batch took as long as its slowest rank.
  out.slowest_wall_s = double(mpi_max(uint64_t(rep.wall_s * 1e6))) / 1e6;
  if (w.rank == 0) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const std::string& p : per_rank) all.push_back(nlohmann::ordered_json::parse(p));
    out.json = {{"ranks", w.size}, {"wall_s", out.slowest_wall_s}, {"per_rank", all}};
  }
  return out;
}

std::string mpi_report(const RunCounts& all, const RunCounts& mine, const MpiRanks& ranks,
                       const wasmwarp::CallResult& r, bool quiet) {
  const MpiWorld& w = mpi_world();
  const std::string trap = mine.trapped ? r.trap_message(mine.first_trapped) : "";
  const std::vector<std::string> traps = mpi_gather(trap);
  if (w.rank != 0) return "";
  std::string s;
  if (!quiet) {
    const double wall = ranks.slowest_wall_s;
    s = summary_text(all, r);
    s += "mpi: " + std::to_string(w.size) + " ranks (the figures above are rank 0's but the counts); wall " +
         seconds(wall) + " s (the slowest rank), rate " +
         std::to_string(uint64_t(wall > 0 ? double(all.completed) / wall : 0)) + " completed instances/s\n";
    for (const std::string& l : ranks.lines) s += l;
  }
  const auto first = std::find_if(traps.begin(), traps.end(), [](const std::string& t) { return !t.empty(); });
  return s + problem_text(all, first == traps.end() ? "" : *first);
}

Status write_mpi_canvas(const std::string& path, const wasmwarp::CallResult& r) {
  const wasmwarp::Image* mine = r.image();
  if (!mine) return Status::Ok();
  // Every rank's canvas starts transparent black (zeros) and holds what
  // its instances drew: a pixel's largest word over the ranks is the one a
  // rank drew (where two ranks drew the same pixel, one of them, as two
  // instances' atomic stores on one GPU leave one of theirs).
  wasmwarp::Image all = *mine;
  static_assert(sizeof(uint32_t) == 4);
  std::vector<uint32_t> words(all.rgba.size() / 4);
  std::memcpy(words.data(), all.rgba.data(), words.size() * 4);
  mpi_max_to_root(words.data(), words.size());
  if (mpi_world().rank != 0) return Status::Ok();
  std::memcpy(all.rgba.data(), words.data(), words.size() * 4);
  return write_png(path, all);
}

}  // namespace ww::cli
