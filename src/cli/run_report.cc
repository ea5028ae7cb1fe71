#include "cli/run_report.h"

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "cli/io_formats.h"
#include "common/text.h"

namespace ww::cli {
namespace {

using wasmwarp::Backend;
using wasmwarp::RunReport;

std::string fmt_ms(double ms) { return format_fixed(ms, ms < 10 ? 2 : 1) + " ms"; }

// The summary's lines about how the batch ran: backend, tier per segment,
// compile time and cache.
std::string how_it_ran(const RunReport& r) {
  std::string s;
  if (r.backend == Backend::Gpu)
    s = "backend=gpu device=\"" + r.device + "\" kernel: " + format_fixed(r.kernel_ms / 1000, 6) + " s";
  else
    s = "backend=cpu threads=" + std::to_string(r.threads) +
        (r.backend_note.empty() ? "" : " (" + r.backend_note + ")");
  s += "\n";
  // Several GPUs: what each took (the faster one takes more).
  for (const wasmwarp::GpuShare& g : r.gpus)
    s += "  gpu " + std::to_string(g.device) + " (" + g.name + "): " + std::to_string(g.instances) + " instances, " +
         format_fixed(g.seconds, 3) + " s, kernel " + format_fixed(g.kernel_ms / 1000, 3) + " s\n";
  if (r.segments.size() == 1) {
    s += "tier: " + std::string(wasmwarp::tier_name(r.segments[0].tier)) + "\n";
  } else if (!r.segments.empty()) {
    s += "tiers:";
    for (const wasmwarp::Segment& g : r.segments)
      s += " " + std::to_string(g.first) + ".." + std::to_string(g.first + g.count - 1) + " " +
           wasmwarp::tier_name(g.tier) + " (" + format_fixed(g.seconds, 3) + " s)";
    s += "\n";
  }
  const RunReport::Compile& c = r.compile;
  if (c.attempted) {
    if (c.left_running && c.fallback.empty())
      s += "compile: still running when the batch ended; stopped after the batch waited " +
           format_fixed(r.phases.compile / 1e3, 1) +
           " s for it (--compile-wait), not cached: fill the cache once with `wasmwarp compile`\n";
    else if (c.fallback.empty())
      s += "compile: " + std::string(c.cache_hit ? "cache hit" : "cache miss") + ", codegen " +
           format_fixed(c.generate_ms, 1) + " ms, compile " + format_fixed(c.compile_ms, 1) + " ms, load " +
           format_fixed(c.load_ms, 1) + " ms" +
           (c.used ? "" : " (the batch finished first and waited for it, for the cache)") + "\n";
    else s += "compile: " + c.fallback + "\n";
    if (!c.cache_note.empty()) s += "cache: " + c.cache_note + "\n";
  }
  const RunReport::Compile::TierUp& u = c.tier_up;
  if (u.on) {
    s += "tier-up: " + std::to_string(u.compiled) + " functions compiled in " + std::to_string(u.units) + " units (" +
         std::to_string(u.cache_hits) + " from the cache), " + std::to_string(u.hot) + " got hot; compile " +
         format_fixed(u.compile_s, 1) + " s\n";
    if (u.failed) s += "tier-up: " + std::to_string(u.failed) + " units not compiled: " + u.error + "\n";
  }
  return s;
}

struct PhaseRow {
  const char* name;
  double wasmwarp::PhaseTimes::*field;
};
constexpr PhaseRow kPhases[] = {
    {"read inputs", &wasmwarp::PhaseTimes::read_inputs},
    {"translate", &wasmwarp::PhaseTimes::translate},
    {"compile", &wasmwarp::PhaseTimes::compile},
    {"plan", &wasmwarp::PhaseTimes::plan},
    {"upload", &wasmwarp::PhaseTimes::upload},
    {"memory set-up", &wasmwarp::PhaseTimes::memory_setup},
    {"kernel", &wasmwarp::PhaseTimes::kernel},
    {"download", &wasmwarp::PhaseTimes::download},
    {"write outputs", &wasmwarp::PhaseTimes::write_outputs},
};

}  // namespace

RunCounts count_outcomes(const wasmwarp::CallResult& r) {
  RunCounts c;
  c.instances = r.instances();
  const std::span<const uint8_t> traps = r.trap_codes();
  for (uint64_t i = 0; i < c.instances; ++i) {
    if (!r.finished(i)) {
      ++c.unfinished;
      c.unfinished_code = traps[i];
    } else if (traps[i]) {
      if (c.trapped++ == 0) c.first_trapped = i;
      ++c.trap_counts[traps[i]];
    } else {
      ++c.completed;
    }
  }
  return c;
}

std::string summary_text(const RunCounts& c, const wasmwarp::CallResult& result) {
  const RunReport& r = result.report();
  const uint64_t ignored_pixels = result.ignored_pixels();
  std::string s = "instances: " + std::to_string(c.instances) + "  completed: " + std::to_string(c.completed) +
                  "  trapped: " + std::to_string(c.trapped);
  if (c.unfinished) s += "  not finished: " + std::to_string(c.unfinished);
  s += "\n";
  for (auto [code, cnt] : c.trap_counts)
    s += "  trap " + std::string(wasmwarp::trap_message(code)) + ": " + std::to_string(cnt) + "\n";
  if (ignored_pixels) s += "  set_pixel calls outside the image: " + std::to_string(ignored_pixels) + "\n";
  s += "wall: " + format_fixed(r.wall_s, 3) +
       " s  rate: " + format_fixed(r.wall_s > 0 ? double(c.completed) / r.wall_s : 0.0, 0) +
       " completed instances/s  " + how_it_ran(r);
  s += "time:";
  const char* sep = " ";
  for (const PhaseRow& p : kPhases) {
    s += sep + std::string(p.name) + " " + fmt_ms(r.phases.*p.field);
    sep = ", ";
  }
  if (r.backend == Backend::Gpu) {
    s += " (gpu start-up " + fmt_ms(r.phases.gpu_startup) + ", overlapped)";
  }
  s += "\n";
  if (r.host_calls)
    s += "host calls: " + std::to_string(r.host_calls) + " in " + std::to_string(r.host_passes) +
         " pass(es) between launches, " + fmt_ms(r.phases.host_calls) + " of the kernel time\n";
  if (r.device_output_bytes)
    s += "device output: " + std::to_string(r.device_output_bytes) +
         " bytes of stdout/stderr records collected on the GPU\n";
  if (r.device_files)
    s += "device files: " + std::to_string(r.device_files) + " read-only file(s), " +
         std::to_string(r.device_file_bytes) + " bytes, read on the GPU\n";
  if (r.backend == Backend::Gpu && r.device_bytes_per_instance) {
    s += "gpu memory: " + std::to_string(r.device_bytes_per_instance) + " B per instance (linear memory " +
         std::to_string(r.linear_bytes_per_instance) + " B";
    if (r.memory_layout == wasmwarp::MemoryLayout::Sparse)
      s += " written of " + std::to_string(r.reserved_bytes_per_instance) + " B reserved, sparse";
    else s += ", " + std::string(wasmwarp::memory_layout_name(r.memory_layout)) + " dense";
    s += "), " + std::to_string(r.waves) + " wave(s) of up to " + std::to_string(r.wave_size);
    if (r.pool_reruns) s += "; " + std::to_string(r.pool_reruns) + " instance(s) ran again after the pool ran out";
    if (r.replans)
      s += "; the GPU refused the buffers of " + std::to_string(r.replans) +
           " plan(s), each made again with less memory";
    if (r.stack_reruns)
      s += "; " + std::to_string(r.stack_reruns) +
           " instance(s) ran out of compiled code's CUDA stack and ran again on the interpreter kernel";
    if (r.grow_reruns)
      s += "; " + std::to_string(r.grow_reruns) +
           " instance(s) grew their memory past the pages reserved for them and ran again with more";
    if (r.stack_pool_bytes)
      s += "; call stack segments: a pool of " + std::to_string((r.stack_pool_bytes + 1023) / 1024) + " KiB";
    s += "\n";
  }
  return s;
}

std::string problem_lines(const RunCounts& c, const wasmwarp::CallResult& r) {
  return problem_text(c, c.trapped ? r.trap_message(c.first_trapped) : "");
}

std::string problem_text(const RunCounts& c, const std::string& first_trap_message) {
  std::string s;
  if (c.trapped) {
    const uint64_t i = c.first_trapped;
    s += "wasm trap: instance " + std::to_string(i) + ": " + first_trap_message;
    if (c.trapped > 1) s += " (first of " + std::to_string(c.trapped) + " trapped instances)";
    s += "\n";
  }
  if (c.unfinished)
    s += "wasmwarp: " + std::to_string(c.unfinished) + " instance(s) " + wasmwarp::trap_message(c.unfinished_code) +
         "\n";
  return s;
}

Status write_stats(const std::string& path, const RunCounts& c, const RunReport& r, const std::string& mpi_json) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["instances"] = c.instances;
  j["completed"] = c.completed;
  j["trapped"] = c.trapped;
  j["not_finished"] = c.unfinished;
  ordered_json traps = ordered_json::object();
  for (auto [code, cnt] : c.trap_counts) traps[wasmwarp::trap_message(code)] = cnt;
  j["traps"] = traps;
  j["wall_s"] = r.wall_s;
  j["completed_per_s"] = r.wall_s > 0 ? double(c.completed) / r.wall_s : 0.0;
  j["backend"] = wasmwarp::backend_name(r.backend);
  if (r.backend == Backend::Gpu) j["device"] = r.device;
  else j["threads"] = r.threads;
  if (!r.gpus.empty()) {
    ordered_json gpus = ordered_json::array();
    for (const wasmwarp::GpuShare& g : r.gpus)
      gpus.push_back({{"device", g.device},
                      {"name", g.name},
                      {"instances", g.instances},
                      {"seconds", g.seconds},
                      {"kernel_ms", g.kernel_ms}});
    j["gpus"] = gpus;
  }
  ordered_json phases = ordered_json::object();
  for (const PhaseRow& p : kPhases) phases[p.name] = r.phases.*p.field;
  phases["gpu start-up"] = r.phases.gpu_startup;
  phases["host calls"] = r.phases.host_calls;
  j["phases_ms"] = phases;
  if (r.host_calls || r.device_output_bytes)
    j["host_calls"] = {{"calls", r.host_calls},
                       {"passes", r.host_passes},
                       {"device_output_bytes", r.device_output_bytes},
                       {"device_files", r.device_files},
                       {"device_file_bytes", r.device_file_bytes}};
  ordered_json segs = ordered_json::array();
  for (const wasmwarp::Segment& g : r.segments)
    segs.push_back(
        {{"first", g.first}, {"count", g.count}, {"tier", wasmwarp::tier_name(g.tier)}, {"seconds", g.seconds}});
  j["tiers"] = segs;
  if (r.backend == Backend::Gpu)
    j["gpu_memory"] = {{"bytes_per_instance", r.device_bytes_per_instance},
                       {"linear_bytes_per_instance", r.linear_bytes_per_instance},
                       {"reserved_bytes_per_instance", r.reserved_bytes_per_instance},
                       {"layout", wasmwarp::memory_layout_name(r.memory_layout)},
                       {"pool_reruns", r.pool_reruns},
                       {"replans", r.replans},
                       {"stack_reruns", r.stack_reruns},
                       {"grow_reruns", r.grow_reruns},
                       {"stack_pool_bytes", r.stack_pool_bytes},
                       {"wave_size", r.wave_size},
                       {"waves", r.waves}};
  const RunReport::Compile& cr = r.compile;
  if (cr.attempted)
    j["compile"] = {{"used", cr.used},
                    {"cache_hit", cr.cache_hit},
                    {"codegen_ms", cr.generate_ms},
                    {"compile_ms", cr.compile_ms},
                    {"load_ms", cr.load_ms},
                    {"fallback", cr.fallback},
                    {"left_running", cr.left_running}};
  if (cr.tier_up.on)
    j["tier_up"] = {{"hot_functions", cr.tier_up.hot},   {"compiled_functions", cr.tier_up.compiled},
                    {"units", cr.tier_up.units},         {"cache_hits", cr.tier_up.cache_hits},
                    {"failed_units", cr.tier_up.failed}, {"compile_s", cr.tier_up.compile_s},
                    {"error", cr.tier_up.error}};
  // Under mpirun: the counts above are the whole batch's, the rest rank 0's.
  if (!mpi_json.empty()) j["mpi"] = ordered_json::parse(mpi_json);
  // The process's peak resident memory so far: what the batch cost the host.
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) j["host_peak_rss_bytes"] = uint64_t(ru.ru_maxrss) * 1024;
  AtomicFile f;
  WW_TRY(f.open(path));
  WW_TRY(f.write(j.dump(2) + "\n"));
  return f.commit();
}

}  // namespace ww::cli
