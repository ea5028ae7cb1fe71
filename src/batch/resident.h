// Resident instances: N instances of one module that keep their state from
// one batch to the next (the public API's Instances). A batch whose
// BatchSpec::resident points here runs its export on them as the batch
// before left them; the first such batch fixes the backend (and, on the
// GPU, the tier). On the GPU they live in one wave on the device (the GPU
// executor's ResidentState); on the CPU each instance is kept as the change it
// made to the module's image (InstanceDelta), and a worker's one live
// instance takes each in turn.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "batch/batch.h"
#include "batch/executor.h"

namespace ww::batch {

// A backend's own keeping of the instances (the GPU's: one wave on the
// device and what serves its host calls).
class ResidentState {
 public:
  virtual ~ResidentState() = default;
  virtual Status read_memory(uint64_t addr, uint64_t len, uint8_t* out) = 0;
  virtual Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data) = 0;
};

class Resident {
 public:
  explicit Resident(uint64_t instances) : n_(instances) {}
  uint64_t instances() const { return n_; }
  bool started() const { return started_; }
  Backend backend() const { return backend_; }

  // `len` bytes at `addr` of every instance's memory 0 (instances x len;
  // zeros for an instance that trapped), or `record` bytes per instance of
  // `data` written there. A range past an instance's memory is an error.
  Status read_memory(uint64_t addr, uint64_t len, uint8_t* out);
  Status write_memory(uint64_t addr, uint64_t record, const uint8_t* data);

  // For the batch engine.
  struct Cpu {
    InstanceSnapshot image;             // what every delta is relative to
    std::vector<InstanceDelta> deltas;  // one per instance
    std::vector<uint8_t> traps;         // an instance's trap, kept for every later batch
    std::vector<uint32_t> trap_func;    // and its site (an unknown import's names it)
    std::vector<uint32_t> trap_pc;
  };
  void start(Backend b, std::unique_ptr<Executor> exec, MemoryLayout layout) {
    started_ = true;
    backend_ = b;
    exec_ = std::move(exec);
    gpu_layout_ = layout;
  }
  Executor& executor() { return *exec_; }
  MemoryLayout gpu_layout() const { return gpu_layout_; }
  Cpu& cpu() { return cpu_; }
  const Cpu& cpu() const { return cpu_; }
  // The backend's state of the instances (the CPU keeps cpu() instead).
  std::unique_ptr<ResidentState>& state() { return state_; }
  CompileReport compile;  // how the first batch got its tier

 private:
  uint64_t n_;
  bool started_ = false;
  Backend backend_ = Backend::Cpu;
  std::unique_ptr<Executor> exec_;
  MemoryLayout gpu_layout_ = MemoryLayout::Interleaved;
  Cpu cpu_;
  std::unique_ptr<ResidentState> state_;
};

}  // namespace ww::batch
