#include "cli/batch.h"

#include "cli/batch_job.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/common.h"
#include "cli/host_imports.h"
#include "cli/io_formats.h"
#include "cli/value_format.h"
#include "store/store.h"
#include "wasmwarp/runtime.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

TrapCode trap_from_message(const std::string& msg) {
  for (int c = 1; c < 256; ++c) {
    const char* m = trap_message(TrapCode(c));
    if (std::string_view(m) == "unknown trap") break;
    if (msg.starts_with(m)) return TrapCode(c);
  }
  return TrapCode::HostError;
}

std::string type_list(const std::vector<ValType>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + std::string(valtype_name(ts[i]));
  return s;
}

Result<AddrSpec> parse_addr(const std::string& text, const Module& m, const char* opt) {
  AddrSpec a;
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

Result<ArgSrc> parse_arg(const std::string& text, ValType type, uint64_t n, size_t pos) {
  ArgSrc a;
  std::string where = "argument " + std::to_string(pos + 1) + " (" + valtype_name(type) + ")";
  if (text == "@index") {
    if (!is_num(type)) return err(where + ": @index cannot feed a " + valtype_name(type));
    a.kind = ArgSrc::Index;
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
    a.kind = ArgSrc::Column;
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

}  // namespace

Value arg_value(const ArgSrc& a, ValType type, uint64_t i) {
  switch (a.kind) {
    case ArgSrc::Const: return a.value;
    case ArgSrc::Column: return a.column[i];
    case ArgSrc::Index:
      switch (type) {
        case ValType::I32: return Value{type, i & 0xFFFFFFFFu};
        case ValType::I64: return Value{type, i};
        case ValType::F32: {
          float f = float(i);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          return Value::f32_bits(b);
        }
        default: {
          double d = double(i);
          uint64_t b;
          std::memcpy(&b, &d, 8);
          return Value::f64_bits(b);
        }
      }
  }
  return a.value;
}

namespace {

// Resolves an address spec in a live instance; a trap while computing it is
// the instance's trap.
TrapCode resolve_addr(Store& store, uint32_t inst, const AddrSpec& a, uint64_t& out) {
  if (a.export_name.empty()) {
    out = a.addr;
    return TrapCode::None;
  }
  auto ev = store.get_export(inst, a.export_name);
  if (!ev) return TrapCode::HostError;
  if (a.is_global) {
    out = uint32_t(store.global_get(ev->addr).bits);
    return TrapCode::None;
  }
  InvokeResult r = store.invoke(ev->addr, {});
  if (!r.ok()) return r.trap;
  out = r.results.empty() ? 0 : uint32_t(r.results[0].bits);
  return TrapCode::None;
}

// Memory 0 of the instance (not necessarily exported).
bool memory_span(Store& store, uint32_t inst, uint8_t*& data, uint64_t& size) {
  const auto& mems = store.impl().instances[inst].memories;
  if (mems.empty()) return false;
  data = store.memory_data(mems[0]);
  size = store.memory_size_bytes(mems[0]);
  return true;
}

bool in_bounds(uint64_t addr, uint64_t len, uint64_t size) { return addr <= size && len <= size - addr; }

// The `len` bytes at `a` in the instance's memory 0, or the trap that
// stops the instance (the address export's own, or out of bounds).
TrapCode locate(Store& store, uint32_t inst, const AddrSpec& a, uint64_t len, uint8_t*& at) {
  uint64_t addr = 0;
  if (TrapCode t = resolve_addr(store, inst, a, addr); t != TrapCode::None) return t;
  uint8_t* data;
  uint64_t size;
  if (!memory_span(store, inst, data, size) || !in_bounds(addr, len, size))
    return TrapCode::MemoryOutOfBounds;
  at = data + addr;
  return TrapCode::None;
}

TrapCode run_one(Store& store, const std::vector<ExternVal>& imports, Job& job, uint64_t i,
                 std::vector<Value>& args) {
  auto r = store.instantiate(job.mod, imports);
  if (auto* e = std::get_if<InstantiateError>(&r)) return trap_from_message(e->message);
  uint32_t inst = std::get<uint32_t>(r);
  for (MemIn& m : job.mem_in) {
    uint8_t* at;
    if (TrapCode t = locate(store, inst, m.addr, m.record, at); t != TrapCode::None) return t;
    std::memcpy(at, m.data.data() + i * m.record, m.record);
  }
  const size_t np = job.type.params.size();
  for (size_t k = 0; k < np; ++k) args[k] = arg_value(job.args[k], job.type.params[k], i);
  auto fn = store.get_export(inst, job.export_name);
  if (!fn) return TrapCode::HostError;
  InvokeResult res = store.invoke(fn->addr, args);
  if (!res.ok()) return res.trap;
  for (MemOut& m : job.mem_out) {
    uint8_t* at;
    if (TrapCode t = locate(store, inst, m.addr, m.len, at); t != TrapCode::None) return t;
    std::memcpy(m.buf.data() + i * m.len, at, m.len);
  }
  const size_t nr = job.type.results.size();
  for (size_t k = 0; k < nr && k < res.results.size(); ++k) job.results[i * nr + k] = res.results[k].bits;
  return TrapCode::None;
}

// A store never removes instances, and a batch makes millions: each
// finished instance's storage is released (nothing else can reach it), and
// a worker starts a fresh store every kInstancesPerStore instances for the
// small records that stay.
constexpr uint64_t kInstancesPerStore = 16384;

const char* npy_descr(ValType t) {
  switch (t) {
    case ValType::I32: return "'<i4'";
    case ValType::I64: return "'<i8'";
    case ValType::F32: return "'<f4'";
    case ValType::F64: return "'<f8'";
    default: return nullptr;
  }
}

Status write_outputs(Job& job, OutFormat fmt, AtomicFile& out, AtomicFile* trap_file) {
  const auto& rt = job.type.results;
  const size_t nr = rt.size();
  auto value = [&](uint64_t i, size_t k) { return Value{rt[k], job.results[i * nr + k]}; };
  if (fmt == OutFormat::Csv) {
    std::string line = "instance";
    for (size_t k = 0; k < nr; ++k) line += ",result" + std::to_string(k);
    line += ",trap\n";
    WW_TRY(out.write(line));
    for (uint64_t i = 0; i < job.n; ++i) {
      line = std::to_string(i);
      TrapCode t = TrapCode(job.traps[i]);
      for (size_t k = 0; k < nr; ++k) line += "," + (t == TrapCode::None ? csv_escape(format_value(value(i, k))) : "");
      line += ",";
      if (t != TrapCode::None) line += csv_escape(trap_message(t));
      line += "\n";
      WW_TRY(out.write(line));
    }
  } else if (fmt == OutFormat::Json) {
    WW_TRY(out.write("[\n"));
    for (uint64_t i = 0; i < job.n; ++i) {
      nlohmann::ordered_json o;
      o["instance"] = i;
      TrapCode t = TrapCode(job.traps[i]);
      auto arr = nlohmann::json::array();
      if (t == TrapCode::None) {
        // Integers as JSON numbers; floats and refs as exact text (JSON has
        // no NaN, inf or -0 that survives every reader).
        for (size_t k = 0; k < nr; ++k) {
          Value v = value(i, k);
          if (v.type == ValType::I32) arr.push_back(int32_t(uint32_t(v.bits)));
          else if (v.type == ValType::I64) arr.push_back(int64_t(v.bits));
          else arr.push_back(format_value(v));
        }
        o["results"] = std::move(arr);
        o["trap"] = nullptr;
      } else {
        o["results"] = nullptr;
        o["trap"] = trap_message(t);
        // Traps raised by the instance's code say where.
        if (t != TrapCode::Timeout && job.trap_pc[i] != gpu::kNoTrapPc) {
          o["trap_function"] = job.mod->module.func_display_name(job.trap_func[i]);
          o["trap_offset"] = job.trap_pc[i];
        }
      }
      WW_TRY(out.write("  " + o.dump() + (i + 1 < job.n ? ",\n" : "\n")));
    }
    WW_TRY(out.write("]\n"));
  } else if (fmt == OutFormat::Npy) {
    bool same = std::all_of(rt.begin(), rt.end(), [&](ValType t) { return t == rt[0]; });
    std::string descr;
    std::vector<uint64_t> shape{job.n};
    if (same) {
      descr = npy_descr(rt[0]);
      if (nr > 1) shape.push_back(nr);
    } else {
      descr = "[";
      for (size_t k = 0; k < nr; ++k)
        descr += "('result" + std::to_string(k) + "', " + npy_descr(rt[k]) + ")" + (k + 1 < nr ? ", " : "");
      descr += "]";
    }
    WW_TRY(out.write(npy_header(descr, false, shape)));
    std::vector<uint8_t> row;
    for (uint64_t i = 0; i < job.n; ++i) {
      row.clear();
      bool trapped = job.traps[i] != 0;
      for (size_t k = 0; k < nr; ++k) {
        uint64_t b = trapped ? 0 : job.results[i * nr + k];
        size_t w = (rt[k] == ValType::I32 || rt[k] == ValType::F32) ? 4 : 8;
        const uint8_t* p = reinterpret_cast<const uint8_t*>(&b);
        row.insert(row.end(), p, p + w);
      }
      WW_TRY(out.write(row.data(), row.size()));
    }
    if (trap_file) {
      WW_TRY(trap_file->write(npy_header("'|u1'", false, {job.n})));
      WW_TRY(trap_file->write(job.traps.data(), job.traps.size()));
    }
  }
  return Status::Ok();
}

std::string fmt_double(double v, int prec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

// Runs the instances on all CPU cores; returns the thread count used.
// --timeout stops handing out instances once it has passed; an instance
// already running finishes (--fuel bounds a runaway one on the CPU).
Result<unsigned> run_job_on_cpu(Job& job, const RunSpec& spec, std::vector<uint8_t>& finished,
                                ProgressLine& progress) {
  unsigned threads = spec.threads ? spec.threads : std::max(1u, std::thread::hardware_concurrency());
  if (uint64_t(threads) > job.n) threads = unsigned(job.n);

  auto t0 = std::chrono::steady_clock::now();
  auto deadline_passed = [&] {
    return spec.timeout > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > spec.timeout;
  };
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex fail_mu;
  std::string fail_msg;
  const uint64_t chunk = std::clamp<uint64_t>(job.n / (uint64_t(threads) * 16), 1, 256);
  auto worker = [&] {
    try {
      std::unique_ptr<Store> store;
      std::vector<ExternVal> imports;
      gpu::GpuContext ctx{job.gbatch, 0};
      uint64_t count = 0;
      std::vector<Value> args(job.type.params.size());
      while (!failed.load(std::memory_order_relaxed)) {
        uint64_t begin = next.fetch_add(chunk);
        if (begin >= job.n) break;
        uint64_t end = std::min(job.n, begin + chunk);
        for (uint64_t i = begin; i < end; ++i) {
          // A store never frees instances, so each worker starts a fresh
          // one before the finished ones pile up.
          if (!store || count >= kInstancesPerStore) {
            store = std::make_unique<Store>(job.limits);
            auto linked = link_imports(*store, job.mod->module, &ctx);
            if (!linked.ok()) throw std::runtime_error(linked.error().message);
            imports = std::move(*linked);
            count = 0;
          }
          if (deadline_passed()) continue;  // reported as not finished
          ctx.instance_index = uint32_t(i);
          store->impl().last_trap = TrapInfo{};
          job.traps[i] = uint8_t(run_one(*store, imports, job, i, args));
          const TrapInfo& where = store->impl().last_trap;
          job.trap_func[i] = where.func_index;
          job.trap_pc[i] = where.code != TrapCode::None ? where.pc : gpu::kNoTrapPc;
          finished[i] = 1;
          done.fetch_add(1, std::memory_order_relaxed);
          store->release_instance_storage(uint32_t(store->impl().instances.size() - 1));
          ++count;
        }
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> g(fail_mu);
      if (fail_msg.empty()) fail_msg = std::string("instance failed: ") + e.what();
      failed = true;
    }
  };
  std::atomic<unsigned> running{threads};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      worker();
      running.fetch_sub(1);
    });
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    progress.update(done.load(), job.n,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  for (auto& t : pool) t.join();
  if (failed) return err(fail_msg);
  return threads;
}

Result<int> run_impl(const RunSpec& spec) {
  if (spec.instances == 0) return err("--instances must be at least 1");
  if (spec.instances > (uint64_t(1) << 36)) return err("--instances must be at most 2^36");
  Job job;
  job.n = spec.instances;

  // Output files first: an unwritable path must fail before any work.
  OutFormat fmt = OutFormat::None;
  AtomicFile out, trap_out;
  std::string trap_path;
  if (!spec.output.empty()) {
    std::string ext = file_extension(spec.output);
    if (ext == "csv") fmt = OutFormat::Csv;
    else if (ext == "json") fmt = OutFormat::Json;
    else if (ext == "npy") fmt = OutFormat::Npy;
    else return err("unknown output format for " + spec.output + " (use .csv, .json or .npy)");
    WW_TRY(out.open(spec.output));
    if (fmt == OutFormat::Npy && spec.allow_traps) {
      trap_path = spec.output.substr(0, spec.output.size() - 4) + ".traps.npy";
      WW_TRY(trap_out.open(trap_path));
    }
  }

  CompileOptions copts;
  copts.deny_recursion = spec.deny_recursion;
  auto compiled = compile_file(spec.module_path, copts);
  if (!compiled.ok()) {
    std::string m = compiled.error().to_string();
    if (m.find(spec.module_path) == std::string::npos) m = spec.module_path + ": " + m;
    return err(m);
  }
  job.mod = *compiled;
  const Module& m = job.mod->module;

  // The export.
  job.export_name = spec.invoke.empty() ? "_start" : spec.invoke;
  const Export* ex = nullptr;
  for (const Export& e : m.exports)
    if (e.name == job.export_name) ex = &e;
  if (!ex) {
    if (spec.invoke.empty()) return err("no --invoke given and the module exports no _start");
    std::string names;
    for (const Export& e : m.exports)
      if (e.kind == ExternKind::Func) names += (names.empty() ? "" : ", ") + e.name;
    return err("unknown export '" + job.export_name + "' (exported functions: " +
               (names.empty() ? "none" : names) + ")");
  }
  if (ex->kind != ExternKind::Func)
    return err("export '" + job.export_name + "' is a " + extern_kind_name(ex->kind) + ", not a function");
  job.type = m.func_type(ex->index);
  const auto& params = job.type.params;
  if (spec.args.size() != params.size())
    return err("export '" + job.export_name + "' takes " + std::to_string(params.size()) +
               " argument(s) (" + type_list(params) + "), got " + std::to_string(spec.args.size()));
  for (ValType t : job.type.results)
    if (t == ValType::V128) return err("export '" + job.export_name + "' returns v128, which the CLI cannot print");
  if (fmt == OutFormat::Npy) {
    if (job.type.results.empty()) return err("--output .npy needs an export with results; '" + job.export_name + "' has none");
    for (ValType t : job.type.results)
      if (!npy_descr(t))
        return err(std::string("--output .npy cannot hold ") + valtype_name(t) + " results (use .csv or .json)");
  }
  WW_TRY(check_imports(m));

  for (size_t k = 0; k < params.size(); ++k) {
    WW_ASSIGN_OR_RETURN(ArgSrc a, parse_arg(spec.args[k], params[k], job.n, k));
    job.args.push_back(std::move(a));
  }

  // Memory I/O.
  if ((!spec.mem_in.empty() || !spec.mem_out.empty()) && m.num_memories() == 0)
    return err("--mem-in/--mem-out need a module with a memory");
  for (const std::string& s : spec.mem_in) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      return err("--mem-in '" + s + "': expected ADDR=FILE");
    MemIn mi;
    WW_ASSIGN_OR_RETURN(mi.addr, parse_addr(s.substr(0, eq), m, "--mem-in"));
    mi.path = s.substr(eq + 1);
    WW_ASSIGN_OR_RETURN(mi.data, read_all(mi.path));
    uint64_t size = mi.data.size();
    if (size == 0) return err(mi.path + " is empty");
    if (spec.mem_in_size) {
      mi.record = *spec.mem_in_size;
      if (mi.record == 0) return err("--mem-in-size must be at least 1");
      if (size / mi.record < job.n)
        return err(mi.path + " holds " + std::to_string(size / mi.record) + " records of " +
                   std::to_string(mi.record) + " bytes, but " + std::to_string(job.n) +
                   " instances need one each");
    } else {
      if (size % job.n != 0)
        return err(mi.path + " is " + std::to_string(size) + " bytes, not a multiple of " +
                   std::to_string(job.n) + " instances (give --mem-in-size)");
      mi.record = size / job.n;
    }
    job.mem_in.push_back(std::move(mi));
  }
  for (const std::string& s : spec.mem_out) {
    size_t eq = s.find('=');
    size_t colon = s.substr(0, eq).find_last_of(':');
    if (eq == std::string::npos || colon == std::string::npos || colon == 0 || eq + 1 == s.size())
      return err("--mem-out '" + s + "': expected ADDR:LEN=FILE");
    job.mem_out.emplace_back();
    MemOut& mo = job.mem_out.back();
    WW_ASSIGN_OR_RETURN(mo.addr, parse_addr(s.substr(0, colon), m, "--mem-out"));
    auto len = parse_u64(s.substr(colon + 1, eq - colon - 1));
    if (!len.ok() || *len == 0) return err("--mem-out '" + s + "': bad length");
    mo.len = *len;
    if (mo.len > (uint64_t(1) << 32) || job.n > (uint64_t(1) << 40) / mo.len)
      return err("--mem-out '" + s + "': " + std::to_string(job.n) + " x " + std::to_string(mo.len) + " bytes is too much output");
    mo.path = s.substr(eq + 1);
    WW_TRY(mo.file->open(mo.path));
    mo.buf.assign(job.n * mo.len, 0);
  }

  // Per-instance results live in memory until the end; refuse up front what
  // the machine cannot hold rather than dying midway.
  uint64_t per_instance = 1 + 8 * job.type.results.size();
  for (const MemOut& mo : job.mem_out) per_instance += mo.len;
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && job.n > uint64_t(pages) * uint64_t(page_size) / per_instance)
    return err(std::to_string(job.n) + " instances need " + std::to_string(job.n / (1u << 20) * per_instance) +
               " MiB for their results, more than this machine's memory");

  job.limits.fuel = spec.fuel;
  job.results.assign(job.n * job.type.results.size(), 0);
  job.traps.assign(job.n, 0);
  job.trap_func.assign(job.n, 0);
  job.trap_pc.assign(job.n, 0);

  // The `gpu` intrinsics' shared state (image, state buffer, textures).
  gpu::GpuBatch gbatch;
  WW_TRY(setup_intrinsics(spec, job.n, gbatch));
  job.gbatch = &gbatch;

  // Backend: the GPU when asked for, or for `auto` when one is usable.
  bool use_gpu = false;
  std::string backend_note;
  if (spec.backend == "gpu" || spec.backend == "auto") {
    gpu::DeviceInfo dev = gpu::probe_device();
    if (dev.available) {
      use_gpu = true;
    } else if (spec.backend == "gpu") {
      return err("--backend gpu: " + dev.reason);
    } else {
      backend_note = " (no GPU: " + dev.reason + ")";
    }
  } else if (spec.backend != "cpu") {
    return err("--backend must be auto, cpu or gpu, not '" + spec.backend + "'");
  }

  std::vector<uint8_t> finished(job.n, 0);
  unsigned threads = 0;
  ProgressLine progress(spec.batch && !spec.quiet);
  std::string backend_line;
  gbatch.start_clock();
  auto t0 = std::chrono::steady_clock::now();
  if (use_gpu) {
    WW_ASSIGN_OR_RETURN(GpuRunInfo info, run_job_on_gpu(job, spec, gbatch, progress));
    finished = std::move(info.finished);
    backend_line = "backend=gpu device=\"" + info.device + "\" kernel: " + fmt_double(info.kernel_ms / 1000, 6) +
                   " s\n";
  } else {
    WW_ASSIGN_OR_RETURN(threads, run_job_on_cpu(job, spec, finished, progress));
    backend_line = "backend=cpu threads=" + std::to_string(threads) + backend_note + "\n";
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.finish();

  // Instances the timeout stopped, or never started, report it as their
  // trap, so every output row says what became of its instance.
  std::vector<uint64_t> unfinished;
  for (uint64_t i = 0; i < job.n; ++i)
    if (!finished[i]) {
      job.traps[i] = uint8_t(TrapCode::Timeout);
      unfinished.push_back(i);
    }
  WW_TRY(write_intrinsics_outputs(spec, gbatch));

  std::map<int, uint64_t> trap_counts;
  uint64_t trapped = 0;
  for (uint8_t t : job.traps)
    if (t) {
      ++trapped;
      ++trap_counts[t];
    }

  int rc = trapped ? kExitTrap : kExitOk;
  const auto& rt = job.type.results;
  if (!spec.batch) {
    if (job.traps[0]) {
      std::fprintf(stderr, "wasm trap: %s\n", trap_message(TrapCode(job.traps[0])));
    } else {
      for (size_t k = 0; k < rt.size(); ++k)
        std::printf("%s\n", format_value(Value{rt[k], job.results[k]}).c_str());
    }
  } else if (fmt == OutFormat::None) {
    std::string line;
    for (uint64_t i = 0; i < job.n; ++i) {
      line = std::to_string(i);
      if (job.traps[i]) {
        line += "\ttrap: ";
        line += trap_message(TrapCode(job.traps[i]));
      } else {
        for (size_t k = 0; k < rt.size(); ++k)
          line += "\t" + format_value(Value{rt[k], job.results[i * rt.size() + k]});
      }
      line += "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
  }
  std::fflush(stdout);

  for (MemOut& mo : job.mem_out) {
    WW_TRY(mo.file->write(mo.buf.data(), mo.buf.size()));
    WW_TRY(mo.file->commit());
  }
  std::string output_error;
  if (fmt != OutFormat::None) {
    if (fmt == OutFormat::Npy && trapped && !spec.allow_traps) {
      out.discard();
      output_error = std::to_string(trapped) + " instance(s) trapped; " + spec.output +
                     " not written: .npy cannot record traps (use --allow-traps for zero rows "
                     "plus a trap-code file, or .csv/.json)";
    } else {
      WW_TRY(write_outputs(job, fmt, out, trap_path.empty() ? nullptr : &trap_out));
      WW_TRY(out.commit());
      if (!trap_path.empty()) WW_TRY(trap_out.commit());
    }
  }

  if (spec.batch && !spec.quiet) {
    std::string s = "instances: " + std::to_string(job.n) + "  completed: " +
                    std::to_string(job.n - trapped) + "  trapped: " + std::to_string(trapped) + "\n";
    for (auto [code, cnt] : trap_counts)
      s += "  trap " + std::string(trap_message(TrapCode(code))) + ": " + std::to_string(cnt) + "\n";
    if (!unfinished.empty()) {
      s += "  not finished when the timeout struck: " + std::to_string(unfinished.size()) + " (instances";
      for (size_t k = 0; k < unfinished.size() && k < 8; ++k) s += " " + std::to_string(unfinished[k]);
      s += unfinished.size() > 8 ? " ...)\n" : ")\n";
    }
    if (gbatch.ignored_pixels.load())
      s += "  set_pixel calls outside the image: " + std::to_string(gbatch.ignored_pixels.load()) + "\n";
    s += "wall: " + fmt_double(wall, 3) + " s  rate: " +
         fmt_double(wall > 0 ? double(job.n) / wall : 0.0, 0) + " instances/s  " + backend_line;
    std::fputs(s.c_str(), stderr);
  }
  if (!output_error.empty()) print_error(output_error);
  return rc;
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
