// CallResult: a call's per-instance outcome and its report, read from the
// batch engine's result.
#include <cstring>

#include "api/internal.h"
#include "compiled/host_compiler.h"
#include "runtime/unknown_imports.h"

namespace wasmwarp {
namespace api {

Backend public_backend(ww::batch::Backend b) { return b == ww::batch::Backend::Gpu ? Backend::Gpu : Backend::Cpu; }

Tier public_tier(ww::batch::Tier t) {
  return t == ww::batch::Tier::Compiled ? Tier::Compiled
         : t == ww::batch::Tier::Interp ? Tier::Interpreter
                                        : Tier::Auto;
}

RunReport report_of(const ww::batch::BatchResult& r) {
  RunReport o;
  o.backend = public_backend(r.backend);
  o.backend_note = r.backend_note;
  o.device = r.device;
  for (const ww::batch::GpuShare& g : r.gpus) o.gpus.push_back({g.device, g.name, g.instances, g.seconds, g.kernel_ms});
  o.threads = r.threads;
  o.wall_s = r.wall_s;
  o.kernel_ms = r.kernel_ms;
  const ww::batch::PhaseTimes& p = r.phases;
  o.phases = {p.read_inputs, p.translate, p.compile,       p.plan,       p.upload,     p.memory_setup,
              p.kernel,      p.download,  p.write_outputs, p.host_calls, p.gpu_startup};
  for (const ww::batch::Segment& g : r.segments)
    o.segments.push_back({g.first, g.count, public_backend(g.backend), public_tier(g.tier), g.seconds});
  const ww::batch::CompileReport& c = r.compile;
  o.compile = {c.attempted, c.used,     c.cache_hit,  c.generate_ms,  c.compile_ms,
               c.load_ms,   c.fallback, c.cache_note, c.left_running, {}};
  const ww::batch::CompileReport::TierUp& u = c.tier_up;
  o.compile.tier_up = {u.on, u.hot, u.compiled, u.units, u.cache_hits, u.failed, u.compile_s, u.error};
  o.host_calls = r.host_calls;
  o.host_passes = r.host_passes;
  o.device_output_bytes = r.device_output_bytes;
  o.device_files = r.device_files;
  o.device_file_bytes = r.device_file_bytes;
  o.device_bytes_per_instance = r.device_bytes_per_instance;
  o.linear_bytes_per_instance = r.linear_bytes_per_instance;
  o.reserved_bytes_per_instance = r.reserved_bytes_per_instance;
  o.pool_reruns = r.pool_reruns;
  o.replans = r.replans;
  o.stack_reruns = r.stack_reruns;
  o.grow_reruns = r.grow_reruns;
  o.stack_pool_bytes = r.stack_pool_bytes;
  o.wave_size = r.wave_size;
  o.waves = r.waves;
  o.memory_layout = r.backend == ww::batch::Backend::Gpu ? public_layout(r.memory_layout) : MemoryLayout::Auto;
  return o;
}

ResultColumns columns_of(const ww::batch::BatchResult& r) {
  ResultColumns v;
  v.instances = r.traps.size();
  for (ww::ValType t : r.type.results) v.types.push_back(public_type(t));
  v.names = r.result_names;
  v.results = r.results.empty() ? nullptr : r.results.data();
  v.results32 = r.results32.empty() ? nullptr : r.results32.data();
  v.results_hi = r.results_hi.empty() ? nullptr : r.results_hi.data();
  v.traps = r.traps.data();
  v.trap_function = r.trap_func.data();
  v.trap_offset = r.trap_pc.data();
  for (const auto& c : r.mem_out) v.memory_out.push_back(c.data());
  return v;
}

}  // namespace api

const char* backend_name(Backend b) { return ww::batch::backend_name(api::internal_backend(b)); }
const char* tier_name(Tier t) { return ww::batch::tier_name(api::internal_tier(t)); }
const char* memory_layout_name(MemoryLayout l) { return ww::layout_name(api::internal_layout(l)); }
std::optional<MemoryLayout> parse_memory_layout(std::string_view name) {
  const std::optional<ww::MemoryLayout> l = ww::parse_layout(name);
  if (!l) return std::nullopt;
  return api::public_layout(*l);
}
bool background_compiles_running() { return ww::batch::compiles_running(); }
void exit_stopping_compiles(int status) { ww::batch::exit_stopping_compiles(status); }
void kill_compilers_from_signal_handler() { ww::compiled::kill_host_compilers_from_signal(); }

uint64_t CallResult::instances() const { return impl_->r.traps.size(); }
const std::vector<ValueType>& CallResult::result_types() const { return impl_->types; }
uint64_t CallResult::bits(uint64_t instance, size_t k) const { return impl_->r.result_bits(instance, k); }
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
uint64_t CallResult::bits_hi(uint64_t instance, size_t k) const {
  const auto& hi = impl_->r.results_hi;
  return hi.empty() ? 0 : hi[instance * impl_->types.size() + k];
}
std::span<const uint64_t> CallResult::all_bits() const {
  const ww::batch::BatchResult& r = impl_->r;
  if (r.results32.empty()) return {r.results.data(), r.results.size()};
  std::call_once(impl_->widened_once, [&] { impl_->widened.assign(r.results32.begin(), r.results32.end()); });
  return {impl_->widened.data(), impl_->widened.size()};
}
std::span<const uint32_t> CallResult::all_bits32() const {
  return {impl_->r.results32.data(), impl_->r.results32.size()};
}
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
  if (!t) return std::string();
  if (!impl_->module) return wasmwarp::trap_message(t);
  return ww::trap_text(impl_->module->module, ww::TrapCode(t), impl_->r.trap_func[instance]);
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
bool CallResult::finished(uint64_t instance) const { return impl_->r.finished[instance] != 0; }
uint32_t CallResult::trap_function(uint64_t instance) const { return impl_->r.trap_func[instance]; }
uint32_t CallResult::trap_offset(uint64_t instance) const { return impl_->r.trap_pc[instance]; }
ResultColumns CallResult::columns() const { return api::columns_of(impl_->r); }
const RunReport& CallResult::report() const { return impl_->report; }
void CallResult::set_caller_phases(double read_inputs, double translate, double write_outputs) {
  impl_->report.phases.read_inputs = read_inputs;
  impl_->report.phases.translate = translate;
  impl_->report.phases.write_outputs = write_outputs;
}
uint64_t CallResult::output_capped() const { return impl_->r.output_capped; }
uint64_t CallResult::first_output_capped() const { return impl_->r.first_output_capped; }
const Image* CallResult::image() const { return impl_->image.get(); }
const std::vector<int32_t>& CallResult::state() const {
  static const std::vector<int32_t> kNone;
  return impl_->intrinsics ? impl_->intrinsics->state : kNone;
}
uint64_t CallResult::ignored_pixels() const { return impl_->intrinsics ? impl_->intrinsics->ignored_pixels.load() : 0; }

std::string trap_message(uint8_t code) { return ww::trap_message(ww::TrapCode(code)); }

static_assert(kTrapTimeout == uint8_t(ww::TrapCode::Timeout));
static_assert(kTrapInterrupted == uint8_t(ww::TrapCode::Interrupted));
static_assert(kTrapUnknownImport == uint8_t(ww::TrapCode::UnknownImport));
static_assert(kNoTrapOffset == ww::kNoTrapPc);

}  // namespace wasmwarp
