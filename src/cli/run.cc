// `wasmwarp run`: turns the command line's RunSpec into a batch::BatchSpec
// (arguments, memory inputs and outputs, the intrinsics' files, backend,
// tier and cache), runs it through the batch engine (src/batch), and
// writes what came back: results, --output and --mem-out files, the
// summary.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>

#include "batch/batch.h"
#include "batch/host_imports.h"
#include "cli/batch.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/io_formats.h"
#include "cli/module_source.h"
#include "cli/run_outputs.h"
#include "cli/run_report.h"
#include "cli/run_support.h"
#include "cli/run_wasi.h"
#include "wasi/wasi.h"
#include "cli/value_format.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

Result<batch::Address> parse_addr(const std::string& text, const Module& m, const char* opt) {
  batch::Address a;
  if (!text.empty() && text[0] >= '0' && text[0] <= '9') {
    WW_ASSIGN_OR_RETURN(a.addr, parse_u64(text));
    return a;
  }
  for (const Export& e : m.exports) {
    if (e.name != text) continue;
    if (e.kind == ExternKind::Func) {
      const FuncType& t = m.func_type(e.index);
      if (!t.params.empty() || t.results.size() != 1 || t.results[0] != ValType::I32)
        return err(std::string(opt) + " address export '" + text + "' has type " +
                   functype_to_string(t) + ", need () -> (i32)");
    } else if (e.kind == ExternKind::Global) {
      if (m.global_type(e.index).type != ValType::I32)
        return err(std::string(opt) + " address export '" + text + "' is not an i32 global");
      a.is_global = true;
    } else {
      return err(std::string(opt) + " address export '" + text + "' is a " +
                 extern_kind_name(e.kind) + ", need a function or global");
    }
    a.export_name = text;
    return a;
  }
  return err(std::string(opt) + " address '" + text +
             "' is neither a number nor an export of the module");
}

Result<batch::ArgSource> parse_arg(const std::string& text, ValType type, uint64_t n, size_t pos) {
  batch::ArgSource a;
  std::string where = "argument " + std::to_string(pos + 1) + " (" + valtype_name(type) + ")";
  if (text == "@index") {
    if (!is_num(type)) return err(where + ": @index cannot feed a " + valtype_name(type));
    a.kind = batch::ArgSource::Index;
    return a;
  }
  if (text.starts_with("@col:")) {
    std::string rest = text.substr(5);
    uint32_t col = 0;
    size_t colon = rest.find_last_of(':');
    if (colon != std::string::npos && colon + 1 < rest.size() &&
        rest.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
      auto k = parse_u64(rest.substr(colon + 1));
      if (!k.ok() || *k > 0xFFFFFFFFu) return err(where + ": bad column in '" + text + "'");
      col = uint32_t(*k);
      rest.resize(colon);
    }
    if (rest.empty()) return err(where + ": missing file name in '" + text + "'");
    auto c = load_column(rest, col, type, n);
    if (!c.ok()) return err(where + ": " + c.error().message);
    a.kind = batch::ArgSource::Column;
    a.column = std::move(*c);
    return a;
  }
  if (text.starts_with("@"))
    return err(where + ": unknown per-instance argument '" + text +
               "' (use @index or @col:FILE[:K])");
  auto v = parse_value(text, type);
  if (!v.ok()) return err(where + ": " + v.error().message);
  a.value = *v;
  return a;
}

// "A,B,C" -> {"A", "B", "C"} (one empty word for "").
std::vector<std::string> comma_words(const std::string& s) {
  std::vector<std::string> words;
  for (size_t start = 0;;) {
    const size_t comma = s.find(',', start);
    words.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return words;
    start = comma + 1;
  }
}

// "NAME" or "NAME:ARG,ARG...": an export and constant arguments of its
// parameter types.
Result<batch::BatchSpec::InitCall> parse_init_call(const std::string& text, const Module& m) {
  batch::BatchSpec::InitCall c;
  size_t colon = text.find(':');
  c.export_name = text.substr(0, colon);
  WW_ASSIGN_OR_RETURN(FuncType t, batch::export_function_type(m, c.export_name));
  std::vector<std::string> words;
  if (colon != std::string::npos) words = comma_words(text.substr(colon + 1));
  if (words.size() != t.params.size())
    return err("--init " + text + ": export '" + c.export_name + "' takes " + std::to_string(t.params.size()) +
               " argument(s) (" + valtype_list(t.params) + "); give them as NAME:A,B");
  for (size_t k = 0; k < words.size(); ++k) {
    auto v = parse_value(words[k], t.params[k]);
    if (!v.ok()) return err("--init " + text + ": argument " + std::to_string(k + 1) + ": " + v.error().message);
    c.args.push_back(*v);
  }
  return c;
}

// "NAME", "NAME:K" or "NAME:K:ARG,ARG...": an export called K times with
// constant or @index arguments.
Result<batch::BatchSpec::ThenCall> parse_then_call(const std::string& text, const Module& m, uint64_t n) {
  batch::BatchSpec::ThenCall c;
  const size_t colon = text.find(':');
  c.export_name = text.substr(0, colon);
  auto fail = [&](const std::string& why) { return err("--then " + text + ": " + why); };
  auto t = batch::export_function_type(m, c.export_name);
  if (!t.ok()) return fail(t.error().message);
  std::string args;
  if (colon != std::string::npos) {
    const size_t second = text.find(':', colon + 1);
    auto k = parse_u64(text.substr(colon + 1, second == std::string::npos ? std::string::npos : second - colon - 1));
    if (!k.ok() || *k == 0) return fail("the count after ':' must be a positive number (NAME[:K[:ARGS]])");
    c.repeat = *k;
    if (second != std::string::npos) args = text.substr(second + 1);
  }
  const std::vector<std::string> words = args.empty() ? std::vector<std::string>() : comma_words(args);
  if (words.size() != t->params.size())
    return fail("export '" + c.export_name + "' takes " + std::to_string(t->params.size()) + " argument(s) (" +
                valtype_list(t->params) + "); give them as NAME:K:A,B");
  for (size_t k = 0; k < words.size(); ++k) {
    if (words[k].starts_with("@col:")) return fail("arguments of chained calls are constants or @index");
    auto a = parse_arg(words[k], t->params[k], n, k);
    if (!a.ok()) return fail(a.error().message);
    c.args.push_back(std::move(*a));
  }
  return c;
}

// Output files are opened before any work: an unwritable path fails first.
struct Outputs {
  OutFormat fmt = OutFormat::None;
  bool rows_to_stdout = false;  // --output -
  AtomicFile out, trap_out;
  std::string trap_path;
  std::vector<std::unique_ptr<AtomicFile>> mem_out;
};

Status open_outputs(const RunSpec& spec, Outputs& o) {
  if (spec.output.empty()) return Status::Ok();
  if (spec.output == "-") {
    o.rows_to_stdout = true;
    return Status::Ok();
  }
  std::string ext = file_extension(spec.output);
  if (ext == "csv") o.fmt = OutFormat::Csv;
  else if (ext == "json") o.fmt = OutFormat::Json;
  else if (ext == "npy") o.fmt = OutFormat::Npy;
  else return err("unknown output format for " + spec.output + " (use .csv, .json or .npy)");
  WW_TRY(o.out.open(spec.output));
  if (o.fmt == OutFormat::Npy && spec.allow_traps) {
    o.trap_path = spec.output.substr(0, spec.output.size() - 4) + ".traps.npy";
    WW_TRY(o.trap_out.open(o.trap_path));
  }
  return Status::Ok();
}

Status add_mem_io(const RunSpec& spec, const Module& m, batch::BatchSpec& b, Outputs& o) {
  for (const std::string& s : spec.mem_in) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return err("--mem-in '" + s + "': expected ADDR=FILE");
    batch::MemInput mi;
    WW_ASSIGN_OR_RETURN(mi.addr, parse_addr(s.substr(0, eq), m, "--mem-in"));
    std::string path = s.substr(eq + 1);
    WW_ASSIGN_OR_RETURN(mi.data, read_all(path));
    uint64_t size = mi.data.size();
    if (size == 0) return err(path + " is empty");
    if (spec.mem_in_size) {
      mi.record = *spec.mem_in_size;
      if (mi.record == 0) return err("--mem-in-size must be at least 1");
      if (size / mi.record < b.instances)
        return err(path + " holds " + std::to_string(size / mi.record) + " records of " +
                   std::to_string(mi.record) + " bytes, but " + std::to_string(b.instances) +
                   " instances need one each");
    } else {
      if (size % b.instances != 0)
        return err(path + " is " + std::to_string(size) + " bytes, not a multiple of " +
                   std::to_string(b.instances) + " instances (give --mem-in-size)");
      mi.record = size / b.instances;
    }
    b.mem_in.push_back(std::move(mi));
  }
  for (const std::string& s : spec.mem_out) {
    size_t eq = s.find('=');
    size_t colon = s.substr(0, eq).find_last_of(':');
    if (eq == std::string::npos || colon == std::string::npos || colon == 0 || eq + 1 == s.size())
      return err("--mem-out '" + s + "': expected ADDR:LEN=FILE");
    batch::MemOutput mo;
    WW_ASSIGN_OR_RETURN(mo.addr, parse_addr(s.substr(0, colon), m, "--mem-out"));
    auto len = parse_u64(s.substr(colon + 1, eq - colon - 1));
    if (!len.ok() || *len == 0) return err("--mem-out '" + s + "': bad length");
    mo.length = *len;
    if (mo.length > (uint64_t(1) << 32) || b.instances > (uint64_t(1) << 40) / mo.length)
      return err("--mem-out '" + s + "': " + std::to_string(b.instances) + " x " +
                 std::to_string(mo.length) + " bytes is too much output");
    o.mem_out.push_back(std::make_unique<AtomicFile>());
    WW_TRY(o.mem_out.back()->open(s.substr(eq + 1)));
    b.mem_out.push_back(std::move(mo));
  }
  return Status::Ok();
}

Result<int> run_impl(const RunSpec& spec) {
  if (spec.instances == 0) return err("--instances must be at least 1");
  if (spec.instances > (uint64_t(1) << 36)) return err("--instances must be at most 2^36");
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  // The GPU's start-up overlaps reading the module and the inputs. Every
  // way out of here waits for it: a process that exits while the start-up
  // thread is still loading CUDA libraries crashes.
  if (spec.backend != "cpu") batch::warm_up_gpu(spec.tier != "interp");
  struct JoinWarmUp {
    ~JoinWarmUp() { batch::wait_for_warm_up(); }
  } join_warm_up;
  Outputs outputs;
  WW_TRY(open_outputs(spec, outputs));
  batch::PhaseTimes phases;

  CompileOptions copts;
  copts.deny_recursion = spec.deny_recursion;
  auto t_phase = Clock::now();
  auto bytes = read_module_bytes(spec.module_path);
  if (!bytes.ok()) return err(bytes.error().message);
  phases.read_inputs = ms_since(t_phase);
  t_phase = Clock::now();
  auto compiled = compile_module(std::move(*bytes), copts);
  phases.translate = ms_since(t_phase);
  if (!compiled.ok()) {
    std::string m = compiled.error().to_string();
    if (m.find(spec.module_path) == std::string::npos) m = spec.module_path + ": " + m;
    return err(m);
  }
  // A WASI command: ARGS are its argv, not an export's values; one
  // instance runs directly on the process's stdio.
  const bool is_wasi = wasi::imports_wasi((*compiled)->module) && spec.invoke.empty();
  if (is_wasi && !spec.batch) return run_wasi_command(spec, *compiled);
  batch::BatchSpec b;
  b.module = *compiled;
  const Module& m = b.module->module;
  if (is_wasi) {
    WW_ASSIGN_OR_RETURN(b.wasi, wasi_batch_of(spec));
  } else if (!spec.dirs.empty() || !spec.dirs_rw.empty()) {
    // The directories gpu.read_file and gpu.write_file reach.
    auto files = std::make_shared<batch::WasiBatch>();
    WW_ASSIGN_OR_RETURN(files->config, wasi_config_of(spec));
    b.files = std::move(files);
  }
  b.export_name = spec.invoke.empty() ? "_start" : spec.invoke;
  b.instances = spec.instances;
  for (const std::string& text : spec.init) {
    WW_ASSIGN_OR_RETURN(batch::BatchSpec::InitCall call, parse_init_call(text, m));
    b.init_calls.push_back(std::move(call));
  }
  bool has_export = false;
  for (const Export& e : m.exports) has_export |= e.name == b.export_name;
  if (!has_export && spec.invoke.empty()) return err("no --invoke given and the module exports no _start");
  WW_ASSIGN_OR_RETURN(FuncType type, batch::export_function_type(m, b.export_name));
  const auto& params = type.params;
  for (const std::string& text : spec.then) {
    WW_ASSIGN_OR_RETURN(batch::BatchSpec::ThenCall call, parse_then_call(text, m, b.instances));
    // The batch returns what the chain's last call returns.
    WW_ASSIGN_OR_RETURN(FuncType last, batch::export_function_type(m, call.export_name));
    type.results = last.results;
    b.then.push_back(std::move(call));
  }
  if (is_wasi && !b.then.empty()) return err("--then: chained calls are for exports, not WASI commands");
  if (!is_wasi && spec.args.size() != params.size())
    return err("export '" + b.export_name + "' takes " + std::to_string(params.size()) + " argument(s) (" +
               valtype_list(params) + "), got " + std::to_string(spec.args.size()));
  const std::string& returner = b.then.empty() ? b.export_name : b.then.back().export_name;
  for (ValType t : type.results)
    if (t == ValType::V128) return err("export '" + returner + "' returns v128, which the CLI cannot print");
  if (outputs.fmt == OutFormat::Npy && !is_wasi) {
    if (type.results.empty())
      return err("--output .npy needs an export with results; '" + returner + "' has none");
    for (ValType t : type.results)
      if (!npy_descr(t))
        return err(std::string("--output .npy cannot hold ") + valtype_name(t) + " results (use .csv or .json)");
  }
  WW_TRY(batch::check_imports(m, is_wasi));
  t_phase = Clock::now();
  for (size_t k = 0; k < params.size() && !is_wasi; ++k) {
    WW_ASSIGN_OR_RETURN(batch::ArgSource a, parse_arg(spec.args[k], params[k], b.instances, k));
    b.args.push_back(std::move(a));
  }
  if ((!spec.mem_in.empty() || !spec.mem_out.empty()) && m.num_memories() == 0)
    return err("--mem-in/--mem-out need a module with a memory");
  WW_TRY(add_mem_io(spec, m, b, outputs));
  phases.read_inputs += ms_since(t_phase);

  // Per-instance results live in memory until the end; refuse up front what
  // the machine cannot hold rather than dying midway.
  uint64_t per_instance = 1 + 8 * 4;
  for (const batch::MemOutput& mo : b.mem_out) per_instance += mo.length;
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && b.instances > uint64_t(pages) * uint64_t(page_size) / per_instance)
    return err(std::to_string(b.instances) + " instances need " +
               std::to_string(b.instances / (1u << 20) * per_instance) +
               " MiB for their results, more than this machine's memory");

  gpu::GpuBatch gbatch;
  WW_TRY(setup_intrinsics(spec, b.instances, gbatch));
  b.intrinsics = &gbatch;
  b.fuel = spec.fuel;
  b.timeout_s = spec.timeout;
  b.threads = spec.threads;
  WW_ASSIGN_OR_RETURN(b.backend, batch::parse_backend(spec.backend));
  WW_ASSIGN_OR_RETURN(b.tier, batch::parse_tier(spec.tier));
  if (auto l = gpu::parse_layout(spec.gpu_layout)) b.gpu.layout = *l;
  else return err("--gpu-layout must be auto, interleaved, contiguous or sparse, not '" + spec.gpu_layout + "'");
  if (spec.gpu_stack_slots) b.gpu.stack_slots_limit = spec.gpu_stack_slots;
  if (spec.gpu_call_depth) b.gpu.call_depth_limit = spec.gpu_call_depth;
  b.gpu.launch_per_call = spec.gpu_launch_per_call;
  b.gpu.memory_pages = spec.gpu_memory_pages;
  b.gpu.max_wave = spec.gpu_max_wave;
  b.cache.enabled = !spec.no_cache;
  b.cache.dir = spec.cache_dir;

  InterruptScope interrupt;
  b.cancel = interrupt.cancel();
  ProgressLine progress(spec.batch && !spec.quiet);
  b.progress = [&](uint64_t done, uint64_t total, double s) { progress.update(done, total, s); };
  // The memory plan is shown before anything runs: a batch that needs
  // waves says so up front.
  if (spec.batch && !spec.quiet) b.note = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };

  // --output rows and --mem-out records are written while the batch runs,
  // as they become final.
  std::unique_ptr<OutputStream> stream;
  if (spec.batch && (outputs.fmt != OutFormat::None || !outputs.mem_out.empty())) {
    std::vector<AtomicFile*> mem_files;
    std::vector<uint64_t> mem_len;
    for (size_t k = 0; k < outputs.mem_out.size(); ++k) {
      mem_files.push_back(outputs.mem_out[k].get());
      mem_len.push_back(b.mem_out[k].length);
    }
    stream = std::make_unique<OutputStream>(m, outputs.fmt, outputs.fmt != OutFormat::None ? &outputs.out : nullptr,
                                            std::move(mem_files), std::move(mem_len));
    b.on_ready = [s = stream.get()](const batch::BatchResult& r, uint64_t upto) { s->ready(r, upto); };
  }
  WW_ASSIGN_OR_RETURN(batch::BatchResult r, batch::run(b));
  progress.finish();
  t_phase = Clock::now();
  WW_TRY(write_intrinsics_outputs(spec, gbatch));

  const RunCounts counts = count_outcomes(r);
  const auto& rt = r.type.results;
  if (!spec.batch) {
    // A single call: a compiled tier that could not be had is worth a line.
    if (!spec.quiet && !r.compile.fallback.empty() && b.tier == batch::Tier::Compiled)
      std::fprintf(stderr, "wasmwarp: note: %s\n", r.compile.fallback.c_str());
    if (r.traps[0]) {
      std::fprintf(stderr, "wasm trap: %s\n", trap_message(TrapCode(r.traps[0])));
    } else {
      for (size_t k = 0; k < rt.size(); ++k) std::printf("%s\n", format_value(Value{rt[k], r.results[k]}).c_str());
    }
  } else if (outputs.rows_to_stdout) {
    std::string line;
    for (uint64_t i = 0; i < b.instances; ++i) {
      line = std::to_string(i);
      if (r.traps[i]) {
        line += "\ttrap: ";
        line += trap_message(TrapCode(r.traps[i]));
      } else {
        for (size_t k = 0; k < rt.size(); ++k)
          line += "\t" + format_value(Value{rt[k], r.results[i * rt.size() + k]});
      }
      line += "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
  }
  // WASI programs' own output, each instance's whole, in instance order.
  for (const std::string& block : r.stdout_blocks) std::fwrite(block.data(), 1, block.size(), stdout);
  for (const std::string& block : r.stderr_blocks) std::fwrite(block.data(), 1, block.size(), stderr);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return err("cannot write the results to stdout");

  if (stream) WW_TRY(stream->finish(r, outputs.trap_path.empty() ? nullptr : &outputs.trap_out));
  for (size_t k = 0; k < outputs.mem_out.size(); ++k) {
    if (!stream) WW_TRY(outputs.mem_out[k]->write(r.mem_out[k].data(), r.mem_out[k].size()));
    WW_TRY(outputs.mem_out[k]->commit());
  }
  std::string output_error;
  const uint64_t trapped = counts.trapped + counts.unfinished;
  if (outputs.fmt != OutFormat::None) {
    if (outputs.fmt == OutFormat::Npy && trapped && !spec.allow_traps) {
      outputs.out.discard();
      output_error = std::to_string(trapped) + " instance(s) " +
                     (counts.unfinished ? "trapped or did not finish; " : "trapped; ") + spec.output +
                     " not written: .npy cannot record traps (use --allow-traps for zero rows "
                     "plus a trap-code file, or .csv/.json)";
    } else {
      if (!stream)
        WW_TRY(write_results(r, m, outputs.fmt, outputs.out, outputs.trap_path.empty() ? nullptr : &outputs.trap_out));
      WW_TRY(outputs.out.commit());
      if (!outputs.trap_path.empty()) WW_TRY(outputs.trap_out.commit());
    }
  }
  phases.write_outputs = ms_since(t_phase);
  r.phases.read_inputs = phases.read_inputs;
  r.phases.translate = phases.translate;
  r.phases.write_outputs = phases.write_outputs;
  if (!spec.stats.empty()) WW_TRY(write_stats(spec.stats, counts, r));

  if (spec.batch) {
    // The summary is optional; what went wrong is not.
    std::string s = spec.quiet ? "" : summary_text(counts, r, gbatch.ignored_pixels.load());
    s += problem_lines(counts, r);
    std::fputs(s.c_str(), stderr);
  }
  if (!output_error.empty()) print_error(output_error);
  if (r.output_capped)
    std::fprintf(stderr, "wasmwarp: %llu instance(s) wrote more than --output-cap allows; their output was cut there (first: instance %llu)\n",
                 (unsigned long long)r.output_capped, (unsigned long long)r.first_output_capped);
  if (int sig = interrupt.signal_number()) return 128 + sig;
  uint64_t nonzero_exits = 0;
  if (is_wasi)
    for (uint64_t i = 0; i < b.instances; ++i) nonzero_exits += r.finished[i] && !r.traps[i] && r.results[i] != 0;
  if (nonzero_exits && !spec.quiet)
    std::fprintf(stderr, "wasmwarp: %llu instance(s) exited with a non-zero code\n", (unsigned long long)nonzero_exits);
  return trapped || nonzero_exits || r.output_capped ? kExitTrap : kExitOk;
}

}  // namespace

int run_modules(const RunSpec& spec) {
  // Sizes come from the user (-n, --mem-out LEN); an allocation that cannot
  // be met is an input error, not a crash.
  Result<int> r = make_error(kNoOffset, "");
  try {
    r = run_impl(spec);
  } catch (const std::bad_alloc&) {
    r = make_error(kNoOffset, "out of memory (for " + std::to_string(spec.instances) + " instances)");
  } catch (const std::length_error&) {
    r = make_error(kNoOffset, "out of memory (for " + std::to_string(spec.instances) + " instances)");
  }
  if (!r.ok()) {
    print_error(r.error().to_string());
    return kExitUsage;
  }
  return *r;
}

}  // namespace ww::cli
