// ww-difftest: a randomized differential test of an engine against the CPU
// interpreter over the spec suite's modules. The engine: the GPU
// interpreter kernel (--backend gpu, the default), compiled GPU code
// (--backend gpu --tier compiled) or compiled CPU code (--backend cpu
// --tier compiled).
//
// For every exported function of a module whose parameters and results are
// numbers, N argument rows are drawn; row i runs on the CPU interpreter in a
// fresh instantiation (no state leaks between rows); on the GPU all N rows
// run as one batch started from a fresh instantiation, on compiled CPU code
// each row in its own fresh instantiation again. Result bits (NaNs
// included, exactly) and trap codes must be equal row by row.
//
// Both engines get the same limits: fuel (both count loop back-edges and
// calls, checked in the same order as the call-depth and stack checks, so a
// fuel trap must match too), call depth, frame-stack slots and the memory
// growth cap (the CPU store's max_memory_pages equals the GPU's capacity).
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiled/compiled_tier.h"
#include "cpu_backend.h"
#include "exec/gpu/gpu_backend.h"
#include "parse_uint.h"
#include "store/store.h"
#include "value_text.h"

namespace {

using namespace ww;
using namespace ww::spectest;
using json = nlohmann::json;

constexpr int kExitSkip = 77;  // ctest's SKIP_RETURN_CODE
// Growth room over a module's initial memory, on both engines.
constexpr uint32_t kGrowRoom = 16;

struct Options {
  uint32_t n = 256;
  uint64_t seed = 1;
  uint64_t fuel = 100'000;
  uint32_t max_call_depth = 1000;
  uint32_t stack_slots = 1u << 14;
  // One table-size cap for both engines, so table.grow answers alike.
  uint32_t max_table_size = 1u << 16;
  uint32_t show = 3;  // mismatching rows printed per function
  bool verbose = false;
  bool gpu = true;        // the engine under test runs on the GPU
  bool compiled = false;  // ... as compiled code
  bool mixed = false;     // ... with each module's functions split between the tiers (CPU)
  MemoryLayout layout = MemoryLayout::Interleaved;
  std::vector<std::string> files;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: ww-difftest [-n N] [--seed S] [--fuel F] [--show K] [--verbose]\n"
               "                   [--backend cpu|gpu] [--tier interp|compiled|mixed] [--gpu-layout L] FILE.json...\n"
               "Runs every numeric export of the wast2json scripts' modules on the CPU\n"
               "interpreter and on the engine under test with random arguments and compares\n"
               "results and traps bit for bit.\n"
               "  -n N          instances (argument rows) per function (default 256)\n"
               "  --seed S      random seed (default 1); each function's rows depend only\n"
               "                on S, the script, the module's position and the export name\n"
               "  --fuel F      instructions per instance on both engines (default 100000)\n"
               "  --show K      mismatching rows printed per function (default 3)\n"
               "  --verbose     a line per function, not only per module\n"
               "  --backend B   gpu (default) or cpu: where the engine under test runs\n"
               "  --tier T      interp (default) or compiled: how (cpu needs compiled); mixed\n"
               "                (cpu): each module's functions split between the tiers by the\n"
               "                seed, about half compiled as one unit, the rest interpreted\n"
               "  --gpu-layout L  interleaved (default), contiguous or sparse memory on the GPU\n"
               "Exit status: 0 all equal, 1 a mismatch or an engine error, 2 usage,\n"
               "77 no usable GPU (for --backend gpu).\n");
}

int parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto number = [&](uint64_t lo, uint64_t hi, uint64_t& out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ww-difftest: %s needs a number\n", a.c_str());
        return false;
      }
      const char* v = argv[++i];
      if (!parse_uint(v, out) || out < lo || out > hi) {
        std::fprintf(stderr, "ww-difftest: bad value for %s: %s\n", a.c_str(), v);
        return false;
      }
      return true;
    };
    uint64_t v = 0;
    if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (a == "-n") {
      if (!number(1, 1u << 20, v)) return 2;
      o.n = uint32_t(v);
    } else if (a == "--seed") {
      if (!number(0, ~0ull, o.seed)) return 2;
    } else if (a == "--fuel") {
      if (!number(1, ~0ull, o.fuel)) return 2;
    } else if (a == "--show") {
      if (!number(0, 1000, v)) return 2;
      o.show = uint32_t(v);
    } else if (a == "--verbose" || a == "-v") {
      o.verbose = true;
    } else if (a == "--backend" || a == "--tier") {
      std::string v = i + 1 < argc ? argv[++i] : "";
      if (a == "--backend" && (v == "gpu" || v == "cpu")) o.gpu = v == "gpu";
      else if (a == "--tier" && (v == "interp" || v == "compiled" || v == "mixed")) {
        o.compiled = v != "interp";
        o.mixed = v == "mixed";
      } else {
        std::fprintf(stderr, "ww-difftest: bad value for %s: '%s'\n", a.c_str(), v.c_str());
        return 2;
      }
    } else if (a == "--gpu-layout") {
      auto l = parse_layout(i + 1 < argc ? argv[++i] : "");
      if (!l || *l == MemoryLayout::Auto) {
        std::fprintf(stderr, "ww-difftest: --gpu-layout must be interleaved, contiguous or sparse\n");
        return 2;
      }
      o.layout = *l;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "ww-difftest: unknown option %s\n", a.c_str());
      usage(stderr);
      return 2;
    } else {
      o.files.push_back(a);
    }
  }
  if (o.files.empty()) {
    usage(stderr);
    return 2;
  }
  if (o.gpu && o.mixed) {
    std::fprintf(stderr, "ww-difftest: --tier mixed runs on the CPU backend only\n");
    return 2;
  }
  if (!o.gpu && !o.compiled) {
    std::fprintf(stderr, "ww-difftest: --backend cpu compares compiled code (--tier compiled) with the interpreter\n");
    return 2;
  }
  return 0;
}

// ------------------------------------------------------------ arguments

// Values that break arithmetic: zeros, extremes, NaNs, conversion edges.
uint64_t draw_int(std::mt19937_64& rng, int bits) {
  const uint64_t mask = bits == 32 ? 0xFFFFFFFFull : ~0ull;
  const uint64_t min = uint64_t{1} << (bits - 1);
  switch (rng() % 8) {
    case 0:
    case 1: return rng() & mask;  // uniform bits
    case 2: {
      static const int64_t small[] = {0, 1, -1, 2, -2, 3, 7, 8, 16, 31, 32, 63, 64, 255, 256};
      return uint64_t(small[rng() % std::size(small)]) & mask;
    }
    case 3: {
      const uint64_t edge[] = {0, mask, min, min - 1, min + 1, mask - 1};
      return edge[rng() % std::size(edge)];
    }
    case 4: {  // near a power of two, either sign
      uint64_t p = uint64_t{1} << (rng() % bits);
      uint64_t v = p + uint64_t(int64_t(rng() % 3) - 1);
      return (rng() & 1 ? v : 0 - v) & mask;
    }
    default: {  // small magnitude: loop counts, indices, shift amounts
      int64_t v = int64_t(rng() % 129) - 64;
      return uint64_t(v) & mask;
    }
  }
}

template <class F, class U>
U float_special(std::mt19937_64& rng) {
  using L = std::numeric_limits<F>;
  constexpr int mant = L::digits - 1;
  constexpr U sign = U{1} << (sizeof(U) * 8 - 1);
  constexpr U exp_all = (~U{0} >> 1) & ~((U{1} << mant) - 1);
  const U quiet = exp_all | (U{1} << (mant - 1));
  const F vals[] = {F(0),
                    F(1),
                    F(0.5),
                    F(2),
                    F(3),
                    L::infinity(),
                    L::max(),
                    L::min(),
                    L::denorm_min(),
                    L::epsilon(),
                    F(2147483648.0),
                    F(2147483647.0),
                    F(4294967296.0),
                    F(4294967295.0),
                    F(9223372036854775808.0),
                    F(18446744073709551616.0),
                    F(0.49999997),
                    F(1.5),
                    F(2.5),
                    F(-0.5)};
  switch (rng() % 4) {
    case 0:  // NaNs: canonical, with payload, signalling, either sign
    {
      U payload = U(rng()) & ((U{1} << mant) - 1);
      if (payload == 0) payload = 1;
      const U nans[] = {quiet, exp_all | payload, exp_all | (payload >> 1 ? payload >> 1 : 1)};
      U v = nans[rng() % 3];
      return rng() & 1 ? v | sign : v;
    }
    case 1: {  // a power of two, or next to one
      int e = int(rng() % (2 * L::max_exponent)) - L::max_exponent;
      U v = std::bit_cast<U>(F(std::ldexp(F(1), e)));
      v += U(int64_t(rng() % 3) - 1);
      return rng() & 1 ? v | sign : v;
    }
    default: {
      U v = std::bit_cast<U>(vals[rng() % std::size(vals)]);
      return rng() & 1 ? v | sign : v;
    }
  }
}

uint64_t draw(std::mt19937_64& rng, ValType t) {
  switch (t) {
    case ValType::I32: return draw_int(rng, 32);
    case ValType::I64: return draw_int(rng, 64);
    case ValType::F32:
      if (rng() % 3 == 0) return rng() & 0xFFFFFFFFull;
      if (rng() % 3 == 0) return std::bit_cast<uint32_t>(float(int32_t(rng() % 201) - 100));
      return float_special<float, uint32_t>(rng);
    case ValType::F64:
      if (rng() % 3 == 0) return rng();
      if (rng() % 3 == 0) return std::bit_cast<uint64_t>(double(int64_t(rng() % 201) - 100));
      return float_special<double, uint64_t>(rng);
    default: return 0;
  }
}

bool numeric(const std::vector<ValType>& ts) {
  for (ValType t : ts)
    if (t != ValType::I32 && t != ValType::I64 && t != ValType::F32 && t != ValType::F64) return false;
  return true;
}

// An instance's outcome: a trap code, or result bits.
struct Outcome {
  TrapCode trap = TrapCode::None;
  std::vector<uint64_t> results;
  bool operator==(const Outcome& o) const { return trap == o.trap && (trap != TrapCode::None || results == o.results); }
};

std::string show_outcome(const Outcome& o, const std::vector<ValType>& types) {
  if (o.trap != TrapCode::None) return std::string("trap \"") + trap_message(o.trap) + "\"";
  std::string s = "(";
  for (size_t k = 0; k < o.results.size(); ++k) s += (k ? ", " : "") + show_bits(types[k], o.results[k]);
  return s + ")";
}

// ------------------------------------------------------------ the test

struct Totals {
  uint64_t modules = 0, modules_skipped = 0, functions = 0, functions_skipped = 0;
  uint64_t instances = 0, mismatches = 0, not_runnable = 0, batch_errors = 0;
  uint64_t mismatched_functions = 0, not_runnable_functions = 0;
  std::map<std::string, uint64_t> skip_reasons;
};

class DiffTest {
 public:
  explicit DiffTest(const Options& o) : o_(o) {}

  void run_file(const std::string& path) {
    std::string dir = ".", base = path;
    if (size_t slash = path.rfind('/'); slash != std::string::npos) {
      dir = path.substr(0, slash);
      base = path.substr(slash + 1);
    }
    std::ifstream in(path, std::ios::binary);
    json doc = in ? json::parse(in, nullptr, false) : json();
    if (!in || doc.is_discarded() || !doc.is_object() || !doc.contains("commands") || !doc["commands"].is_array()) {
      std::printf("ERROR %s: not a readable wast2json script\n", path.c_str());
      ++t_.batch_errors;
      return;
    }
    uint32_t index = 0;
    for (const json& cmd : doc["commands"]) {
      if (!cmd.is_object() || cmd.value("type", "") != "module") continue;
      std::string file = cmd.value("filename", "");
      uint32_t line = cmd.contains("line") && cmd["line"].is_number_unsigned() ? cmd["line"].get<uint32_t>() : 0;
      run_module(base, dir, file, line, index++);
    }
  }

  const Totals& totals() const { return t_; }

 private:
  void skip_module(const std::string& where, const std::string& why) {
    ++t_.modules_skipped;
    t_.skip_reasons["modules: " + why]++;
    if (o_.verbose) std::printf("%s: skipped: %s\n", where.c_str(), why.c_str());
  }

  BackendOptions backend_options(const Module& m) const {
    BackendOptions b;
    b.fuel = o_.fuel;
    b.max_call_depth = o_.max_call_depth;
    b.stack_slots = o_.stack_slots;
    b.max_table_size = o_.max_table_size;
    // The same growth cap as the GPU's capacity (see run_function).
    uint32_t init = m.num_memories() ? uint32_t(m.memory_type(0).limits.min) : 0;
    b.max_memory_pages = std::min<uint32_t>(init + kGrowRoom, kMaxPages);
    return b;
  }

  void run_module(const std::string& script, const std::string& dir, const std::string& file, uint32_t line,
                  uint32_t index) {
    const std::string where = script + ":" + std::to_string(line) + " (" + file + ")";
    ++t_.modules;
    if (file.empty() || file.find('/') != std::string::npos)
      return skip_module(where, "module command without a plain file name");
    auto cm = compile_file(dir + "/" + file);
    if (!cm.ok()) return skip_module(where, "does not compile");
    const Module& m = (*cm)->module;
    // A fresh backend per instance; the first tells whether the module can
    // be instantiated against spectest at all.
    CpuBackend probe(backend_options(m));
    InstantiateOutcome io = probe.instantiate(*cm);
    if (io.kind == InstantiateOutcome::Kind::Unlinkable)
      return skip_module(where, "imports that spectest does not provide");
    if (io.kind == InstantiateOutcome::Kind::Trap) return skip_module(where, "instantiation traps");

    // The engine under test: compiled code is made once per module.
    Engine engine;
    if (o_.compiled) {
      compiled::Request req;
      req.module = *cm;
      req.target = o_.gpu ? compiled::Target::Gpu : compiled::Target::Cpu;
      req.metered = true;  // both engines run under the same fuel
      req.layout = o_.layout;
      Status s = Status::Ok();
      if (o_.gpu) {
        auto r = compiled::compile_gpu(req, nullptr);
        if (r.ok()) engine.launcher = *r;
        else s = r.error();
      } else {
        // Split by the seed (ww-spectest's --mixed-seed splits alike, so
        // both find the same units in the cache).
        // A split with nothing compiled leaves the module interpreted.
        if (o_.mixed) req.functions = compiled::mixed_split(**cm, o_.seed ? o_.seed : 1);
        if (!o_.mixed || !req.functions.empty()) {
          auto r = compiled::compile_cpu(req, nullptr);
          if (r.ok()) engine.native = *r;
          else s = r.error();
        }
      }
      if (!s.ok()) {
        std::printf("ERROR %s: could not compile: %s\n", where.c_str(), s.error().message.c_str());
        ++t_.batch_errors;
        return;
      }
    }

    uint64_t before_mm = t_.mismatches, before_nr = t_.not_runnable, fns = 0, inst = 0;
    for (const Export& e : m.exports) {
      if (e.kind != ExternKind::Func) continue;
      if (e.index < m.num_imported_funcs) {
        ++t_.functions_skipped;
        t_.skip_reasons["functions: the export is an imported function"]++;
        continue;
      }
      const FuncType& ft = m.func_type(e.index);
      if (!numeric(ft.params) || !numeric(ft.results)) {
        ++t_.functions_skipped;
        t_.skip_reasons["functions: reference-typed parameters or results"]++;
        continue;
      }
      ++fns;
      inst += o_.n;
      run_function(where, *cm, e, ft, script, index, engine);
    }
    t_.functions += fns;
    std::printf("%s: %llu functions, %llu instances, %llu mismatches, %llu not GPU-runnable\n", where.c_str(),
                (unsigned long long)fns, (unsigned long long)inst, (unsigned long long)(t_.mismatches - before_mm),
                (unsigned long long)(t_.not_runnable - before_nr));
  }

  // Compiled code of the module under test (null: the GPU interpreter).
  struct Engine {
    std::shared_ptr<gpu::KernelLauncher> launcher;
    std::shared_ptr<const NativeCode> native;
  };

  // Every row on compiled CPU code, each in a fresh instantiation.
  bool run_on_compiled_cpu(const std::string& where, const std::shared_ptr<const CompiledModule>& cm, const Export& e,
                           const FuncType& ft, const std::vector<uint64_t>& args, const Engine& engine,
                           std::vector<Outcome>& out) {
    const uint32_t n = o_.n, np = uint32_t(ft.params.size());
    CpuBackend be(backend_options(cm->module));
    for (uint32_t i = 0; i < n; ++i) {
      be.reset();
      be.store().impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return engine.native; };
      InstantiateOutcome io = be.instantiate(cm);
      const StoreImpl& S = be.store().impl();
      // Under --tier mixed the export may be on either side of the split.
      if (io.kind != InstantiateOutcome::Kind::Ok ||
          (!o_.mixed && !engine.native->has(S, e.index - cm->module.num_imported_funcs))) {
        std::printf("ERROR %s \"%s\": compiled code cannot run it\n", where.c_str(), e.name.c_str());
        ++t_.batch_errors;
        return false;
      }
      std::vector<Value> vs;
      for (uint32_t k = 0; k < np; ++k) vs.push_back({ft.params[k], args[uint64_t(i) * np + k]});
      ActionOutcome a = be.invoke(io.instance, e.name, vs);
      if (a.kind == ActionOutcome::Kind::Trap) out[i].trap = a.trap;
      for (const Value& v : a.results) out[i].results.push_back(v.bits);
    }
    return true;
  }

  void run_function(const std::string& where, const std::shared_ptr<const CompiledModule>& cm, const Export& e,
                    const FuncType& ft, const std::string& script, uint32_t index, const Engine& engine) {
    const uint32_t n = o_.n, np = uint32_t(ft.params.size()), nr = uint32_t(ft.results.size());
    // Rows depend on the seed and the function's identity only, so one
    // function's mismatch reproduces alone.
    std::seed_seq seq{uint32_t(o_.seed), uint32_t(o_.seed >> 32), uint32_t(index),
                      uint32_t(std::hash<std::string>{}(script + "\n" + e.name))};
    std::mt19937_64 rng(seq);
    std::vector<uint64_t> args(uint64_t(n) * np);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t k = 0; k < np; ++k) args[uint64_t(i) * np + k] = draw(rng, ft.params[k]);

    const BackendOptions bo = backend_options(cm->module);
    std::vector<Outcome> cpu(n);
    CpuBackend be(bo);
    for (uint32_t i = 0; i < n; ++i) {
      be.reset();
      InstantiateOutcome io = be.instantiate(cm);
      if (io.kind != InstantiateOutcome::Kind::Ok) {
        std::printf("ERROR %s: a fresh instantiation failed: %s\n", where.c_str(), io.message.c_str());
        ++t_.batch_errors;
        return;
      }
      std::vector<Value> vs;
      for (uint32_t k = 0; k < np; ++k) vs.push_back({ft.params[k], args[uint64_t(i) * np + k]});
      ActionOutcome a = be.invoke(io.instance, e.name, vs);
      if (a.kind == ActionOutcome::Kind::Trap) {
        cpu[i].trap = a.trap;
      } else if (a.kind == ActionOutcome::Kind::Ok) {
        for (const Value& v : a.results) cpu[i].results.push_back(v.bits);
      } else {
        std::printf("ERROR %s \"%s\": the CPU refused the call: %s\n", where.c_str(), e.name.c_str(),
                    a.message.c_str());
        ++t_.batch_errors;
        return;
      }
    }

    std::vector<Outcome> under_test(n);
    if (!o_.gpu) {
      if (!run_on_compiled_cpu(where, cm, e, ft, args, engine, under_test)) return;
    } else {
      be.reset();
      InstantiateOutcome io = be.instantiate(cm);
      if (io.kind != InstantiateOutcome::Kind::Ok) {
        std::printf("ERROR %s: a fresh instantiation failed: %s\n", where.c_str(), io.message.c_str());
        ++t_.batch_errors;
        return;
      }
      const InstanceRec& irec = be.store().impl().instances[io.instance];
      gpu::BatchRequest req;
      req.module = cm;
      req.func_index = e.index;
      req.instances = n;
      req.args = args;
      req.args_per_instance = true;
      req.fuel = o_.fuel;
      req.max_call_depth = o_.max_call_depth;
      req.stack_slots = o_.stack_slots;
      req.max_table_size = o_.max_table_size;
      if (!irec.memories.empty()) {
        // The store already caps the memory's maximum at the CPU's limit.
        req.memory_pages = be.store().impl().memories[irec.memories[0]].max_pages;
      }
      req.source_store = &be.store();
      req.source_instance = io.instance;
      req.write_back = false;
      req.launcher = engine.launcher;
      req.layout = o_.layout;
      auto r = gpu::run_batch(req);
      if (!r.ok()) {
        std::printf("ERROR %s \"%s\": GPU batch failed: %s\n", where.c_str(), e.name.c_str(),
                    r.error().message.c_str());
        ++t_.batch_errors;
        return;
      }
      for (uint32_t i = 0; i < n; ++i) {
        Outcome& g = under_test[i];
        g.trap = r->finished[i] ? TrapCode(r->traps[i]) : TrapCode::Timeout;
        if (g.trap == TrapCode::None)
          g.results.assign(r->results.begin() + uint64_t(i) * nr, r->results.begin() + uint64_t(i + 1) * nr);
      }
    }
    uint64_t mism = 0, nrun = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const Outcome& g = under_test[i];
      if (o_.gpu && g.trap == TrapCode::HostError && cpu[i].trap != TrapCode::HostError) {
        ++nrun;  // a call into a non-gpu import: the GPU cannot run it
        continue;
      }
      if (g == cpu[i]) continue;
      if (mism++ < o_.show) {
        std::string a;
        for (uint32_t k = 0; k < np; ++k) a += (k ? ", " : "") + show_bits(ft.params[k], args[uint64_t(i) * np + k]);
        std::printf("MISMATCH %s \"%s\"(%s) instance %u: cpu interpreter %s, %s %s\n", where.c_str(), e.name.c_str(),
                    a.c_str(), i, show_outcome(cpu[i], ft.results).c_str(), engine_name().c_str(),
                    show_outcome(g, ft.results).c_str());
      }
    }
    t_.instances += n - nrun;
    t_.mismatches += mism;
    t_.not_runnable += nrun;
    if (mism) ++t_.mismatched_functions;
    if (nrun) ++t_.not_runnable_functions;
    if (o_.verbose)
      std::printf("  \"%s\": %u instances, %llu mismatches, %llu not GPU-runnable\n", e.name.c_str(), n,
                  (unsigned long long)mism, (unsigned long long)nrun);
  }

  std::string engine_name() const {
    return std::string(o_.gpu ? "gpu" : "cpu") + (o_.compiled ? " compiled" : " interpreter");
  }

  const Options& o_;
  Totals t_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = parse_args(argc, argv, o)) return rc;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string why;
  if (o.gpu && !gpu_available(why)) {
    std::fprintf(stderr, "wasmwarp: no usable GPU: %s\n", why.c_str());
    return kExitSkip;
  }
  std::printf("ww-difftest: cpu interpreter vs %s %s; ", o.gpu ? "gpu" : "cpu",
              o.compiled ? "compiled code" : "interpreter");
  std::printf(
      "%u instances per function, seed %llu, fuel %llu, call depth %u, "
      "%u stack slots, memory growth cap +%u pages on both engines\n",
      o.n, (unsigned long long)o.seed, (unsigned long long)o.fuel, o.max_call_depth, o.stack_slots, kGrowRoom);
  DiffTest dt(o);
  for (const std::string& f : o.files) dt.run_file(f);
  const Totals& t = dt.totals();
  std::printf("\nmodules: %llu, skipped %llu (not instantiable with spectest alone)\n", (unsigned long long)t.modules,
              (unsigned long long)t.modules_skipped);
  for (const auto& [why_, c] : t.skip_reasons) std::printf("  skipped %llu: %s\n", (unsigned long long)c, why_.c_str());
  std::printf(
      "functions compared: %llu (%llu skipped), %llu with mismatches, %llu with "
      "not-GPU-runnable instances\n",
      (unsigned long long)t.functions, (unsigned long long)t.functions_skipped,
      (unsigned long long)t.mismatched_functions, (unsigned long long)t.not_runnable_functions);
  std::printf(
      "instances compared: %llu, mismatches: %llu, not GPU-runnable: %llu, GPU batch "
      "errors: %llu\n",
      (unsigned long long)t.instances, (unsigned long long)t.mismatches, (unsigned long long)t.not_runnable,
      (unsigned long long)t.batch_errors);
  return t.mismatches || t.batch_errors ? 1 : 0;
}
