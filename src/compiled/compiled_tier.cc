#include "compiled/compiled_tier.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "codegen/embedded.h"
#include "codegen/generator.h"
#include "codegen/rt/cpu_abi.h"
#include "common/build_id.h"
#include "common/step_trace.h"
#include "compiled/cpu_native.h"
#include "compiled/host_compiler.h"
#include "exec/gpu/gpu_backend.h"

namespace ww::compiled {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

codegen::Options codegen_options(const Request& req) {
  codegen::Options o;
  o.target = req.target == Target::Gpu ? codegen::Target::Gpu : codegen::Target::Cpu;
  o.entries = req.entries;
  o.functions = req.functions;
  o.metered = req.metered;
  o.deadline = req.deadline;
  o.layout = req.layout;
  o.sparse_misses = req.sparse_misses;
  return o;
}

// The translation unit and the cache key of everything that decides the
// bytes the compiler makes of it.
struct Prepared {
  codegen::Generated gen;
  std::vector<std::string> units;  // self-contained
  std::string key;
  // GPU
  int cc_major = 0, cc_minor = 0;
};

Result<Prepared> prepare_cpu(const Request& req, Outcome* out) {
  auto t = Clock::now();
  Prepared p;
  codegen::Options o = codegen_options(req);
  // A fixed cap, not the core count: the units, and so the cache key, are
  // the same on every machine.
  o.max_units = 64;
  WW_ASSIGN_OR_RETURN(p.gen, codegen::generate(*req.module, o));
  for (const std::string& u : p.gen.units) {
    WW_ASSIGN_OR_RETURN(std::string unit, codegen::amalgamate(u, codegen::Toolchain::HostCxx));
    p.units.push_back(std::move(unit));
  }
  WW_ASSIGN_OR_RETURN(HostCompiler cc, find_host_compiler());
  const std::string abi = std::to_string(rt::kCpuAbiVersion);
  std::vector<std::string_view> parts{"cpu", abi, cc.identity, host_compile_flags_key()};
  if (req.quick) parts.push_back("-O1");
  for (const std::string& u : p.units) parts.push_back(u);
  p.key = cache_key(parts);
  if (out) {
    out->generate_ms = ms_since(t);
    out->key = p.key;
    for (const std::string& u : p.units) out->source_bytes += u.size();
  }
  return p;
}

Result<Prepared> prepare_gpu(const Request& req, Outcome* out) {
  auto t = Clock::now();
  StepTrace trace("compile");
  Prepared p;
  if (req.gpu_arch) {
    p.cc_major = req.gpu_arch / 10;
    p.cc_minor = req.gpu_arch % 10;
  } else {
    gpu::DeviceInfo dev = gpu::probe_device();
    if (!dev.available) return make_error(kNoOffset, dev.reason);
    p.cc_major = dev.cc_major;
    p.cc_minor = dev.cc_minor;
  }
  trace("gpu: device");
  WW_ASSIGN_OR_RETURN(std::string nvrtc, gpu::nvrtc_version());
  trace("gpu: nvrtc version");
  codegen::Options o = codegen_options(req);
  o.max_units = 64;  // fixed, as for the CPU: the same key on every machine
  WW_ASSIGN_OR_RETURN(p.gen, codegen::generate(*req.module, o));
  trace("gpu: generate");
  for (const std::string& u : p.gen.units) {
    WW_ASSIGN_OR_RETURN(std::string unit, codegen::amalgamate(u, codegen::Toolchain::Nvrtc));
    p.units.push_back(std::move(unit));
  }
  std::string arch = std::to_string(p.cc_major * 10 + p.cc_minor);
  std::string opts;
  for (const std::string& o : gpu::nvrtc_options(p.cc_major, p.cc_minor)) opts += o + " ";
  std::vector<std::string_view> parts{"gpu", nvrtc, arch, opts};
  for (const std::string& u : p.units) parts.push_back(u);
  p.key = cache_key(parts);
  trace("gpu: amalgamate, key");
  if (out) {
    out->generate_ms = ms_since(t);
    out->key = p.key;
    for (const std::string& u : p.units) out->source_bytes += u.size();
  }
  return p;
}

// The last few requests' prepared sources: a batch asks whether the cache
// holds its code, perhaps again for every export, then loads it, and
// without the memo each of those would generate the module's source anew
// to key it. Entries hold their module, so a module's address is never
// another's while it is here.
class PreparedMemo {
 public:
  template <class PrepareFn>
  Result<std::shared_ptr<const Prepared>> get(const Request& req, PrepareFn&& prepare) {
    {
      std::lock_guard<std::mutex> g(mu_);
      for (const Entry& e : entries_)
        if (same(e.req, req)) return e.prepared;
    }
    WW_ASSIGN_OR_RETURN(Prepared p, prepare(req));
    auto shared = std::make_shared<const Prepared>(std::move(p));
    std::lock_guard<std::mutex> g(mu_);
    if (entries_.size() == kEntries) entries_.erase(entries_.begin());
    entries_.push_back({req, shared});
    return shared;
  }

 private:
  static constexpr size_t kEntries = 4;
  struct Entry {
    Request req;
    std::shared_ptr<const Prepared> prepared;
  };
  // Everything prepare_* reads from a request.
  static bool same(const Request& a, const Request& b) {
    return a.module == b.module && a.entries == b.entries && a.functions == b.functions && a.quick == b.quick &&
           a.target == b.target && a.metered == b.metered && a.deadline == b.deadline && a.layout == b.layout &&
           a.sparse_misses == b.sparse_misses && a.gpu_arch == b.gpu_arch;
  }
  std::mutex mu_;
  std::vector<Entry> entries_;
};

Result<std::shared_ptr<const Prepared>> prepared(const Request& req, Outcome* out) {
  static PreparedMemo memo;
  auto t = Clock::now();
  bool fresh = false;
  auto p = memo.get(req, [&](const Request& r) {
    fresh = true;
    return r.target == Target::Gpu ? prepare_gpu(r, out) : prepare_cpu(r, out);
  });
  if (p.ok() && out && !fresh) {
    out->generate_ms = ms_since(t);
    out->key = (*p)->key;
    for (const std::string& u : (*p)->units) out->source_bytes += u.size();
  }
  return p;
}

// The compiles under way in this process, by key: a request for code that
// another thread is compiling waits for its bytes instead of compiling it
// again (a library caller's batch that runs a module again while the auto
// tier still compiles it in the background started a second NVRTC).
class CompilesUnderWay {
 public:
  struct Compile {
    bool done = false;
    std::optional<std::vector<uint8_t>> bytes;  // none: it failed
  };
  // The compile of `key` to wait for, or null: the caller compiles it and
  // must finish() it.
  std::shared_ptr<Compile> join(const std::string& key) {
    std::lock_guard<std::mutex> g(mu_);
    auto [it, fresh] = compiles_.try_emplace(key);
    if (fresh) {
      it->second = std::make_shared<Compile>();
      return nullptr;
    }
    return it->second;
  }
  // Its bytes, or none when it failed (a waiter then compiles itself).
  std::optional<std::vector<uint8_t>> wait(Compile& c) {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [&] { return c.done; });
    return c.bytes;
  }
  void finish(const std::string& key, const Result<std::vector<uint8_t>>& r) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = compiles_.find(key);
    if (it == compiles_.end()) return;
    it->second->done = true;
    if (r.ok()) it->second->bytes = *r;
    compiles_.erase(it);
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Compile>> compiles_;
};

CompilesUnderWay& compiles_under_way() {
  static CompilesUnderWay* c = new CompilesUnderWay;  // never destroyed: a compile may outlive main()
  return *c;
}

// The cached bytes for the key, or freshly compiled ones (then cached;
// trouble with the cache is a note, not a failure), or those of the same
// compile under way in another thread.
template <class CompileFn>
Result<std::vector<uint8_t>> cached_or_compiled(const CacheOptions& copts, const std::string& key, Outcome* out,
                                                CompileFn&& compile) {
  CodeCache cache(copts);
  std::string note;
  if (auto hit = cache.get(key, &note)) {
    if (out) out->cache_hit = true;
    return std::move(*hit);
  }
  if (out && !note.empty()) out->cache_note = note;
  auto t = Clock::now();
  CompilesUnderWay& under_way = compiles_under_way();
  for (;;) {
    std::shared_ptr<CompilesUnderWay::Compile> other = under_way.join(key);
    if (!other) break;
    if (std::optional<std::vector<uint8_t>> bytes = under_way.wait(*other)) {
      if (out) out->compile_ms = ms_since(t);
      // The other compile's cache may not be this one's.
      if (cache.enabled() && !cache.contains(key)) (void)cache.put(key, *bytes);
      return std::move(*bytes);
    }
  }
  Result<std::vector<uint8_t>> bytes = compile();
  under_way.finish(key, bytes);
  if (!bytes.ok()) return bytes.error();
  if (out) out->compile_ms = ms_since(t);
  if (cache.enabled()) {
    Status s = cache.put(key, *bytes);
    if (!s.ok() && out) out->cache_note = s.error().message + " (compiled code not cached)";
  }
  return bytes;
}

// A cache hit without generating the source, which would be a visible part
// of every compiled batch's wall time (bench/gpu/run.sh's cached compile
// times show it): an index entry, keyed by what the source is made of
// (this build of wasmwarp, the module's bytes, the request, the compiler),
// names the entry keyed by the source and holds what loading needs besides
// the code.
struct IndexEntry {
  std::string key;
  bool recursive = false;
  uint64_t leave_words = 0;
};

// "" without a build-id or a cache (then there is no index).
Result<std::string> index_key(const Request& req) {
  if (build_id().empty() || !req.cache.enabled) return std::string();
  std::string compiler;
  if (req.target == Target::Gpu) {
    int arch = req.gpu_arch;
    if (!arch) {
      gpu::DeviceInfo dev = gpu::probe_device();
      if (!dev.available) return make_error(kNoOffset, dev.reason);
      arch = dev.cc_major * 10 + dev.cc_minor;
    }
    WW_ASSIGN_OR_RETURN(std::string nvrtc, gpu::nvrtc_version());
    compiler = "gpu " + nvrtc + " sm_" + std::to_string(arch);
  } else {
    WW_ASSIGN_OR_RETURN(HostCompiler cc, find_host_compiler());
    compiler = "cpu " + cc.identity + " " + host_compile_flags_key();
  }
  // The memory layout and the sparse misses shape GPU code only: a CPU
  // request names the same code whatever they say (a batch's and
  // `wasmwarp compile`'s requests differ there).
  const bool gpu = req.target == Target::Gpu;
  std::string request = std::to_string(int(req.metered)) + std::to_string(int(req.deadline)) +
                        std::to_string(gpu ? int(req.layout) : 0) + std::to_string(gpu ? int(req.sparse_misses) : 0) +
                        " entries";
  for (uint32_t e : req.entries) request += " " + std::to_string(e);
  if (req.quick) request += " quick";
  if (!req.functions.empty()) request += " functions";
  for (uint32_t f : req.functions) request += " " + std::to_string(f);
  const std::vector<uint8_t>& bytes = req.module->module.bytes;
  return cache_key({"index", build_id(), compiler, request,
                    std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
}

std::optional<IndexEntry> read_index(const Request& req, const std::string& ikey) {
  if (ikey.empty()) return std::nullopt;
  std::string note;
  auto payload = CodeCache(req.cache).get(ikey, &note);
  if (!payload) return std::nullopt;
  IndexEntry e;
  const std::string text(payload->begin(), payload->end());
  char key[64] = {};
  int recursive = 0;
  unsigned long long leave = 0;
  if (std::sscanf(text.c_str(), "%63s %d %llu", key, &recursive, &leave) != 3) return std::nullopt;
  e.key = key;
  e.recursive = recursive != 0;
  e.leave_words = leave;
  return e;
}

// The code the index names, when the cache holds both (`out` then says it
// was a hit).
struct IndexedCode {
  IndexEntry entry;
  std::vector<uint8_t> bytes;
};
std::optional<IndexedCode> indexed_code(const Request& req, const std::string& ikey, Outcome* out) {
  auto e = read_index(req, ikey);
  if (!e) return std::nullopt;
  std::string note;
  auto bytes = CodeCache(req.cache).get(e->key, &note);
  if (!bytes) return std::nullopt;
  if (out) {
    out->cache_hit = true;
    out->key = e->key;
  }
  return IndexedCode{std::move(*e), std::move(*bytes)};
}

void write_index(const Request& req, const std::string& ikey, const Prepared& p) {
  if (ikey.empty()) return;
  const std::string text = p.key + " " + std::to_string(int(p.gen.recursive)) + " " + std::to_string(p.gen.leave_words);
  // Without it the next batch only generates the source again.
  (void)CodeCache(req.cache).put(ikey, std::vector<uint8_t>(text.begin(), text.end()));
}

}  // namespace

std::vector<uint32_t> mixed_split(const CompiledModule& cm, uint64_t seed) {
  std::vector<uint32_t> out;
  const uint32_t ndef = uint32_t(cm.module.funcs.size());
  for (uint32_t def = 0; def < ndef; ++def) {
    // splitmix64 of the seed and the function: neighbours land apart.
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + def + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    if (((z ^ (z >> 31)) & 1) != 0) out.push_back(def);
  }
  return out;
}

Result<std::vector<std::string>> translation_units(const Request& req) {
  WW_ASSIGN_OR_RETURN(auto p, prepared(req, nullptr));
  return p->units;
}

bool cached(const Request& req) {
  if (!req.cache.enabled) return false;
  // An index that names code the cache lacks leaves the answer to the source.
  if (cached_by_index(req)) return true;
  auto p = prepared(req, nullptr);
  return p.ok() && CodeCache(req.cache).contains((*p)->key);
}

bool cached_by_index(const Request& req) {
  if (!req.cache.enabled) return false;
  auto ik = index_key(req);
  if (!ik.ok()) return false;
  auto e = read_index(req, *ik);
  return e && CodeCache(req.cache).contains(e->key);
}

Result<std::shared_ptr<const NativeCode>> compile_cpu(const Request& req, Outcome* out) {
  WW_ASSIGN_OR_RETURN(std::string ikey, index_key(req));
  std::vector<uint8_t> so;
  if (auto hit = indexed_code(req, ikey, out)) {
    so = std::move(hit->bytes);
  } else {
    WW_ASSIGN_OR_RETURN(auto shared, prepared(req, out));
    const Prepared& p = *shared;
    WW_ASSIGN_OR_RETURN(HostCompiler cc, find_host_compiler());
    WW_ASSIGN_OR_RETURN(
        so, cached_or_compiled(req.cache, p.key, out, [&] { return compile_shared_object(cc, p.units, req.quick); }));
    write_index(req, ikey, p);
  }
  if (!req.load) return std::shared_ptr<const NativeCode>();
  auto t = Clock::now();
  auto native = load_cpu_native(so, req.metered, uint32_t(req.module->module.funcs.size()));
  if (out) out->load_ms = ms_since(t);
  return native;
}

Result<std::shared_ptr<gpu::KernelLauncher>> compile_gpu(const Request& req, Outcome* out) {
  StepTrace trace("compile");
  WW_ASSIGN_OR_RETURN(std::string ikey, index_key(req));
  std::vector<uint8_t> cubin;
  IndexEntry code;  // what loading needs besides the CUBIN
  if (auto hit = indexed_code(req, ikey, out)) {
    cubin = std::move(hit->bytes);
    code = std::move(hit->entry);
    trace("gpu: index, cache");
  } else {
    WW_ASSIGN_OR_RETURN(auto shared, prepared(req, out));
    const Prepared& p = *shared;
    WW_ASSIGN_OR_RETURN(cubin, cached_or_compiled(req.cache, p.key, out, [&] {
                          return gpu::nvrtc_compile(p.units, "wasmwarp_module.cu", p.cc_major, p.cc_minor);
                        }));
    write_index(req, ikey, p);
    code = {p.key, p.gen.recursive, p.gen.leave_words};
    trace("gpu: cache or nvrtc");
  }
  if (!req.load) return std::shared_ptr<gpu::KernelLauncher>();
  auto t = Clock::now();
  auto launcher = gpu::load_compiled_kernel(cubin, codegen::kGpuKernelName, code.recursive, code.leave_words,
                                            req.load_in_background);
  if (out) out->load_ms = ms_since(t);
  trace("gpu: load module");
  return launcher;
}

}  // namespace ww::compiled
