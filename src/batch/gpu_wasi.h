// WASI for a GPU batch: each instance's calls leave its kernel
// (gpu::HostCallServer) and run here, on the host's cores, over its memory
// as the wave loop fetches it. A context is made for an instance at its
// first call and kept until its wave ends; the preopened directories are
// opened once and shared.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "batch/batch.h"
#include "batch/wasi_input.h"
#include "exec/gpu/gpu_backend.h"
#include "wasi/wasi.h"

namespace ww::batch {

class GpuWasiCalls final : public gpu::HostCallServer {
 public:
  // `out` receives stdout and stderr blocks (its columns sized for the
  // whole batch); instances [first, first + count) are this range's.
  GpuWasiCalls(const WasiBatch& w, const Module& m, BatchResult& out, uint64_t first, uint64_t count);
  // Opens the preopens: "cannot open --dir DIR: reason".
  Status open();
  // The largest wave whose instances may all hold files open at once
  // (0: no limit): each waiting instance keeps what it opened.
  uint32_t max_wave() const;
  void begin(uint32_t first, uint32_t n) override;
  void serve(gpu::HostCall& c) override;
  const gpu::DeviceWasi* device_wasi() override { return &device_; }
  void device_output(uint32_t instance, uint32_t fd, const uint8_t* bytes, size_t n) override;
  void device_exit(uint32_t instance, uint32_t code) override;
  // After the batch: exit codes into the result column, proc_exit no
  // longer a trap, and the instances whose output was cut.
  void finish();

 private:
  struct Live {
    std::unique_ptr<wasi::Context> cx;
    std::unique_ptr<WasiInput> input;
  };
  Live& live(uint32_t instance);

  const WasiBatch& w_;
  BatchResult& out_;
  const uint64_t first_, count_;
  std::vector<wasi::Context::CallHandle> handles_;  // by imported function index
  std::vector<uint8_t> file_call_;                  // likewise: 1 gpu.read_file, 2 gpu.write_file
  wasi::Context owner_;                             // holds the shared preopens
  std::vector<std::unique_ptr<Live>> live_;         // by instance - first_
  std::vector<uint8_t> exited_, capped_;            // by instance - first_
  std::vector<uint32_t> exit_code_;
  gpu::DeviceWasi device_;
  // By 2 * (instance - first_) + fd - 1: bytes the device wrote to fd 1
  // and 2 straight into the output blocks, before the instance had a
  // context (which then counts them against its cap).
  std::vector<uint64_t> direct_;
};

}  // namespace ww::batch
