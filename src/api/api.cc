// The public API (include/wasmwarp/wasmwarp.h) over the batch engine: a
// call is one batch::run of fresh instances.
#include <cstring>
#include <utility>

#include <mutex>

#include "batch/batch.h"
#include "batch/resident.h"
#include "runtime/runtime.h"
#include "wasmwarp/wasmwarp.h"

namespace wasmwarp {

struct Module::Impl {
  std::shared_ptr<const ww::CompiledModule> cm;
  std::vector<Export> exports;
  std::vector<Import> imports;
  static Module make(std::shared_ptr<const Impl> impl) { return Module(std::move(impl)); }
};

struct CallResult::Impl {
  ww::batch::BatchResult r;
  std::vector<std::shared_ptr<void>> device;  // results_on_device's columns
  std::vector<ValueType> types;
  Backend backend = Backend::Cpu;
};

namespace {

// The API's value types and the engine's, one row each.
constexpr std::pair<ValueType, ww::ValType> kTypes[] = {
    {ValueType::I32, ww::ValType::I32},         {ValueType::I64, ww::ValType::I64},
    {ValueType::F32, ww::ValType::F32},         {ValueType::F64, ww::ValType::F64},
    {ValueType::V128, ww::ValType::V128},       {ValueType::FuncRef, ww::ValType::FuncRef},
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

ExternKind public_kind(ww::ExternKind k) {
  switch (k) {
    case ww::ExternKind::Func: return ExternKind::Function;
    case ww::ExternKind::Table: return ExternKind::Table;
    case ww::ExternKind::Memory: return ExternKind::Memory;
    case ww::ExternKind::Global: return ExternKind::Global;
  }
  return ExternKind::Function;
}

Expected<Module> from_compiled(ww::Result<std::shared_ptr<const ww::CompiledModule>> r) {
  if (!r.ok()) return Error{r.error().to_string()};
  auto impl = std::make_shared<Module::Impl>();
  impl->cm = *r;
  const ww::Module& m = impl->cm->module;
  for (const ww::Export& e : m.exports) {
    Export x{e.name, public_kind(e.kind), {}};
    if (e.kind == ww::ExternKind::Func) x.type = public_type(m.func_type(e.index));
    impl->exports.push_back(std::move(x));
  }
  for (const ww::Import& i : m.imports) {
    Import x{i.module, i.field, public_kind(i.kind), {}};
    if (i.kind == ww::ExternKind::Func) x.type = public_type(m.types[i.func_type]);
    impl->imports.push_back(std::move(x));
  }
  return Module::Impl::make(std::move(impl));
}

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

ww::batch::Backend internal_backend(Backend b) {
  return b == Backend::Cpu ? ww::batch::Backend::Cpu : b == Backend::Gpu ? ww::batch::Backend::Gpu
                                                                         : ww::batch::Backend::Auto;
}

ww::batch::Tier internal_tier(Tier t) {
  return t == Tier::Interpreter ? ww::batch::Tier::Interp : t == Tier::Compiled ? ww::batch::Tier::Compiled
                                                                                 : ww::batch::Tier::Auto;
}

// Arguments that fit the export's parameters, as the batch engine takes them.
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
      if (want != ww::ValType::I32 && want != ww::ValType::I64 && want != ww::ValType::F32 &&
          want != ww::ValType::F64)
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
      out[k].value = ww::Value{want, a.bits()[0]};
      continue;
    }
    if (a.bits().size() < instances)
      return Error{which + " has " + std::to_string(a.bits().size()) + " rows for " + std::to_string(instances) +
                   " instances"};
    out[k].kind = ww::batch::ArgSource::Column;
    out[k].column.reserve(instances);
    for (uint64_t i = 0; i < instances; ++i) out[k].column.push_back(ww::Value{want, a.bits()[i]});
  }
  return out;
}

}  // namespace

const char* type_name(ValueType t) { return ww::valtype_name(internal_type(t)); }

Expected<Module> Module::from_file(const std::string& path) { return from_compiled(ww::compile_file(path)); }

Expected<Module> Module::from_bytes(std::vector<uint8_t> wasm) {
  return from_compiled(ww::compile_module(std::move(wasm)));
}

const std::vector<Export>& Module::exports() const { return impl_->exports; }
const std::vector<Import>& Module::imports() const { return impl_->imports; }

Expected<FunctionType> Module::function_type(const std::string& export_name) const {
  auto t = ww::batch::export_function_type(impl_->cm->module, export_name);
  if (!t.ok()) return Error{t.error().message};
  return public_type(*t);
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
Arg Arg::device_column(const void* device_data, ValueType type) {
  Arg a(Kind::DeviceColumn, type, {});
  a.device_ = device_data;
  return a;
}

uint64_t CallResult::instances() const { return impl_->r.traps.size(); }
const std::vector<ValueType>& CallResult::result_types() const { return impl_->types; }
uint64_t CallResult::bits(uint64_t instance, size_t k) const {
  return impl_->r.results[instance * impl_->types.size() + k];
}
float CallResult::f32(uint64_t instance, size_t k) const {
  const uint32_t b = uint32_t(bits(instance, k));
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
double CallResult::f64(uint64_t instance, size_t k) const {
  const uint64_t b = bits(instance, k);
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}
std::span<const uint64_t> CallResult::all_bits() const { return {impl_->r.results.data(), impl_->r.results.size()}; }
const void* CallResult::device_result(size_t k) const {
  return k < impl_->device.size() ? impl_->device[k].get() : nullptr;
}
std::shared_ptr<const void> CallResult::device_owner() const { return impl_; }
std::span<const uint8_t> CallResult::trap_codes() const { return {impl_->r.traps.data(), impl_->r.traps.size()}; }
uint64_t CallResult::trap_count() const {
  uint64_t n = 0;
  for (uint8_t t : trap_codes()) n += t != 0;
  return n;
}
std::string CallResult::trap_message(uint64_t instance) const {
  const uint8_t t = trap_codes()[instance];
  return t ? wasmwarp::trap_message(t) : std::string();
}
std::span<const uint8_t> CallResult::memory_out(size_t k) const {
  return {impl_->r.mem_out[k].data(), impl_->r.mem_out[k].size()};
}
std::string_view CallResult::stdout_of(uint64_t instance) const {
  const auto& b = impl_->r.stdout_blocks;
  return instance < b.size() ? std::string_view(b[instance]) : std::string_view();
}
std::string_view CallResult::stderr_of(uint64_t instance) const {
  const auto& b = impl_->r.stderr_blocks;
  return instance < b.size() ? std::string_view(b[instance]) : std::string_view();
}
Backend CallResult::backend() const { return impl_->backend; }
std::string CallResult::device() const {
  return impl_->backend == Backend::Gpu ? impl_->r.device : "threads=" + std::to_string(impl_->r.threads);
}

std::string trap_message(uint8_t code) { return ww::trap_message(ww::TrapCode(code)); }

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
  for (const MemoryIn& mi : o.memory_in) {
    if (mi.record_size == 0 || mi.bytes.size() / mi.record_size < instances)
      return Error{"memory input at " + std::to_string(mi.address) + " holds " +
                   std::to_string(mi.record_size ? mi.bytes.size() / mi.record_size : 0) + " records for " +
                   std::to_string(instances) + " instances"};
    ww::batch::MemInput in;
    in.addr.addr = mi.address;
    in.record = mi.record_size;
    in.data.assign(mi.bytes.begin(), mi.bytes.begin() + ptrdiff_t(mi.record_size * instances));
    spec.mem_in.push_back(std::move(in));
  }
  for (const MemoryOut& mo : o.memory_out) spec.mem_out.push_back({ww::batch::Address{mo.address, {}, false}, mo.length});
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
    if (call.repeat == 0) return Error{"call " + std::to_string(number) + " of the chain ('" + call.export_name + "') repeats 0 times"};
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
  if (!o.memory_in.empty() || !o.memory_out.empty())
    return Error{"memory inputs and outputs are not supported for WASI programs yet"};
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
  spec.threads = e.threads;
  spec.backend = internal_backend(e.backend);
  spec.tier = internal_tier(e.tier);
  spec.cache.enabled = e.cache;
  spec.cache.dir = e.cache_dir;
}

Expected<CallResult> run_batch(ww::batch::BatchSpec& spec, const EngineOptions& e, const CallOptions& o) {
  spec.fuel = o.fuel;
  spec.timeout_s = o.timeout_s;
  apply_engine_options(spec, e);
  spec.cancel = o.cancel;
  if (o.progress) spec.progress = [p = o.progress](uint64_t done, uint64_t total, double) { p(done, total); };

  std::vector<std::shared_ptr<void>> device;
  if (o.results_on_device) {
    const char* need = "results on the device need the GPU backend";
    if (e.backend == Backend::Cpu && !spec.resident) return Error{std::string(need) + "; this call runs on the CPU"};
    if (const ww::gpu::DeviceInfo d = ww::gpu::probe_device(); !d.available) return Error{std::string(need) + ": " + d.reason};
    auto type = ww::batch::export_function_type(spec.module->module,
                                                spec.then.empty() ? spec.export_name : spec.then.back().export_name);
    if (!type.ok()) return Error{type.error().message};
    for (ww::ValType t : type->results) {
      auto buf = ww::gpu::device_buffer(spec.instances * ww::batch::column_width(t));
      if (!buf.ok()) return Error{"results on the device: " + buf.error().message};
      spec.device_results.push_back(buf->get());
      device.push_back(std::move(*buf));
    }
  }
  auto r = ww::batch::run(spec);
  if (!r.ok()) return Error{r.error().to_string()};
  auto impl = std::make_shared<CallResult::Impl>();
  impl->r = std::move(*r);
  impl->device = std::move(device);
  for (ww::ValType t : impl->r.type.results) impl->types.push_back(public_type(t));
  impl->backend = impl->r.backend == ww::batch::Backend::Gpu ? Backend::Gpu : Backend::Cpu;
  return CallResult(std::move(impl));
}

}  // namespace

}  // namespace wasmwarp
