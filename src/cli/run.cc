// `wasmwarp run`: turns the command line's RunSpec into a call of the
// public API (include/wasmwarp/wasmwarp.h): the engine's options, the
// arguments, memory inputs and outputs, the intrinsics' files; runs it;
// and writes what came back: results, --output and --mem-out files, the
// summary. Nothing here runs WebAssembly itself.
#include <chrono>
#include <cstring>

#include "cli/batch.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/io_formats.h"
#include "cli/module_source.h"
#include "cli/mpi_world.h"
#include "cli/run_mpi.h"
#include "cli/run_outputs.h"
#include "cli/run_report.h"
#include "cli/run_support.h"
#include "cli/run_wasi.h"
#include "cli/value_format.h"
#include "cli/values.h"
#include "common/file_read.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

// The export's type, or the API's "unknown export 'f' (exported functions: a, b)".
Result<wasmwarp::FunctionType> function_type(const wasmwarp::Module& m, const std::string& name) {
  auto t = m.function_type(name);
  if (!t) return err(t.error().message);
  return *t;
}

// An --mem-in/--mem-out address: a number, or the name of an export the
// API reads per instance (it checks the export's type).
template <class Io>
Status set_address(Io& io, const std::string& text) {
  if (!text.empty() && text[0] >= '0' && text[0] <= '9') {
    WW_ASSIGN_OR_RETURN(io.address, parse_u64(text));
  } else {
    io.address_export = text;
  }
  return Status::Ok();
}

wasmwarp::Arg constant_arg(const Value& v) {
  return v.type == ValType::V128 ? wasmwarp::Arg::v128(v.bits, v.hi) : wasmwarp::Arg::scalar_bits(v.type, v.bits);
}

Result<wasmwarp::Arg> parse_arg(const std::string& text, ValType type, uint64_t n, size_t pos) {
  std::string where = "argument " + std::to_string(pos + 1) + " (" + valtype_name(type) + ")";
  if (text == "@index") {
    if (!is_num(type)) return err(where + ": @index cannot feed a " + valtype_name(type));
    return wasmwarp::Arg::index();
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
    keep_share(*c, n);
    return wasmwarp::Arg::column_bits(type, std::move(*c));
  }
  if (text.starts_with("@"))
    return err(where + ": unknown per-instance argument '" + text + "' (use @index or @col:FILE[:K])");
  auto v = parse_value(text, type);
  if (!v.ok()) return err(where + ": " + v.error().message);
  return constant_arg(*v);
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
Result<wasmwarp::Call> parse_init_call(const std::string& text, const wasmwarp::Module& m) {
  wasmwarp::Call c;
  size_t colon = text.find(':');
  c.export_name = text.substr(0, colon);
  auto t = function_type(m, c.export_name);
  if (!t.ok()) return t.error();
  std::vector<std::string> words;
  if (colon != std::string::npos) words = comma_words(text.substr(colon + 1));
  if (words.size() != t->params.size())
    return err("--init " + text + ": export '" + c.export_name + "' takes " + std::to_string(t->params.size()) +
               " argument(s) (" + valtype_list(t->params) + "); give them as NAME:A,B");
  for (size_t k = 0; k < words.size(); ++k) {
    auto v = parse_value(words[k], t->params[k]);
    if (!v.ok()) return err("--init " + text + ": argument " + std::to_string(k + 1) + ": " + v.error().message);
    c.args.push_back(constant_arg(*v));
  }
  return c;
}

// "NAME", "NAME:K" or "NAME:K:ARG,ARG...": an export called K times with
// constant or @index arguments.
Result<wasmwarp::Call> parse_then_call(const std::string& text, const wasmwarp::Module& m, uint64_t n) {
  wasmwarp::Call c;
  const size_t colon = text.find(':');
  c.export_name = text.substr(0, colon);
  auto fail = [&](const std::string& why) { return err("--then " + text + ": " + why); };
  auto t = function_type(m, c.export_name);
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

// --mem-in files (kept in `inputs` for the call) and --mem-out files
// (opened now, so an unwritable path fails before any work).
Status add_mem_io(const RunSpec& spec, wasmwarp::CallOptions& call, std::vector<Column<uint8_t>>& inputs, Outputs& o) {
  const uint64_t n = spec.instances;
  inputs.reserve(spec.mem_in.size());
  for (const std::string& s : spec.mem_in) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return err("--mem-in '" + s + "': expected ADDR=FILE");
    wasmwarp::MemoryIn mi;
    WW_TRY(set_address(mi, s.substr(0, eq)));
    std::string path = s.substr(eq + 1);
    if (spec.mem_in_size && *spec.mem_in_size == 0) return err("--mem-in-size must be at least 1");
    // With a record size only the batch's records are read; without one,
    // the whole file gives it.
    const uint64_t wanted =
        spec.mem_in_size && n <= UINT64_MAX / *spec.mem_in_size ? n * *spec.mem_in_size : UINT64_MAX;
    uint64_t size = 0;
    WW_ASSIGN_OR_RETURN(Column<uint8_t> data, read_file_prefix(path, wanted, &size));
    if (size == 0) return err(path + " is empty");
    if (spec.mem_in_size) {
      mi.record_size = *spec.mem_in_size;
      if (size / mi.record_size < n)
        return err(path + " holds " + std::to_string(size / mi.record_size) + " records of " +
                   std::to_string(mi.record_size) + " bytes, but " + std::to_string(n) + " instances need one each");
    } else {
      if (size % n != 0)
        return err(path + " is " + std::to_string(size) + " bytes, not a multiple of " + std::to_string(n) +
                   " instances (give --mem-in-size)");
      mi.record_size = size / n;
    }
    inputs.push_back(std::move(data));
    mi.bytes = std::span<const uint8_t>(inputs.back().data(), inputs.back().size());
    const MpiShare share = mpi_share(n);  // this rank's records
    mi.bytes = mi.bytes.subspan(share.first * mi.record_size, share.count * mi.record_size);
    call.memory_in.push_back(std::move(mi));
  }
  for (const std::string& s : spec.mem_out) {
    size_t eq = s.find('=');
    size_t colon = s.substr(0, eq).find_last_of(':');
    if (eq == std::string::npos || colon == std::string::npos || colon == 0 || eq + 1 == s.size())
      return err("--mem-out '" + s + "': expected ADDR:LEN=FILE");
    wasmwarp::MemoryOut mo;
    WW_TRY(set_address(mo, s.substr(0, colon)));
    auto len = parse_u64(s.substr(colon + 1, eq - colon - 1));
    if (!len.ok() || *len == 0) return err("--mem-out '" + s + "': bad length");
    mo.length = *len;
    if (mo.length > (uint64_t(1) << 32) || n > (uint64_t(1) << 40) / mo.length)
      return err("--mem-out '" + s + "': " + std::to_string(n) + " x " + std::to_string(mo.length) +
                 " bytes is too much output");
    o.mem_out.push_back(std::make_unique<AtomicFile>());
    WW_TRY(o.mem_out.back()->open(s.substr(eq + 1)));
    call.memory_out.push_back(std::move(mo));
  }
  return Status::Ok();
}

Result<wasmwarp::EngineOptions> engine_options(const RunSpec& spec) {
  wasmwarp::EngineOptions e;
  WW_ASSIGN_OR_RETURN(e.backend, parse_backend(spec.backend));
  WW_ASSIGN_OR_RETURN(e.tier, parse_tier(spec.tier));
  e.threads = spec.threads;
  e.cache = !spec.no_cache;
  e.cache_dir = spec.cache_dir;
  e.unknown_imports = spec.trap_unknown_imports      ? wasmwarp::UnknownImports::Trap
                      : spec.default_unknown_imports ? wasmwarp::UnknownImports::Default
                                                     : wasmwarp::UnknownImports::Error;
  // Under mpirun a rank finalizes before it ends, so it waits for its
  // compile anyway: in the batch, where the summary says so (and main()
  // never ends a rank early).
  e.compile_wait_s = mpi_world().initialized ? -1 : spec.compile_wait;
  const std::optional<wasmwarp::MemoryLayout> layout = wasmwarp::parse_memory_layout(spec.gpu_layout);
  if (!layout)
    return err("--gpu-layout must be auto, interleaved, contiguous or sparse, not '" + spec.gpu_layout + "'");
  e.gpu.layout = *layout;
  e.gpu.stack_slots_limit = spec.gpu_stack_slots;
  e.gpu.call_depth_limit = spec.gpu_call_depth;
  e.gpu.memory_pages = spec.gpu_memory_pages;
  e.gpu.max_wave = spec.gpu_max_wave;
  WW_TRY(parse_gpus(spec.gpus, e.gpu));
  e.gpu.tuning.wave_loops_per_gpu = spec.gpu_workers;
  return e;
}

// A WASI command without -n: one instance on the process's stdio, exiting
// with the program's code like `wasmtime run`. With --backend gpu, a batch
// of one on the GPU: its stdout and stderr, collected there, are written
// to the process's when it ends, and its stdin is empty (or --stdin's
// file): the device reads no stream.
Result<int> run_wasi_process(const RunSpec& spec, const wasmwarp::Engine& engine, const wasmwarp::Module& m) {
  if (!spec.mem_in.empty() || !spec.mem_out.empty() || !spec.init.empty())
    return err("--mem-in, --mem-out and --init are for exports called with values, not WASI programs");
  const bool on_gpu = spec.backend == "gpu";
  WW_ASSIGN_OR_RETURN(wasmwarp::WasiOptions w, wasi_options_of(spec));
  w.process_stdio = !on_gpu;
  InterruptScope interrupt;
  wasmwarp::CallOptions call;
  call.fuel = spec.fuel;
  call.timeout_s = spec.timeout;
  call.cancel = interrupt.cancel();
  auto r = engine.run_command(m, 1, w, call);
  // Interrupted, even where that ended the compile with an error.
  if (int sig = interrupt.signal_number()) return 128 + sig;
  if (!r) return err(r.error().message);
  if (on_gpu) {
    const std::string_view out = r->stdout_of(0), errs = r->stderr_of(0);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    std::fwrite(errs.data(), 1, errs.size(), stderr);
    std::fflush(stderr);
  }
  if (!r->trapped(0)) return r->exit_code(0) & 0xff;
  print_error(spec.module_path + ": " + (r->trap_codes()[0] == wasmwarp::kTrapTimeout ? "" : "trap: ") +
              r->trap_message(0));
  return kExitTrap;
}

// What the batch will return: the last call's results.
Result<std::vector<ValType>> checked_result_types(const wasmwarp::Module& m, const std::string& returner,
                                                  const Outputs& outputs, bool is_wasi) {
  if (is_wasi) return std::vector<ValType>{ValType::I32};
  WW_ASSIGN_OR_RETURN(wasmwarp::FunctionType t, function_type(m, returner));
  if (outputs.fmt == OutFormat::Npy) {
    if (t.results.empty()) return err("--output .npy needs an export with results; '" + returner + "' has none");
    for (ValType v : t.results)
      if (!npy_descr(v))
        return err(std::string("--output .npy cannot hold ") + valtype_name(v) + " results (use .csv or .json)");
  }
  return t.results;
}

// The call the command line describes: the export with its arguments (a
// chain with --then), or a WASI command's _start.
struct Invocation {
  bool is_wasi = false;
  wasmwarp::WasiOptions wasi;
  std::vector<wasmwarp::Call> calls;  // the export, then the --then calls
  std::vector<ValType> result_types;
};

Result<Invocation> invocation_of(const RunSpec& spec, const wasmwarp::Module& m, const Outputs& outputs,
                                 wasmwarp::CallOptions& call) {
  Invocation inv;
  inv.is_wasi = m.is_wasi_command() && spec.invoke.empty();
  const std::string export_name = spec.invoke.empty() ? "_start" : spec.invoke;
  for (const std::string& text : spec.init) {
    WW_ASSIGN_OR_RETURN(wasmwarp::Call c, parse_init_call(text, m));
    call.init.push_back(std::move(c));
  }
  if (inv.is_wasi) {
    if (!spec.then.empty()) return err("--then: chained calls are for exports, not WASI commands");
    for (const std::string& a : spec.args)
      if (a.rfind("@col:", 0) == 0) return err("'" + a + "': a WASI batch's ARGS take @index, not columns (yet)");
    WW_ASSIGN_OR_RETURN(inv.wasi, wasi_options_of(spec));
    WW_ASSIGN_OR_RETURN(inv.result_types, checked_result_types(m, export_name, outputs, true));
    return inv;
  }
  bool has_export = false;
  for (const wasmwarp::Export& e : m.exports()) has_export |= e.name == export_name;
  if (!has_export && spec.invoke.empty()) return err("no --invoke given and the module exports no _start");
  WW_ASSIGN_OR_RETURN(wasmwarp::FunctionType type, function_type(m, export_name));
  inv.calls.push_back({export_name, {}, 1});
  for (const std::string& text : spec.then) {
    WW_ASSIGN_OR_RETURN(wasmwarp::Call c, parse_then_call(text, m, spec.instances));
    inv.calls.push_back(std::move(c));
  }
  if (spec.args.size() != type.params.size())
    return err("export '" + export_name + "' takes " + std::to_string(type.params.size()) + " argument(s) (" +
               valtype_list(type.params) + "), got " + std::to_string(spec.args.size()));
  WW_ASSIGN_OR_RETURN(inv.result_types, checked_result_types(m, inv.calls.back().export_name, outputs, false));
  for (size_t k = 0; k < type.params.size(); ++k) {
    WW_ASSIGN_OR_RETURN(wasmwarp::Arg a, parse_arg(spec.args[k], type.params[k], spec.instances, k));
    inv.calls[0].args.push_back(std::move(a));
  }
  // The directories gpu.read_file and gpu.write_file reach.
  WW_ASSIGN_OR_RETURN(call.dirs, dirs_of(spec));
  return inv;
}

// Results on stdout: one call's values, or a row per instance (--output -),
// row i being instance index_base + i. Written as they are made; under
// mpirun collected and written after the rank before's.
void print_results(const RunSpec& spec, const Outputs& outputs, const wasmwarp::CallResult& r,
                   const std::vector<ValType>& rt, bool is_wasi, uint64_t index_base) {
  const bool collect = mpi_world().active();
  std::string out, errs;
  auto put = [&](std::string& buffer, FILE* f, std::string_view text) {
    if (collect) buffer += text;
    else std::fwrite(text.data(), 1, text.size(), f);
  };
  if (!spec.batch) {
    if (r.trapped(0)) {
      put(errs, stderr, "wasm trap: " + r.trap_message(0) + "\n");
    } else {
      for (size_t k = 0; k < rt.size(); ++k)
        put(out, stdout, format_value(Value{rt[k], r.bits(0, k), r.bits_hi(0, k)}) + "\n");
    }
  } else if (outputs.rows_to_stdout) {
    std::string line;
    for (uint64_t i = 0; i < r.instances(); ++i) {
      line = std::to_string(index_base + i);
      if (r.trapped(i)) {
        line += "\ttrap: " + r.trap_message(i);
      } else {
        for (size_t k = 0; k < rt.size(); ++k) line += "\t" + format_value(Value{rt[k], r.bits(i, k), r.bits_hi(i, k)});
      }
      line += "\n";
      put(out, stdout, line);
    }
  }
  // WASI programs' own output, each instance's whole, in instance order.
  if (is_wasi) {
    for (uint64_t i = 0; i < r.instances(); ++i) put(out, stdout, r.stdout_of(i));
    for (uint64_t i = 0; i < r.instances(); ++i) put(errs, stderr, r.stderr_of(i));
  }
  if (!collect) return;
  mpi_print_ordered(out, stdout);
  mpi_print_ordered(errs, stderr);
}

// .npy without --allow-traps cannot hold traps: true, with the reason in
// `output_error`, when the batch had any.
bool npy_refused(const RunSpec& spec, const Outputs& outputs, const RunCounts& counts, std::string& output_error) {
  const uint64_t trapped = counts.trapped + counts.unfinished;
  if (outputs.fmt != OutFormat::Npy || !trapped || spec.allow_traps) return false;
  output_error = std::to_string(trapped) + " instance(s) " +
                 (counts.unfinished ? "trapped or did not finish; " : "trapped; ") + spec.output +
                 " not written: .npy cannot record traps (use --allow-traps for zero rows "
                 "plus a trap-code file, or .csv/.json)";
  return true;
}

// Under mpirun the same files, every rank writing its rows at their place
// (run_mpi.h); the files each rank opened were only to find an unwritable
// path before any work.
Status finish_mpi_outputs(const RunSpec& spec, Outputs& outputs, const wasmwarp::Module& m,
                          const wasmwarp::ResultColumns& r, const std::vector<uint64_t>& mem_len,
                          const RunCounts& counts, std::string& output_error) {
  MpiOutputPaths paths{outputs.fmt, spec.output, outputs.trap_path, {}, mem_len};
  for (auto& f : outputs.mem_out) {
    paths.mem_out.push_back(f->path());
    f->discard();
  }
  if (outputs.fmt != OutFormat::None) outputs.out.discard();
  if (!outputs.trap_path.empty()) outputs.trap_out.discard();
  const bool refused = npy_refused(spec, outputs, counts, output_error);
  return write_mpi_outputs(paths, m, r, spec.instances, refused);
}

// --output and --mem-out files, committed (or, for .npy that cannot hold
// the traps, discarded with the reason in `output_error`).
Status finish_outputs(const RunSpec& spec, Outputs& outputs, OutputStream* stream, const wasmwarp::Module& m,
                      const wasmwarp::CallResult& r, const RunCounts& counts, std::string& output_error) {
  if (stream) WW_TRY(stream->finish(r, outputs.trap_path.empty() ? nullptr : &outputs.trap_out));
  for (size_t k = 0; k < outputs.mem_out.size(); ++k) {
    if (!stream) WW_TRY(outputs.mem_out[k]->write(r.memory_out(k).data(), r.memory_out(k).size()));
    WW_TRY(outputs.mem_out[k]->commit());
  }
  if (outputs.fmt == OutFormat::None) return Status::Ok();
  if (npy_refused(spec, outputs, counts, output_error)) {
    outputs.out.discard();
    return Status::Ok();
  }
  if (!stream)
    WW_TRY(write_results(r, m, outputs.fmt, outputs.out, outputs.trap_path.empty() ? nullptr : &outputs.trap_out));
  WW_TRY(outputs.out.commit());
  if (!outputs.trap_path.empty()) WW_TRY(outputs.trap_out.commit());
  return Status::Ok();
}

// Memory inputs pinned by the GPU's start-up for the GPU to copy straight
// from; released with the outputs' writing (or on the way out), before
// their columns go.
struct PinnedInputs {
  std::vector<const void*> pinned;
  void release() {
    for (const void* p : pinned) wasmwarp::unpin_host_memory(p);
    pinned.clear();
  }
  ~PinnedInputs() { release(); }
};

// What finish_batch needs of the call that ran.
struct RanBatch {
  const Invocation& inv;
  OutputStream* stream;
  const std::vector<uint64_t>& mem_len;
  MpiShare share;
  wasmwarp::Tier tier;
  double read_inputs_ms, translate_ms;
};

// After a batch that ran: its outputs written, the summary and whatever
// went wrong on stderr; the process's exit code.
Result<int> finish_batch(const RunSpec& spec, Outputs& outputs, const wasmwarp::Module& m, wasmwarp::CallResult& r,
                         const RanBatch& b, InterruptScope& interrupt, PinnedInputs& pinned_inputs) {
  using Clock = std::chrono::steady_clock;
  const MpiWorld& world = mpi_world();
  const bool rank0 = world.rank == 0;
  const Invocation& inv = b.inv;
  const MpiShare& share = b.share;
  const std::vector<uint64_t>& mem_len = b.mem_len;
  const uint64_t n = share.count;
  const auto t_phase = Clock::now();
  if (world.active() && !spec.image.empty()) WW_TRY(write_mpi_canvas(spec.image.substr(spec.image.find('=') + 1), r));
  else WW_TRY(write_intrinsics_outputs(spec, r));

  const RunCounts mine = count_outcomes(r);
  const RunCounts counts = world.active() ? mpi_counts(mine) : mine;
  // A compiled tier that was asked for and could not be had is worth a
  // line where no summary says so: after a single call, and under -q (a
  // benchmark would otherwise time the interpreter as compiled code).
  if ((!spec.batch || spec.quiet) && rank0 && !r.report().compile.fallback.empty() &&
      b.tier == wasmwarp::Tier::Compiled)
    std::fprintf(stderr, "wasmwarp: note: %s\n", r.report().compile.fallback.c_str());
  print_results(spec, outputs, r, inv.result_types, inv.is_wasi, share.first);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return err("cannot write the results to stdout");

  std::string output_error;
  if (world.active()) WW_TRY(finish_mpi_outputs(spec, outputs, m, r.columns(), mem_len, counts, output_error));
  else WW_TRY(finish_outputs(spec, outputs, b.stream, m, r, counts, output_error));
  pinned_inputs.release();
  r.set_caller_phases(b.read_inputs_ms, b.translate_ms,
                      std::chrono::duration<double, std::milli>(Clock::now() - t_phase).count());
  MpiRanks ranks;
  if (world.active()) ranks = mpi_ranks(counts, mine, r);
  if (!spec.stats.empty() && rank0)
    WW_TRY(write_stats(spec.stats, counts, r.report(), world.active() ? ranks.json.dump() : ""));

  if (world.active()) {
    std::fputs(mpi_report(counts, mine, ranks, r, spec.quiet).c_str(), stderr);
  } else if (spec.batch) {
    // The summary is optional; what went wrong is not.
    std::string s = spec.quiet ? "" : summary_text(counts, r);
    s += problem_lines(counts, r);
    std::fputs(s.c_str(), stderr);
  }
  if (!output_error.empty() && rank0) print_error(output_error);
  if (r.output_capped())
    std::fprintf(stderr,
                 "wasmwarp: %llu instance(s) wrote more than --output-cap allows; their output was cut there (first: "
                 "instance %llu)\n",
                 (unsigned long long)r.output_capped(), (unsigned long long)(share.first + r.first_output_capped()));
  if (int sig = interrupt.signal_number()) return 128 + sig;
  uint64_t nonzero_exits = 0;
  if (inv.is_wasi)
    for (uint64_t i = 0; i < n; ++i) nonzero_exits += r.finished(i) && !r.trapped(i) && r.bits(i) != 0;
  nonzero_exits = mpi_sum(nonzero_exits);
  if (nonzero_exits && !spec.quiet && rank0)
    std::fprintf(stderr, "wasmwarp: %llu instance(s) exited with a non-zero code\n", (unsigned long long)nonzero_exits);
  const bool capped = mpi_max(r.output_capped()) != 0;
  return counts.trapped + counts.unfinished || nonzero_exits || capped ? kExitTrap : kExitOk;
}

Result<int> run_impl(const RunSpec& spec) {
  if (spec.instances == 0) return err("--instances must be at least 1");
  if (spec.instances > (uint64_t(1) << 36)) return err("--instances must be at most 2^36");
  WW_TRY(check_mpi_run(spec));
  WW_TRY(check_output_paths(spec));
  // Under mpirun this rank's instances of the batch, else all of them.
  const MpiWorld& world = mpi_world();
  const MpiShare share = mpi_share(spec.instances);
  const bool rank0 = world.rank == 0;
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  WW_ASSIGN_OR_RETURN(wasmwarp::EngineOptions eopts, engine_options(spec));
  choose_rank_gpus(spec, eopts.gpu);
  share_rank_cores(spec, eopts);
  const wasmwarp::Engine engine(eopts);
  // The GPU's start-up overlaps reading the module and the inputs. Every
  // way out of here waits for it: a process that exits while the start-up
  // thread is still loading CUDA libraries crashes.
  engine.warm_up();
  struct JoinWarmUp {
    ~JoinWarmUp() { wasmwarp::wait_for_warm_up(); }
  } join_warm_up;
  Outputs outputs;
  WW_TRY(open_outputs(spec, outputs));

  double read_inputs_ms = 0;
  WW_ASSIGN_OR_RETURN(const wasmwarp::Module m,
                      load_module(spec.module_path, {.deny_recursion = spec.deny_recursion}, &read_inputs_ms));
  const wasmwarp::ModuleTimes& mt = m.times();
  const double translate_ms = mt.decode + mt.validate + mt.translate;
  if (m.is_wasi_command() && spec.invoke.empty() && !spec.batch) return run_wasi_process(spec, engine, m);

  auto t_phase = Clock::now();
  wasmwarp::CallOptions call;
  WW_ASSIGN_OR_RETURN(Invocation inv, invocation_of(spec, m, outputs, call));
  std::vector<Column<uint8_t>> mem_inputs;
  WW_TRY(add_mem_io(spec, call, mem_inputs, outputs));
  // Large inputs (the records this batch reads) are pinned by the GPU's
  // start-up meanwhile. Not for the interpreter: its batch would wait for
  // the pinning with nothing else to do, and its kernels hide the
  // staging's copies anyway.
  PinnedInputs pinned_inputs;
  if (eopts.backend != wasmwarp::Backend::Cpu && eopts.tier != wasmwarp::Tier::Interpreter)
    for (const wasmwarp::MemoryIn& mi : call.memory_in) {
      wasmwarp::pin_host_memory(mi.bytes.data(), mi.bytes.size());
      pinned_inputs.pinned.push_back(mi.bytes.data());
    }
  read_inputs_ms += ms_since(t_phase);
  WW_TRY(setup_intrinsics(spec, call.intrinsics));
  call.fuel = spec.fuel;
  call.timeout_s = spec.timeout;
  call.first_index = share.first;
  call.total_instances = spec.instances;
  call.gpu_launch_per_call = spec.gpu_launch_per_call;

  InterruptScope interrupt;
  call.cancel = interrupt.cancel();
  ProgressLine progress(spec.batch && !spec.quiet && rank0);
  const Clock::time_point started = Clock::now();
  call.progress = [&](uint64_t done, uint64_t total) {
    progress.update(done, total, std::chrono::duration<double>(Clock::now() - started).count());
  };
  // The memory plan is shown before anything runs: a batch that needs
  // waves says so up front.
  if (spec.batch && !spec.quiet && rank0)
    call.note = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };

  // --output rows and --mem-out records are written while the batch runs,
  // as they become final (under mpirun by every rank at the end).
  std::unique_ptr<OutputStream> stream;
  if (spec.batch && !world.active() && (outputs.fmt != OutFormat::None || !outputs.mem_out.empty())) {
    std::vector<AtomicFile*> mem_files;
    std::vector<uint64_t> mem_len;
    for (size_t k = 0; k < outputs.mem_out.size(); ++k) {
      mem_files.push_back(outputs.mem_out[k].get());
      mem_len.push_back(call.memory_out[k].length);
    }
    stream = std::make_unique<OutputStream>(m, outputs.fmt, outputs.fmt != OutFormat::None ? &outputs.out : nullptr,
                                            std::move(mem_files), std::move(mem_len));
    call.on_ready = [s = stream.get()](const wasmwarp::ResultColumns& c, uint64_t upto) { s->ready(c, upto); };
  }
  const uint64_t n = share.count;
  auto result = inv.is_wasi             ? engine.run_command(m, n, inv.wasi, call)
                : inv.calls.size() == 1 ? engine.call(m, inv.calls[0].export_name, n, inv.calls[0].args, call)
                                        : engine.chain(m, n, inv.calls, call);
  std::vector<uint64_t> mem_len;
  for (const wasmwarp::MemoryOut& o : call.memory_out) mem_len.push_back(o.length);
  // A rank whose call failed: every rank still writes its rows, that
  // rank's as not finished, so that the finished ranks' results are kept;
  // then the job ends with that rank's error.
  if (const uint64_t failed = world.active() ? mpi_max(result ? 0 : uint64_t(world.rank) + 1) : 0) {
    LostRows lost;
    if (!result) {
      lost.make(n, inv.result_types, mem_len);
      if (inv.is_wasi) lost.columns.names = {"exit_code"};
    }
    const RunCounts counts = mpi_counts(result ? count_outcomes(*result) : lost.counts);
    std::string output_error;
    const Status written =
        finish_mpi_outputs(spec, outputs, m, result ? result->columns() : lost.columns, mem_len, counts, output_error);
    const std::string outputs_note = written.ok() ? "the other ranks' rows were written, this rank's as not finished"
                                                  : "no output written: " + written.error().message;
    if (!result) return err(result.error().message + " (" + outputs_note + ")");
    return err("rank " + std::to_string(failed - 1) + " failed (its error is above)");
  }
  if (!result) return err(result.error().message);
  wasmwarp::CallResult& r = *result;
  progress.finish();
  return finish_batch(spec, outputs, m, r,
                      {inv, stream.get(), mem_len, share, eopts.tier, read_inputs_ms, translate_ms}, interrupt,
                      pinned_inputs);
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
