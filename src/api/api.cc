// The public API (include/wasmwarp/wasmwarp.h) over the batch engine: a
// call is one batch::run of fresh instances.
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>

#include "api/internal.h"
#include "batch/resident.h"
#include "exec/gpu/gpu_backend.h"

namespace wasmwarp {

namespace api {

// The API's value types and the engine's, one row each.
constexpr std::pair<ValueType, ww::ValType> kTypes[] = {
    {ValueType::I32, ww::ValType::I32},
    {ValueType::I64, ww::ValType::I64},
    {ValueType::F32, ww::ValType::F32},
    {ValueType::F64, ww::ValType::F64},
    {ValueType::V128, ww::ValType::V128},
    {ValueType::FuncRef, ww::ValType::FuncRef},
    {ValueType::ExternRef, ww::ValType::ExternRef},
};

ValueType public_type(ww::ValType t) {
  for (const auto& [pub, own] : kTypes)
    if (own == t) return pub;
  return ValueType::I32;  // validated modules have no other types
}

ww::ValType internal_type(ValueType t) {
  for (const auto& [pub, own] : kTypes)
    if (pub == t) return own;
  return ww::ValType::I32;
}

FunctionType public_type(const ww::FuncType& f) {
  FunctionType t;
  for (ww::ValType v : f.params) t.params.push_back(public_type(v));
  for (ww::ValType v : f.results) t.results.push_back(public_type(v));
  return t;
}

ww::batch::Backend internal_backend(Backend b) {
  return b == Backend::Cpu   ? ww::batch::Backend::Cpu
         : b == Backend::Gpu ? ww::batch::Backend::Gpu
                             : ww::batch::Backend::Auto;
}

ww::batch::Tier internal_tier(Tier t) {
  return t == Tier::Interpreter ? ww::batch::Tier::Interp
         : t == Tier::Compiled  ? ww::batch::Tier::Compiled
                                : ww::batch::Tier::Auto;
}

ww::MemoryLayout internal_layout(MemoryLayout l) {
  switch (l) {
    case MemoryLayout::Interleaved: return ww::MemoryLayout::Interleaved;
    case MemoryLayout::Contiguous: return ww::MemoryLayout::Contiguous;
    case MemoryLayout::Sparse: return ww::MemoryLayout::Sparse;
    case MemoryLayout::Auto: break;
  }
  return ww::MemoryLayout::Auto;
}

MemoryLayout public_layout(ww::MemoryLayout l) {
  switch (l) {
    case ww::MemoryLayout::Interleaved: return MemoryLayout::Interleaved;
    case ww::MemoryLayout::Contiguous: return MemoryLayout::Contiguous;
    case ww::MemoryLayout::Sparse: return MemoryLayout::Sparse;
    case ww::MemoryLayout::Auto: break;
  }
  return MemoryLayout::Auto;
}

ww::GpuTuning internal_tuning(const GpuTuning& t) {
  ww::GpuTuning o;
  o.wave_slices = t.wave_slices;
  o.stream_stretches = t.stream_stretches;
  o.staging_piece_mib = t.staging_piece_mib;
  o.staging_pieces = t.staging_pieces;
  o.host_workers = t.host_workers;
  o.wave_loops_per_gpu = t.wave_loops_per_gpu;
  return o;
}

ww::UnknownImports internal_unknown_imports(UnknownImports u) {
  switch (u) {
    case UnknownImports::Trap: return ww::UnknownImports::Trap;
    case UnknownImports::Default: return ww::UnknownImports::Default;
    case UnknownImports::Error: break;
  }
  return ww::UnknownImports::Error;
}

}  // namespace api

namespace {
using namespace api;

template <class T>
std::vector<uint64_t> bits_of(std::span<const T> rows) {
  std::vector<uint64_t> b(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if constexpr (sizeof(T) == 4) {
      uint32_t u;
      std::memcpy(&u, &rows[i], 4);
      b[i] = u;
    } else {
      std::memcpy(&b[i], &rows[i], 8);
    }
  }
  return b;
}

// Arguments that fit the export's parameters, as the batch engine takes them.
// A scalar argument as the engine's value (a v128's bits are {lo, hi}).
ww::Value scalar_value(const Arg& a, ww::ValType type) {
  const std::vector<uint64_t>& b = a.bits();
  return ww::Value{type, b[0], type == ww::ValType::V128 && b.size() > 1 ? b[1] : 0};
}

Expected<std::vector<ww::batch::ArgSource>> arg_sources(const std::string& name, const ww::FuncType& type,
                                                        uint64_t instances, const std::vector<Arg>& args) {
  if (args.size() != type.params.size())
    return Error{"'" + name + "' takes " + std::to_string(type.params.size()) + " argument(s), given " +
                 std::to_string(args.size())};
  std::vector<ww::batch::ArgSource> out(args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    const Arg& a = args[k];
    const ww::ValType want = type.params[k];
    const std::string which = "argument " + std::to_string(k + 1) + " of '" + name + "'";
    if (a.kind() == Arg::Kind::Index) {
      if (want != ww::ValType::I32 && want != ww::ValType::I64 && want != ww::ValType::F32 && want != ww::ValType::F64)
        return Error{which + " is " + ww::valtype_name(want) + ", which an instance index cannot be"};
      out[k].kind = ww::batch::ArgSource::Index;
      continue;
    }
    if (internal_type(a.type()) != want)
      return Error{which + " is " + ww::valtype_name(want) + ", given " + type_name(a.type())};
    if (a.kind() == Arg::Kind::DeviceColumn) {
      if (!a.device_data()) return Error{which + " is a null device pointer"};
      out[k].kind = ww::batch::ArgSource::DeviceColumn;
      out[k].device = a.device_data();
      continue;
    }
    if (a.kind() == Arg::Kind::Scalar) {
      out[k].kind = ww::batch::ArgSource::Const;
      out[k].value = scalar_value(a, want);
      continue;
    }
    if (a.bits().size() < instances)
      return Error{which + " has " + std::to_string(a.bits().size()) + " rows for " + std::to_string(instances) +
                   " instances"};
    out[k].kind = ww::batch::ArgSource::Column;
    out[k].column = std::span<const uint64_t>(a.bits()).first(instances);
  }
  return out;
}

}  // namespace

const char* type_name(ValueType t) { return ww::valtype_name(internal_type(t)); }

std::string type_list(const std::vector<ValueType>& types) {
  std::vector<ww::ValType> own;
  for (ValueType t : types) own.push_back(internal_type(t));
  return ww::valtype_list(own);
}

std::string to_string(const FunctionType& t) {
  return "(" + type_list(t.params) + ") -> (" + type_list(t.results) + ")";
}

Arg Arg::i32(int32_t v) { return Arg(Kind::Scalar, ValueType::I32, {uint32_t(v)}); }
Arg Arg::i64(int64_t v) { return Arg(Kind::Scalar, ValueType::I64, {uint64_t(v)}); }
Arg Arg::f32(float v) { return Arg(Kind::Scalar, ValueType::F32, bits_of(std::span<const float>(&v, 1))); }
Arg Arg::f64(double v) { return Arg(Kind::Scalar, ValueType::F64, bits_of(std::span<const double>(&v, 1))); }
Arg Arg::column(std::span<const int32_t> rows) { return Arg(Kind::Column, ValueType::I32, bits_of(rows)); }
Arg Arg::column(std::span<const int64_t> rows) { return Arg(Kind::Column, ValueType::I64, bits_of(rows)); }
Arg Arg::column(std::span<const float> rows) { return Arg(Kind::Column, ValueType::F32, bits_of(rows)); }
Arg Arg::column(std::span<const double> rows) { return Arg(Kind::Column, ValueType::F64, bits_of(rows)); }
Arg Arg::index() { return Arg(Kind::Index, ValueType::I64, {}); }
Arg Arg::scalar_bits(ValueType type, uint64_t bits) { return Arg(Kind::Scalar, type, {bits}); }
Arg Arg::v128(uint64_t lo, uint64_t hi) { return Arg(Kind::Scalar, ValueType::V128, {lo, hi}); }
Arg Arg::column_bits(ValueType type, std::vector<uint64_t> rows) { return Arg(Kind::Column, type, std::move(rows)); }
Arg Arg::device_column(const void* device_data, ValueType type) {
  Arg a(Kind::DeviceColumn, type, {});
  a.device_ = device_data;
  return a;
}

namespace {
// Runs `spec` with the engine's and the call's options.
Expected<CallResult> run_batch(ww::batch::BatchSpec& spec, const EngineOptions& e, const CallOptions& o);
void apply_engine_options(ww::batch::BatchSpec& spec, const EngineOptions& e);
}  // namespace

namespace {

// A batch that calls `export_name` with `args` on `instances` instances,
// with the call's memory inputs and outputs.
Expected<ww::batch::BatchSpec> call_spec(const Module& m, const std::string& export_name, uint64_t instances,
                                         const std::vector<Arg>& args, const CallOptions& o) {
  const ww::CompiledModule& cm = *m.impl().cm;
  auto type = ww::batch::export_function_type(cm.module, export_name);
  if (!type.ok()) return Error{type.error().message};
  if (instances == 0) return Error{"a call needs at least one instance"};
  auto sources = arg_sources(export_name, *type, instances, args);
  if (!sources) return sources.error();

  ww::batch::BatchSpec spec;
  spec.module = m.impl().cm;
  spec.export_name = export_name;
  spec.instances = instances;
  spec.args = std::move(*sources);
  return spec;
}

}  // namespace

Expected<CallResult> Engine::call(const Module& m, const std::string& export_name, uint64_t instances,
                                  const std::vector<Arg>& args, const CallOptions& o) const {
  auto spec = call_spec(m, export_name, instances, args, o);
  if (!spec) return spec.error();
  return run_batch(*spec, options_, o);
}

namespace {

// A batch that runs `calls` one after another on the same instances.
Expected<ww::batch::BatchSpec> chain_spec(const Module& m, uint64_t instances, const std::vector<Call>& calls,
                                          const CallOptions& o) {
  if (calls.empty()) return Error{"a chain needs at least one call"};
  if (calls[0].repeat == 0) return Error{"call 1 of the chain ('" + calls[0].export_name + "') repeats 0 times"};
  auto spec = call_spec(m, calls[0].export_name, instances, calls[0].args, o);
  if (!spec) return spec.error();
  // The first call's repetitions after the first are calls of the chain.
  std::vector<Call> rest;
  if (calls[0].repeat > 1) rest.push_back({calls[0].export_name, calls[0].args, calls[0].repeat - 1});
  rest.insert(rest.end(), calls.begin() + 1, calls.end());
  for (size_t c = 0; c < rest.size(); ++c) {
    const Call& call = rest[c];
    const size_t number = c + (calls[0].repeat > 1 ? 1 : 2);  // the call's number in the chain as given
    if (call.repeat == 0)
      return Error{"call " + std::to_string(number) + " of the chain ('" + call.export_name + "') repeats 0 times"};
    for (const Arg& a : call.args)
      if (a.kind() == Arg::Kind::Column)
        return Error{"call " + std::to_string(number) + " of the chain ('" + call.export_name +
                     "'): arguments of a call after the first, or of a repeated call, are the same for every "
                     "instance (numbers or the instance index)"};
    auto type = ww::batch::export_function_type(m.impl().cm->module, call.export_name);
    if (!type.ok()) return Error{type.error().message};
    auto sources = arg_sources(call.export_name, *type, instances, call.args);
    if (!sources) return sources.error();
    spec->then.push_back({call.export_name, call.repeat, std::move(*sources)});
  }
  spec->gpu.launch_per_call = o.gpu_launch_per_call;
  return spec;
}

}  // namespace

Expected<CallResult> Engine::chain(const Module& m, uint64_t instances, const std::vector<Call>& calls,
                                   const CallOptions& o) const {
  auto spec = chain_spec(m, instances, calls, o);
  if (!spec) return spec.error();
  return run_batch(*spec, options_, o);
}

struct Instances::Impl {
  Module module;
  EngineOptions options;
  ww::batch::Resident resident;
  // One call at a time: the instances are one state.
  std::mutex mu;
  Impl(Module m, EngineOptions o, uint64_t n) : module(std::move(m)), options(std::move(o)), resident(n) {}
};

Expected<Instances> Engine::instances(const Module& m, uint64_t n) const {
  if (n == 0) return Error{"resident instances: at least one"};
  auto impl = std::make_shared<Instances::Impl>(m, options_, n);
  ww::batch::BatchSpec spec;
  spec.module = m.impl().cm;
  spec.instances = n;
  apply_engine_options(spec, options_);
  if (auto s = ww::batch::start_resident(spec, impl->resident); !s.ok()) return Error{s.error().to_string()};
  return Instances(std::move(impl));
}

uint64_t Instances::count() const { return impl_->resident.instances(); }
Backend Instances::backend() const {
  return impl_->resident.backend() == ww::batch::Backend::Gpu ? Backend::Gpu : Backend::Cpu;
}

Expected<CallResult> Instances::call(const std::string& export_name, const std::vector<Arg>& args,
                                     const CallOptions& o) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto spec = call_spec(impl_->module, export_name, count(), args, o);
  if (!spec) return spec.error();
  spec->resident = &impl_->resident;
  return run_batch(*spec, impl_->options, o);
}

Expected<CallResult> Instances::chain(const std::vector<Call>& calls, const CallOptions& o) {
  std::lock_guard<std::mutex> g(impl_->mu);
  auto spec = chain_spec(impl_->module, count(), calls, o);
  if (!spec) return spec.error();
  spec->resident = &impl_->resident;
  return run_batch(*spec, impl_->options, o);
}

Expected<std::vector<uint8_t>> Instances::read_memory(uint64_t address, uint64_t length) const {
  std::lock_guard<std::mutex> g(impl_->mu);
  if (length != 0 && count() > (uint64_t(1) << 62) / length) return Error{"read_memory: too many bytes"};
  std::vector<uint8_t> out(count() * length);
  if (auto s = impl_->resident.read_memory(address, length, out.data()); !s.ok()) return Error{s.error().message};
  return out;
}

Expected<uint64_t> Instances::write_memory(uint64_t address, uint64_t record_size, std::span<const uint8_t> bytes) {
  std::lock_guard<std::mutex> g(impl_->mu);
  if (record_size != 0 && bytes.size() / record_size < count())
    return Error{"write_memory: " + std::to_string(record_size ? bytes.size() / record_size : 0) + " records for " +
                 std::to_string(count()) + " instances"};
  if (auto s = impl_->resident.write_memory(address, record_size, bytes.data()); !s.ok())
    return Error{s.error().message};
  return record_size * count();
}

Expected<CallResult> Engine::run_command(const Module& m, uint64_t instances, const WasiOptions& w,
                                         const CallOptions& o) const {
  if (instances == 0) return Error{"a call needs at least one instance"};
  if (!o.memory_in.empty() || !o.memory_out.empty() || !o.init.empty())
    return Error{"memory inputs and outputs and init calls are for exports called with values, not WASI programs"};
  if (w.process_stdio) {
    if (instances != 1) return Error{"a WASI program on the process's stdio runs as one instance"};
    return api::run_on_process_stdio(m, w, options_, o);
  }
  auto wasi = std::make_shared<ww::batch::WasiBatch>();
  wasi->config.args.push_back(w.program);
  wasi->config.args.insert(wasi->config.args.end(), w.args.begin(), w.args.end());
  for (const std::string& e : w.env) {
    if (e.find('=') == std::string::npos || e[0] == '=') return Error{"environment '" + e + "': expected NAME=VALUE"};
    wasi->config.env.push_back(e);
  }
  for (const WasiOptions::Dir& d : w.dirs) {
    if (d.writable && instances > 1 && d.host.find("{i}") == std::string::npos)
      return Error{"writable directory '" + d.host + "': a batch's needs {i} in its host path (one per instance)"};
    wasi->config.preopens.push_back({d.host, d.guest.empty() ? d.host : d.guest, d.writable});
  }
  wasi->argv0 = w.program;
  wasi->args = w.args;
  wasi->stdin_pattern = w.stdin_pattern;
  wasi->stdout_pattern = w.stdout_pattern;
  wasi->stderr_pattern = w.stderr_pattern;
  wasi->seed = w.seed;
  wasi->output_cap = w.output_cap;
  ww::batch::BatchSpec spec;
  spec.module = m.impl().cm;
  spec.wasi = std::move(wasi);
  spec.export_name = "_start";
  spec.instances = instances;
  return run_batch(spec, options_, o);
}

namespace {

// A memory input's or output's address: the number, or an export the
// engine reads per instance (a () -> i32 function or an i32 global).
Expected<ww::batch::Address> address_of(const ww::Module& m, uint64_t address, const std::string& export_name) {
  ww::batch::Address a;
  a.addr = address;
  if (export_name.empty()) return a;
  for (const ww::Export& e : m.exports) {
    if (e.name != export_name) continue;
    const std::string what = "memory address export '" + export_name + "'";
    if (e.kind == ww::ExternKind::Func) {
      const ww::FuncType& t = m.func_type(e.index);
      if (!t.params.empty() || t.results.size() != 1 || t.results[0] != ww::ValType::I32)
        return Error{what + " has type " + ww::functype_to_string(t) + ", need () -> (i32)"};
    } else if (e.kind == ww::ExternKind::Global) {
      if (m.global_type(e.index).type != ww::ValType::I32) return Error{what + " is not an i32 global"};
      a.is_global = true;
    } else {
      return Error{what + " is a " + ww::extern_kind_name(e.kind) + ", need a function or global"};
    }
    a.export_name = export_name;
    return a;
  }
  return Error{"memory address '" + export_name + "' is neither a number nor an export of the module"};
}

// The call's memory inputs and outputs, init calls, intrinsics and files.
Expected<bool> apply_call_inputs(ww::batch::BatchSpec& spec, const CallOptions& o,
                                 ww::intrinsics::GpuBatch* intrinsics) {
  const ww::Module& m = spec.module->module;
  const uint64_t n = spec.instances;
  spec.index_base = o.first_index;
  spec.total_instances = o.total_instances;
  if ((!o.memory_in.empty() || !o.memory_out.empty()) && m.num_memories() == 0)
    return Error{"memory inputs and outputs need a module with a memory"};
  for (const MemoryIn& mi : o.memory_in) {
    if (mi.record_size == 0 || mi.bytes.size() / mi.record_size < n)
      return Error{"memory input at " + (mi.address_export.empty() ? std::to_string(mi.address) : mi.address_export) +
                   " holds " + std::to_string(mi.record_size ? mi.bytes.size() / mi.record_size : 0) + " records for " +
                   std::to_string(n) + " instances"};
    ww::batch::MemInput in;
    auto addr = address_of(m, mi.address, mi.address_export);
    if (!addr) return addr.error();
    in.addr = std::move(*addr);
    in.record = mi.record_size;
    in.bytes = mi.bytes.first(mi.record_size * n);
    spec.mem_in.push_back(std::move(in));
  }
  for (const MemoryOut& mo : o.memory_out) {
    if (mo.length == 0) return Error{"a memory output needs a length of at least 1"};
    if (mo.length > (uint64_t(1) << 32) || n > (uint64_t(1) << 40) / mo.length)
      return Error{"memory output: " + std::to_string(n) + " x " + std::to_string(mo.length) +
                   " bytes is too much output"};
    auto addr = address_of(m, mo.address, mo.address_export);
    if (!addr) return addr.error();
    spec.mem_out.push_back({std::move(*addr), mo.length});
  }
  for (const Call& c : o.init) {
    auto type = ww::batch::export_function_type(m, c.export_name);
    if (!type.ok()) return Error{"init call: " + type.error().message};
    if (c.repeat == 0) return Error{"init call '" + c.export_name + "' repeats 0 times"};
    if (c.args.size() != type->params.size())
      return Error{"init call '" + c.export_name + "' takes " + std::to_string(type->params.size()) +
                   " argument(s), given " + std::to_string(c.args.size())};
    ww::batch::BatchSpec::InitCall call{c.export_name, {}};
    for (size_t k = 0; k < c.args.size(); ++k) {
      if (c.args[k].kind() != Arg::Kind::Scalar || internal_type(c.args[k].type()) != type->params[k])
        return Error{"init call '" + c.export_name + "': argument " + std::to_string(k + 1) + " must be a " +
                     ww::valtype_name(type->params[k]) + " scalar"};
      call.args.push_back(scalar_value(c.args[k], type->params[k]));
    }
    for (uint64_t r = 0; r < c.repeat; ++r) spec.init_calls.push_back(call);
  }
  if (!o.dirs.empty() && !spec.wasi) {
    auto files = std::make_shared<ww::batch::WasiBatch>();
    for (const WasiOptions::Dir& d : o.dirs) {
      if (d.writable && n > 1 && d.host.find("{i}") == std::string::npos)
        return Error{"writable directory '" + d.host + "': a batch's needs {i} in its host path (one per instance)"};
      files->config.preopens.push_back({d.host, d.guest.empty() ? d.host : d.guest, d.writable});
    }
    spec.files = std::move(files);
  }
  const GpuIntrinsics& g = o.intrinsics;
  intrinsics->instance_count = uint32_t(std::min<uint64_t>(spec.total(), 0xffffffffu));
  if (g.image_width || g.image_height) {
    if (!g.image_width || !g.image_height || g.image_width > 65535 || g.image_height > 65535 ||
        uint64_t(g.image_width) * g.image_height > (uint64_t(1) << 26))
      return Error{"image size " + std::to_string(g.image_width) + "x" + std::to_string(g.image_height) +
                   ": each side 1..65535 and at most 2^26 pixels"};
    intrinsics->set_image_size(g.image_width, g.image_height);
  }
  if (g.state.size() > (uint64_t(1) << 31)) return Error{"the intrinsics' state must be below 2^31 entries"};
  intrinsics->state = g.state;
  for (const GpuIntrinsics::Texture& t : g.textures) {
    ww::Status s = intrinsics->bind_texture(int32_t(std::min<uint32_t>(t.unit, 1u << 30)),
                                            ww::intrinsics::Image{t.image.width, t.image.height, t.image.rgba});
    if (!s.ok()) return Error{s.error().message};
  }
  intrinsics->filter = g.bilinear ? ww::gpu::TextureFilter::Bilinear : ww::gpu::TextureFilter::Nearest;
  spec.intrinsics = intrinsics;
  return true;
}

// Per-instance results stay in host memory until the call returns: a call
// the machine cannot hold is refused up front rather than dying midway.
Expected<bool> check_host_memory(const ww::batch::BatchSpec& spec) {
  uint64_t per_instance = 1 + 8 * 4;
  for (const ww::batch::MemOutput& mo : spec.mem_out) per_instance += mo.length;
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && spec.instances > uint64_t(pages) * uint64_t(page_size) / per_instance)
    return Error{std::to_string(spec.instances) + " instances need " +
                 std::to_string(spec.instances / (1u << 20) * per_instance) +
                 " MiB for their results, more than this machine's memory"};
  return true;
}

void apply_engine_options(ww::batch::BatchSpec& spec, const EngineOptions& e) {
  spec.host_functions.clear();
  for (const HostFunction& h : e.host_functions) {
    ww::batch::HostFunction f;
    f.module = h.module;
    f.field = h.name;
    for (ValueType t : h.type.params) f.type.params.push_back(internal_type(t));
    for (ValueType t : h.type.results) f.type.results.push_back(internal_type(t));
    const size_t np = h.type.params.size(), nr = h.type.results.size();
    f.fn = [fn = h.fn, np, nr](uint64_t instance, uint64_t* io) {
      // The arguments are copied out: the results go where they were.
      uint64_t args[16];
      std::vector<uint64_t> many;
      uint64_t* a = args;
      if (np > 16) {
        many.assign(io, io + np);
        a = many.data();
      } else {
        std::copy(io, io + np, args);
      }
      return fn(instance, std::span<const uint64_t>(a, np), std::span<uint64_t>(io, nr)) ? ww::TrapCode::None
                                                                                         : ww::TrapCode::HostError;
    };
    spec.host_functions.push_back(std::move(f));
  }
  spec.unknown_imports = internal_unknown_imports(e.unknown_imports);
  spec.threads = e.threads;
  spec.backend = internal_backend(e.backend);
  spec.tier = internal_tier(e.tier);
  spec.compile_wait_s = e.compile_wait_s;
  spec.cache.enabled = e.cache;
  spec.cache.dir = e.cache_dir;
  spec.gpu.layout = internal_layout(e.gpu.layout);
  if (e.gpu.stack_slots_limit) spec.gpu.stack_slots_limit = e.gpu.stack_slots_limit;
  if (e.gpu.call_depth_limit) spec.gpu.call_depth_limit = e.gpu.call_depth_limit;
  spec.gpu.memory_pages = e.gpu.memory_pages;
  spec.gpu.max_wave = e.gpu.max_wave;
  spec.gpu.devices = e.gpu.devices;
  spec.gpu.max_devices = e.gpu.max_devices;
  spec.gpu.tuning = internal_tuning(e.gpu.tuning);
  spec.gpu.memory_share = e.gpu.memory_share;
}

// EngineOptions that no call can run with.
Expected<bool> check_engine_options(const EngineOptions& e) {
  for (int d : e.gpu.devices)
    if (d < 0) return Error{"GPU numbers are 0 or more, not " + std::to_string(d)};
  if (ww::Status s = internal_tuning(e.gpu.tuning).check(); !s.ok()) return Error{s.error().message};
  if (!(e.gpu.memory_share > 0 && e.gpu.memory_share <= 1))
    return Error{"the GPU memory share is in (0, 1], not " + std::to_string(e.gpu.memory_share)};
  return true;
}

// Result columns on the GPU (CallOptions::results_on_device).
Expected<std::vector<std::shared_ptr<void>>> device_results(ww::batch::BatchSpec& spec, const EngineOptions& e) {
  const char* need = "results on the device need the GPU backend";
  if (e.backend == Backend::Cpu && !spec.resident) return Error{std::string(need) + "; this call runs on the CPU"};
  if (const ww::gpu::DeviceInfo d = ww::gpu::probe_device(); !d.available)
    return Error{std::string(need) + ": " + d.reason};
  auto type = ww::batch::export_function_type(spec.module->module,
                                              spec.then.empty() ? spec.export_name : spec.then.back().export_name);
  if (!type.ok()) return Error{type.error().message};
  std::vector<std::shared_ptr<void>> device;
  for (ww::ValType t : type->results) {
    auto buf = ww::gpu::device_buffer(spec.instances * ww::batch::column_width(t));
    if (!buf.ok()) return Error{"results on the device: " + buf.error().message};
    spec.device_results.push_back(buf->get());
    device.push_back(std::move(*buf));
  }
  return device;
}

Expected<CallResult> run_batch_unguarded(ww::batch::BatchSpec& spec, const EngineOptions& e, const CallOptions& o) {
  if (auto ok = check_engine_options(e); !ok) return ok.error();
  spec.fuel = o.fuel;
  spec.timeout_s = o.timeout_s;
  apply_engine_options(spec, e);
  spec.cancel = o.cancel;
  if (o.progress) spec.progress = [p = o.progress](uint64_t done, uint64_t total, double) { p(done, total); };
  if (o.note) spec.note = o.note;
  if (o.on_ready) {
    // The columns are sized before the first report and never move; the
    // views are made once, whichever of the engine's threads reports first.
    struct Views {
      std::once_flag once;
      ResultColumns columns;
    };
    spec.on_ready = [f = o.on_ready, views = std::make_shared<Views>()](const ww::batch::BatchResult& r,
                                                                        uint64_t ready) {
      std::call_once(views->once, [&] { views->columns = columns_of(r); });
      f(views->columns, ready);
    };
  }
  auto intrinsics = std::make_unique<ww::intrinsics::GpuBatch>();
  if (auto ok = apply_call_inputs(spec, o, intrinsics.get()); !ok) return ok.error();
  if (auto ok = check_host_memory(spec); !ok) return ok.error();

  std::vector<std::shared_ptr<void>> device;
  if (o.results_on_device) {
    auto d = device_results(spec, e);
    if (!d) return d.error();
    device = std::move(*d);
  }
  auto r = ww::batch::run(spec);
  if (!r.ok()) return Error{r.error().to_string()};
  auto impl = std::make_shared<CallResult::Impl>();
  impl->r = std::move(*r);
  impl->module = spec.module;
  impl->device = std::move(device);
  for (ww::ValType t : impl->r.type.results) impl->types.push_back(public_type(t));
  impl->backend = public_backend(impl->r.backend);
  impl->report = report_of(impl->r);
  if (intrinsics->image) {
    const ww::intrinsics::Image img = intrinsics->image->to_image();
    impl->image = std::make_unique<Image>(Image{img.width, img.height, img.rgba});
  }
  impl->intrinsics = std::move(intrinsics);
  return CallResult(std::move(impl));
}

// Sizes come from the caller (instances, memory output lengths): an
// allocation that cannot be met is an error value, not a crash.
Expected<CallResult> run_batch(ww::batch::BatchSpec& spec, const EngineOptions& e, const CallOptions& o) {
  try {
    return run_batch_unguarded(spec, e, o);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return Error{"out of memory (for " + std::to_string(spec.instances) + " instances)"};
}

}  // namespace

}  // namespace wasmwarp
