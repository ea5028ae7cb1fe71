// What the public API's files share: the Impl structs behind the public
// classes, and the mapping between the API's types and the engine's.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "batch/batch.h"
#include "intrinsics/gpu_batch.h"
#include "runtime/runtime.h"
#include "wasmwarp/wasmwarp.h"

namespace wasmwarp {

struct Module::Impl {
  std::shared_ptr<const ww::CompiledModule> cm;
  std::vector<Export> exports;
  std::vector<Import> imports;
  ModuleTimes times;
  static Module make(std::shared_ptr<const Impl> impl) { return Module(std::move(impl)); }
};

struct CallResult::Impl {
  ww::batch::BatchResult r;
  std::shared_ptr<const ww::CompiledModule> module;  // whose imports trap messages name
  std::vector<std::shared_ptr<void>> device;         // results_on_device's columns
  std::vector<ValueType> types;
  Backend backend = Backend::Cpu;
  RunReport report;
  // The `gpu` intrinsics' state after the call (null: none were used).
  std::unique_ptr<ww::intrinsics::GpuBatch> intrinsics;
  std::unique_ptr<Image> image;
  // all_bits()'s widened copy of 32-bit results, made on first use.
  mutable std::once_flag widened_once;
  mutable std::vector<uint64_t> widened;
};

namespace api {

ValueType public_type(ww::ValType t);
ww::ValType internal_type(ValueType t);
FunctionType public_type(const ww::FuncType& f);
Backend public_backend(ww::batch::Backend b);
Tier public_tier(ww::batch::Tier t);
ww::batch::Backend internal_backend(Backend b);
ww::batch::Tier internal_tier(Tier t);
ww::MemoryLayout internal_layout(MemoryLayout l);
MemoryLayout public_layout(ww::MemoryLayout l);
ww::GpuTuning internal_tuning(const GpuTuning& t);
ww::UnknownImports internal_unknown_imports(UnknownImports u);

// The public report of an engine result.
RunReport report_of(const ww::batch::BatchResult& r);
// Views of `r`'s columns (which stay where they are while the batch fills
// them, and when the result is moved).
ResultColumns columns_of(const ww::batch::BatchResult& r);

// Engine::run_command with WasiOptions::process_stdio: one instance on
// the CPU, on this process's stdin, stdout and stderr.
Expected<CallResult> run_on_process_stdio(const Module& m, const WasiOptions& w, const EngineOptions& e,
                                          const CallOptions& o);

}  // namespace api
}  // namespace wasmwarp
