// WASI preview1 (`wasi_snapshot_preview1`) on the host: every call of
// preview 1, for one instance, over that instance's memory 0, its stdin,
// stdout and stderr, and preopened directories, with the answers wasmtime
// gives. Preopens are read-only unless the user made them writable (a
// change beneath a read-only one is ENOTCAPABLE), and every path resolves
// beneath its preopen (openat2's RESOLVE_BENEATH), so `..`, absolute paths
// and links that leave it fail with ENOTCAPABLE. Each descriptor has its
// rights: what path_open asked for, narrowed by fd_fdstat_set_rights, and
// checked by every call. Stdio collected in memory, or a pipe or a
// terminal, is a stream (no offset); a regular file keeps one. Every call
// returns a WASI errno; a name WASI lacks returns ENOSYS rather than
// trapping. Only proc_exit stops the instance (TrapCode::Exit, the code
// kept in the context).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/guest_files.h"
#include "common/guest_memory.h"
#include "common/result.h"
#include "store/store.h"

namespace ww::wasi {

inline constexpr const char* kModuleName = "wasi_snapshot_preview1";

struct Preopen {
  std::string host;   // a directory on this machine
  std::string guest;  // the name the program sees (fd_prestat_dir_name)
  // The program may create, write, rename and remove beneath it. In a
  // batch, "{i}" in `host` is the instance's index: each instance writes
  // in a directory of its own (made when missing).
  bool writable = false;
};

struct Config {
  std::vector<std::string> args;                   // argv, argv[0] first
  std::vector<std::string> env;                    // NAME=VALUE
  std::vector<Preopen> preopens;                   // fds 3, 4, ... in this order
  int stdin_fd = 0, stdout_fd = 1, stderr_fd = 2;  // the host's
};

// Whether the module imports anything from wasi_snapshot_preview1.
bool imports_wasi(const Module& m);

// Whether this layer implements the call (every one of preview 1; other
// names return ENOSYS).
bool implemented(const std::string& name);
// The call's WASI type, or null when this layer lacks it.
const FuncType* call_type(const std::string& name);

// Where one batch input's stdio goes: stdin from a host fd (or empty),
// stdout and stderr into buffers that collect what the program writes (or
// host fds; -1 with no buffer: discarded).
struct Stdio {
  uint64_t index = 0;  // the instance's: "{i}" in writable preopens
  int in = -1;
  std::string* out = nullptr;
  std::string* err = nullptr;
  int out_fd = -1, err_fd = -1;
  // Bytes each of stdout and stderr may take; writes past it are cut
  // (EFBIG) and the context says so (output_capped).
  uint64_t cap = ~uint64_t{0};
};

// One instance's WASI state: its arguments and environment, and its file
// descriptors (0-2 the host's stdio, then the preopens, then what the
// program opens). A batch worker keeps one context for all its inputs
// (start_input).
class Context final : public GuestFiles {
 public:
  explicit Context(Config config);
  ~Context() override;  // closes the preopens
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Opens the preopened directories: "cannot open --dir DIR: reason".
  Status open_preopens();
  // Host functions in `store` for the module's WASI imports, put in
  // `resolved` at their import index (other entries are left alone). A
  // call imported with a type other than WASI's is an error naming it.
  Status link(Store& store, const Module& m, std::vector<std::optional<ExternVal>>& resolved);
  // The instance whose memory 0 the calls read and write.
  void bind(uint32_t instance) { instance_ = instance; }
  // The next batch input: its argv and stdio, random_get from a
  // counter-based generator seeded with `seed`; the descriptor table is
  // made anew (what the last input opened is closed, what it closed or
  // renumbered is back) and its exit code forgotten.
  void start_input(std::vector<std::string> args, const Stdio& stdio, uint64_t seed);
  // For callers outside a Store (a GPU instance that left its kernel): a
  // handle for import `field` of a module whose imports passed link()'s
  // checks, and the call itself over `mem` (null: the module has no
  // memory), slots as a host function's. A call this layer lacks returns
  // ENOSYS, as through link().
  struct CallHandle {
    const void* info = nullptr;  // null: not implemented
    bool has_errno = false;
  };
  static CallHandle handle(const std::string& field, const FuncType& type);
  TrapCode call(CallHandle h, GuestMemory* mem, uint64_t* slots);
  // Shares `owner`'s preopened directories instead of opening its own (a
  // GPU batch keeps a context per waiting instance, far more than a
  // process may hold descriptors); `owner` outlives this context.
  void borrow_preopens(const Context& owner);
  // Bytes the program wrote to fd 1 or 2 elsewhere (a GPU instance's
  // writes collected on the device): stdio_write delivers them as fd_write
  // would, stdio_taken only counts them against the cap.
  void stdio_write(uint32_t fd, const uint8_t* p, size_t n);
  void stdio_taken(uint32_t fd, uint64_t n);
  // gpu.read_file / gpu.write_file over this context's preopens.
  int32_t read_file(GuestMemory* mem, uint32_t path, uint32_t buf, uint32_t len) override;
  int32_t write_file(GuestMemory* mem, uint32_t path, uint32_t buf, uint32_t len) override;
  // fd_fdstat_get's 24 bytes for `fd`; false when it is not open.
  bool fdstat(uint32_t fd, uint8_t out[24]) const;
  // fd_filestat_get's 64 bytes for `fd`; false when it is not open or
  // its file cannot be read.
  bool filestat(uint32_t fd, uint8_t out[64]) const;
  // The descriptor the last call() opened (path_open), if any.
  std::optional<uint32_t> opened() const { return opened_; }
  // `fd`'s host descriptor when it is a regular file opened beneath a
  // read-only preopen (nothing in a batch can change it), else -1. (Its
  // rights and flags are in fdstat().)
  int read_only_file(uint32_t fd) const;
  // `fd` refers to `host` from now on, a descriptor of the same file that
  // the caller keeps open (a GPU batch's shared copy); its own is closed.
  void share_descriptor(uint32_t fd, int host);
  // proc_exit's code, once the program has called it.
  std::optional<uint32_t> exit_code() const { return exit_code_; }
  // Whether this input wrote more than its Stdio::cap.
  bool output_capped() const { return output_capped_; }

  struct Fd;  // an open descriptor (wasi.cc)

 private:
  friend struct CallContext;
  Config config_;
  std::vector<std::unique_ptr<Fd>> fds_;  // by WASI fd; null = closed
  std::vector<int> preopen_fds_;          // the host's, open for the context's life
  bool owns_preopens_ = true;
  std::vector<int> input_dirs_;  // per preopen: the input's own writable directory, or -1
  uint32_t instance_ = 0;
  std::optional<uint32_t> exit_code_;
  std::optional<uint32_t> opened_;
  bool output_capped_ = false;
  // random_get: the OS's bytes, or with a seed (batches) a counter-based
  // generator, so that a batch with --seed is reproducible.
  std::optional<uint64_t> seed_;
  uint64_t random_counter_ = 0;
};

}  // namespace ww::wasi
