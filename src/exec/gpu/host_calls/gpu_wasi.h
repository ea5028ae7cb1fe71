// WASI for a GPU batch: each instance's calls leave its kernel
// (gpu::HostCallServer) and run here, on the host's cores, over its memory
// as the wave loop fetches it. A context is made for an instance at its
// first call and kept until its wave ends; the preopened directories are
// opened once and shared.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "batch/batch.h"
#include "batch/wasi_input.h"
#include "exec/gpu/device/dev_wasi_ids.h"
#include "exec/gpu/gpu_backend.h"
#include "wasi/wasi.h"

namespace ww::batch {

class GpuWasiCalls final : public gpu::HostCallServer {
 public:
  // `out` receives stdout and stderr blocks (its columns sized for the
  // whole batch); instances [first, first + count) are this range's. The
  // device names an instance by the index it sees (BatchSpec::index_base
  // + its row), which argv, {i} and the seed take; rows index `out`.
  GpuWasiCalls(const WasiBatch& w, const Module& m, BatchResult& out, uint64_t first, uint64_t count,
               uint64_t index_base = 0);
  ~GpuWasiCalls() override;
  // Opens the preopens: "cannot open --dir DIR: reason".
  // `probed`: another GpuWasiCalls of the same batch that opened already
  // (several GPUs): its view of the instances' stdio is taken instead of
  // opening instance `first`'s files again, which would truncate what an
  // instance on another GPU has written to them meanwhile.
  Status open(const GpuWasiCalls* probed = nullptr);
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
  // Instances whose call found the process out of descriptors (too many
  // instances of a wave holding files open): they trap (HostError), as
  // an errno the CPU would not have given must not pass for the program's.
  uint64_t out_of_descriptors() const { return out_of_fds_.load(); }

 private:
  struct Live {
    std::unique_ptr<wasi::Context> cx;
    std::unique_ptr<WasiInput> input;
    uint32_t device_fds[gpu::kDevFdSlots] = {};  // as the device's slots: fd + 1, 0 free
  };
  // `instance`: the index the device names it by.
  Live& live(uint32_t instance);
  uint64_t row(uint32_t instance) const { return instance - base_; }
  // After a path_open that gave `fd`: the device serves its reads when it
  // is a read-only file and the instance has a free slot.
  void give_to_device(Live& l, gpu::HostCall& c, uint32_t fd);
  // A read-only file's id in the device's table (-1: the host serves
  // it), loaded once for the batch from `host`, the first instance's
  // descriptor; *shared: the batch's descriptor of it.
  int32_t device_file(gpu::DeviceFiles& files, wasi::Context& cx, uint32_t fd, int host, int* shared);

  const WasiBatch& w_;
  BatchResult& out_;
  const uint64_t first_, count_, base_;
  std::vector<wasi::Context::CallHandle> handles_;  // by imported function index
  // Imports the server treats apart from the WASI calls' handles.
  enum class Kind : uint8_t { Other, ReadFile, WriteFile, PathOpen, FdClose, FdRenumber, SetFdstat };
  std::vector<Kind> kind_;                   // likewise
  wasi::Context owner_;                      // holds the shared preopens
  std::vector<std::unique_ptr<Live>> live_;  // by instance - first_
  std::vector<uint8_t> exited_, capped_;     // by instance - first_
  std::vector<uint8_t> opened_;              // by instance - first_: its stdio files made
  std::vector<uint32_t> exit_code_;
  gpu::DeviceWasi device_;
  // By 2 * (instance - first_) + fd - 1: bytes the device wrote to fd 1
  // and 2 straight into the output blocks, before the instance had a
  // context (which then counts them against its cap).
  std::vector<uint64_t> direct_;
  // The device's files by (st_dev, st_ino): the batch's descriptor every
  // instance's fd of the file shares, its id in the table `table` (-1:
  // the host's), and the fd_fdstat_get the device answers for it.
  struct SharedFile {
    int fd = -1;
    uint64_t table = 0;
    int32_t id = -1;
    uint8_t fdstat[wasi::kFdstatSize] = {};
  };
  std::atomic<uint64_t> out_of_fds_{0};
  std::mutex files_mu_;
  std::map<std::pair<uint64_t, uint64_t>, SharedFile> files_;
};

}  // namespace ww::batch
