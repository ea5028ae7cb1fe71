// The parts of a `wasmwarp run` batch shared by the CPU path (batch.cc) and
// the GPU path (batch_gpu.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/batch.h"
#include "cli/io_formats.h"
#include "exec/gpu/gpu_backend.h"
#include "intrinsics/gpu_batch.h"
#include "wasmwarp/runtime.h"

namespace ww::cli {

struct ArgSrc {
  enum Kind { Const, Index, Column } kind = Const;
  Value value;
  std::vector<Value> column;
};

// A memory address: a number, or an export (a () -> i32 function or an i32
// global) read per instance.
struct AddrSpec {
  uint64_t addr = 0;
  std::string export_name;
  bool is_global = false;
};

struct MemIn {
  AddrSpec addr;
  std::string path;
  uint64_t record = 0;
  std::vector<uint8_t> data;
};

struct MemOut {
  AddrSpec addr;
  uint64_t len = 0;
  std::string path;
  std::vector<uint8_t> buf;  // instances * len
  std::unique_ptr<AtomicFile> file = std::make_unique<AtomicFile>();
};

enum class OutFormat { None, Csv, Json, Npy };

struct Job {
  std::shared_ptr<const CompiledModule> mod;
  std::string export_name;
  FuncType type;
  std::vector<ArgSrc> args;
  std::vector<MemIn> mem_in;
  std::vector<MemOut> mem_out;
  uint64_t n = 1;
  StoreLimits limits;
  std::vector<uint64_t> results;  // n * results.size()
  std::vector<uint8_t> traps;     // TrapCode per instance
  // Where each trap happened: module function index and bytecode word
  // offset in it; trap_pc is kNoTrapPc for traps outside the code (a memory
  // input that did not fit, the timeout).
  std::vector<uint32_t> trap_func, trap_pc;
  gpu::GpuBatch* gbatch = nullptr;  // the `gpu` intrinsics' shared state
};

// Argument k of instance i.
Value arg_value(const ArgSrc& a, ValType type, uint64_t i);

// The progress line of long batches on stderr: instances done, rate, time
// left. Silent for the first second, then at most twice a second; on a
// terminal it rewrites one line, elsewhere it prints a line every 10 s.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  void update(uint64_t done, uint64_t total, double seconds);
  void finish();  // ends the line, if one was shown

 private:
  bool enabled_, tty_, shown_ = false;
  double last_ = 0;
};

// Sets up the intrinsics' shared state from --image, --state, --state-in,
// --texture and --texture-filter.
Status setup_intrinsics(const RunSpec& spec, uint64_t instances, gpu::GpuBatch& b);
// Writes --image and --state-out after the batch.
Status write_intrinsics_outputs(const RunSpec& spec, const gpu::GpuBatch& b);

// Runs every instance of `job` as one GPU batch (in waves) and fills
// job.results, job.traps and the --mem-out buffers. `gbatch` holds the `gpu`
// intrinsics' shared state. Errors are the GPU backend's (no device, an
// import that cannot run there, a batch that cannot fit).
struct GpuRunInfo {
  std::string device;
  double kernel_ms = 0;
  std::vector<uint8_t> finished;  // 0 for instances the timeout stopped
};
Result<GpuRunInfo> run_job_on_gpu(Job& job, const RunSpec& spec, gpu::GpuBatch& gbatch,
                                  ProgressLine& progress);

// Resolves an address export once, on a fresh instance: every GPU instance
// starts from that same state.
Result<uint64_t> resolve_addr_fresh(const Job& job, const AddrSpec& a, gpu::GpuBatch& gbatch);

}  // namespace ww::cli
