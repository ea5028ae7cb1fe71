// The host's side of the calls instances leave their kernel for
// (host_call_pass.cu): what a server is handed per call, the WASI calls it
// lets the device serve itself, and the device's table of read-only files.
// Plain C++ (no CUDA types), for the batch engine's servers.
#pragma once

#include <cstdint>
#include <vector>

#include "common/guest_memory.h"
#include "semantics/traps.h"
#include "wasi/wasi_numbers.h"

namespace ww::gpu {

// A read-only file whose reads the device serves (dev_wasi_files.cuh).
struct DeviceFile {
  const uint8_t* bytes = nullptr;
  uint64_t size = 0;
  uint64_t max_seek = 0;                       // the largest offset lseek allows on its file system
  uint8_t filestat[wasi::kFilestatSize] = {};  // fd_filestat_get's bytes
  uint8_t fdstat[wasi::kFdstatSize] = {};      // fd_fdstat_get's
};

// The device's file table, filled as the host's calls open files. A batch
// may run in several launches of the wave loop (instances run again with
// larger stacks), each with a table of its own.
class DeviceFiles {
 public:
  virtual ~DeviceFiles() = default;
  // Unique to this table in the process: a server remembers what it
  // uploaded to which table.
  virtual uint64_t table_id() const = 0;
  // Copies `f` to the device once for the batch: its id, or -1 when the
  // device has no room left (the host keeps serving that file). Safe to
  // call from the host's workers.
  virtual int32_t upload(const DeviceFile& f) = 0;
};

// A call of an import the host serves (BatchRequest::host_calls): the
// instance left its kernel at the call and resumes there once served.
struct HostCall {
  uint32_t instance = 0;  // in the batch
  uint32_t func = 0;      // the import's function index (past them: foreign_func's)
  // A call through a table of another instance's function: its store
  // address (its type matched the call's on the device); else -1.
  int64_t foreign_func = -1;
  uint64_t* io = nullptr;          // arguments in, results out
  GuestMemory* memory = nullptr;   // the instance's memory 0, or null
  TrapCode trap = TrapCode::None;  // set to end the instance with this trap
  // When the device may hold files (DeviceWasi::file_budget): the table,
  // and what the call gave the device, descriptor `fd` of file `file` in
  // the instance's slot `fd_slot` (< kDevFdSlots; -1: nothing).
  DeviceFiles* files = nullptr;
  int32_t fd_slot = -1;
  uint32_t fd = 0, file = 0;
};

// The WASI calls a server lets the device serve itself (dev_wasi.cuh),
// and what they need: so that an ordinary program's arguments, clock,
// random bytes, exit and stdout cost no trip to the host.
struct DeviceWasi {
  // Per imported function: a DevWasiCall id (dev_wasi_ids.h), or 0xFF
  // for the host.
  std::vector<uint8_t> calls;
  // argv (0xFF bytes stand for the instance's index in decimal) and the
  // environment: the strings one after another, without their NULs.
  std::vector<uint8_t> argv, env;
  std::vector<uint32_t> argv_off, env_off;      // count + 1 offsets
  bool log_stdout = false, log_stderr = false;  // fd 1 / fd 2 writes collected on the device
  uint64_t out_cap = ~uint64_t{0};              // bytes each of them may take
  uint64_t seed = 0;                            // random_get: SplitMix64 of seed + instance
  int64_t clock_base[4] = {};                   // the host's clocks (ns) when the batch starts
  uint64_t clock_res[4] = {};
  // fd_fdstat_get of fds 0-2, the same for every instance of the batch
  // (valid when stdio_fdstat_known).
  bool stdio_fdstat_known = false;
  uint8_t stdio_fdstat[3][wasi::kFdstatSize] = {};
  // The preopens' guest names (fd_prestat_*), as argv.
  std::vector<uint8_t> preopen_names;
  std::vector<uint32_t> preopen_off{0};
  // Device memory the server's files may take (0: the device holds none).
  uint64_t file_budget = 0;
};

class HostCallServer {
 public:
  virtual ~HostCallServer() = default;
  // The calls the device may serve (null: none); read once per batch.
  virtual const DeviceWasi* device_wasi() { return nullptr; }
  // What instance `instance` wrote to fd (1 or 2) on the device, in the
  // order it wrote it; before any of its calls that follow the writes.
  virtual void device_output(uint32_t instance, uint32_t fd, const uint8_t* bytes, size_t n) {}
  // Instance `instance` called proc_exit(code) on the device.
  virtual void device_exit(uint32_t instance, uint32_t code) {}
  // Instances [first, first + n) of the batch start from the beginning (a
  // wave, or one that runs again after the pool ran out): what was kept
  // for them goes.
  virtual void begin(uint32_t first, uint32_t n) {}
  // Serves one call. Calls of different instances may run at once on the
  // host's workers (unless `parallel` is false); one instance's calls come
  // in order. A call whose memory->read gave null is served again with the
  // same arguments once those bytes are fetched, so it must not have acted
  // on anything before it had read all it needs.
  virtual void serve(HostCall& call) = 0;
  virtual bool parallel() const { return true; }
};

}  // namespace ww::gpu
