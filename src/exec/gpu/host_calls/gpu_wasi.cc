#include "exec/gpu/host_calls/gpu_wasi.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "exec/gpu/device/dev_wasi_ids.h"
#include "wasi/wasi_numbers.h"

namespace ww::batch {
namespace {

using gpu::DevWasiCall;

// The WASI calls the device serves. An import of another type than WASI's
// (wasi::call_type) stays the host's, which answers as on the CPU.
struct DeviceCall {
  const char* name;
  DevWasiCall id;
};
constexpr DeviceCall kDeviceCalls[] = {
    {"args_sizes_get", DevWasiCall::ArgsSizesGet},
    {"args_get", DevWasiCall::ArgsGet},
    {"environ_sizes_get", DevWasiCall::EnvironSizesGet},
    {"environ_get", DevWasiCall::EnvironGet},
    {"clock_res_get", DevWasiCall::ClockResGet},
    {"clock_time_get", DevWasiCall::ClockTimeGet},
    {"random_get", DevWasiCall::RandomGet},
    {"fd_write", DevWasiCall::FdWrite},
    {"proc_exit", DevWasiCall::ProcExit},
    {"sched_yield", DevWasiCall::SchedYield},
    {"fd_fdstat_get", DevWasiCall::FdFdstatGet},
    {"fd_close", DevWasiCall::FdClose},
    {"fd_renumber", DevWasiCall::FdRenumber},
    {"fd_fdstat_set_flags", DevWasiCall::FdFdstatSetFlags},
    {"fd_fdstat_set_rights", DevWasiCall::FdFdstatSetRights},
    {"fd_read", DevWasiCall::FdRead},
    {"fd_pread", DevWasiCall::FdPread},
    {"fd_seek", DevWasiCall::FdSeek},
    {"fd_tell", DevWasiCall::FdTell},
    {"fd_filestat_get", DevWasiCall::FdFilestatGet},
    {"fd_prestat_get", DevWasiCall::FdPrestatGet},
    {"fd_prestat_dir_name", DevWasiCall::FdPrestatDirName},
};

// Device memory for copies of read-only files: SQLite databases and the
// like fit many times over; a batch reading more has the rest served by
// the host.
inline constexpr uint64_t kDeviceFileBudget = uint64_t(1) << 30;

// The largest offset lseek allows on `fd`'s file system (its s_maxbytes);
// `fd` is left at offset 0.
uint64_t max_seek_of(int fd) {
  uint64_t lo = 0, hi = uint64_t(INT64_MAX);
  if (::lseek(fd, off_t(hi), SEEK_SET) >= 0) lo = hi;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (::lseek(fd, off_t(mid), SEEK_SET) >= 0) lo = mid;
    else hi = mid - 1;
  }
  (void)::lseek(fd, 0, SEEK_SET);
  return lo;
}

bool read_whole(int fd, uint64_t size, std::vector<uint8_t>& out) {
  out.resize(size);
  for (uint64_t done = 0; done < size;) {
    const ssize_t r = ::pread(fd, out.data() + done, size - done, off_t(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;  // an error, or the file shrank
    done += uint64_t(r);
  }
  return true;
}

uint8_t device_call_of(const Import& im, const FuncType& type, bool args_on_device) {
  if (im.module != wasi::kModuleName) return gpu::kDevHostImport;
  const FuncType* want = wasi::call_type(im.field);
  if (!want || !(*want == type)) return gpu::kDevHostImport;
  for (const DeviceCall& c : kDeviceCalls) {
    if (im.field != c.name) continue;
    const bool args = c.id == DevWasiCall::ArgsSizesGet || c.id == DevWasiCall::ArgsGet ||
                      c.id == DevWasiCall::EnvironSizesGet || c.id == DevWasiCall::EnvironGet;
    return args && !args_on_device ? gpu::kDevHostImport : uint8_t(c.id);
  }
  return gpu::kDevHostImport;
}

// Strings one after another, "@index" as a 0xFF byte in argv's ARGS (as
// WasiInput substitutes them: not in argv[0]). False when a string holds a
// 0xFF byte of its own.
bool pack(const std::vector<std::string>& v, bool index, std::vector<uint8_t>& bytes, std::vector<uint32_t>& off) {
  off.assign(1, 0);
  for (const std::string& s : v) {
    if (s.find('\xff') != std::string::npos) return false;
    const std::string t = index && off.size() > 1 ? replace_all(s, "@index", "\xff") : s;
    bytes.insert(bytes.end(), t.begin(), t.end());
    off.push_back(uint32_t(bytes.size()));
  }
  return true;
}

int64_t clock_ns(clockid_t id) {
  timespec t{};
  ::clock_gettime(id, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

uint64_t resolution_ns(clockid_t id) {
  timespec t{};
  ::clock_getres(id, &t);
  return uint64_t(t.tv_sec) * 1000000000 + uint64_t(t.tv_nsec);
}

}  // namespace

GpuWasiCalls::GpuWasiCalls(const WasiBatch& w, const Module& m, BatchResult& out, uint64_t first, uint64_t count,
                           uint64_t index_base)
    : w_(w), out_(out), first_(first), count_(count), base_(index_base), owner_(w.config) {
  for (const Import& im : m.imports)
    if (im.kind == ExternKind::Func) {
      handles_.push_back(im.module == wasi::kModuleName ? wasi::Context::handle(im.field, m.types[im.func_type])
                                                        : wasi::Context::CallHandle{});
      const intrinsics::IntrinsicInfo* info =
          im.module == intrinsics::kModuleName ? intrinsics::find_intrinsic(im.field) : nullptr;
      const bool wasi = im.module == wasi::kModuleName;
      kind_.push_back(info && info->id == gpu::Intrinsic::ReadFile    ? Kind::ReadFile
                      : info && info->id == gpu::Intrinsic::WriteFile ? Kind::WriteFile
                      : wasi && im.field == "path_open"               ? Kind::PathOpen
                      : wasi && im.field == "fd_close"                ? Kind::FdClose
                      : wasi && im.field == "fd_renumber"             ? Kind::FdRenumber
                      : wasi && (im.field == "fd_fdstat_set_flags" || im.field == "fd_fdstat_set_rights")
                          ? Kind::SetFdstat
                          : Kind::Other);
    }
  live_.resize(count);
  exited_.assign(count, 0);
  capped_.assign(count, 0);
  opened_.assign(count, 0);
  exit_code_.assign(count, 0);
  direct_.assign(count * 2, 0);

  std::vector<std::string> argv{w.argv0};
  argv.insert(argv.end(), w.args.begin(), w.args.end());
  const bool args_ok =
      pack(argv, true, device_.argv, device_.argv_off) && pack(w.config.env, false, device_.env, device_.env_off);
  for (const Import& im : m.imports)
    if (im.kind == ExternKind::Func) device_.calls.push_back(device_call_of(im, m.types[im.func_type], args_ok));
  for (const wasi::Preopen& p : w.config.preopens) {
    device_.preopen_names.insert(device_.preopen_names.end(), p.guest.begin(), p.guest.end());
    device_.preopen_off.push_back(uint32_t(device_.preopen_names.size()));
    if (!p.writable) device_.file_budget = kDeviceFileBudget;
  }
  device_.log_stdout = device_.log_stderr = true;
  device_.out_cap = w.output_cap;
  device_.seed = w.seed;
  const clockid_t clocks[4] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID};
  for (int k = 0; k < 4; ++k) {
    device_.clock_base[k] = clock_ns(clocks[k]);
    device_.clock_res[k] = resolution_ns(clocks[k]);
  }
}

Status GpuWasiCalls::open(const GpuWasiCalls* probed) {
  // Every waiting instance may hold files open at once: as many
  // descriptors as the process may have.
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (probed) {
    device_.stdio_fdstat_known = probed->device_.stdio_fdstat_known;
    std::memcpy(device_.stdio_fdstat, probed->device_.stdio_fdstat, sizeof device_.stdio_fdstat);
    return owner_.open_preopens();
  }
  // An stdio pattern that cannot be opened fails the batch before it
  // starts, as on the CPU (instance `first`'s files are made now, as they
  // would be at its first call).
  try {
    WasiInput probe(w_, base_ + first_, nullptr, nullptr);
    // Every instance's stdio is alike (blocks, or files the patterns
    // name): the device answers fd_fdstat_get for fds 0-2 with these.
    wasi::Config c = w_.config;
    c.preopens.clear();
    wasi::Context cx(c);
    probe.start(cx, 0);
    device_.stdio_fdstat_known = true;
    for (uint32_t fd = 0; fd < 3; ++fd) device_.stdio_fdstat_known &= cx.fdstat(fd, device_.stdio_fdstat[fd]);
  } catch (const std::exception& e) {
    return make_error(kNoOffset, e.what());
  }
  return owner_.open_preopens();
}

GpuWasiCalls::~GpuWasiCalls() {
  live_.clear();
  for (auto& [key, f] : files_)
    if (f.fd >= 0) ::close(f.fd);
}

uint32_t GpuWasiCalls::max_wave() const {
  if (w_.config.preopens.empty()) return 0;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 0;
  // Descriptors an instance holds while it waits, in quarters: about four
  // (SQLite: its database and a journal); when the device holds the
  // read-only files (their descriptors are the batch's), one for each
  // stdio pattern's file and a quarter for the directories and files a
  // program keeps open (writable ones: four). Too low an estimate ends in
  // HostError, never in an errno the program would take for its own.
  uint64_t quarters = 16;
  if (device_.file_budget) {
    quarters = 1;
    for (const std::string* p : {&w_.stdout_pattern, &w_.stderr_pattern, &w_.stdin_pattern})
      if (!p->empty()) quarters += 4;
    for (const wasi::Preopen& p : w_.config.preopens)
      if (p.writable) quarters = std::max<uint64_t>(quarters, 16);
  }
  const uint64_t room = uint64_t(lim.rlim_cur) > 512 ? lim.rlim_cur - 512 : 0;
  return uint32_t(std::min<uint64_t>(UINT32_MAX, std::max<uint64_t>(32, room * 4 / quarters)));
}

void GpuWasiCalls::begin(uint32_t first, uint32_t n) {
  // A wave (or one run again): what these instances had goes, output too.
  for (uint64_t i = row(first); i < row(first) + n && i - first_ < count_; ++i) {
    const uint64_t k = i - first_;
    live_[k].reset();
    exited_[k] = capped_[k] = 0;
    exit_code_[k] = 0;
    direct_[2 * k] = direct_[2 * k + 1] = 0;
    if (!out_.stdout_blocks.empty()) out_.stdout_blocks[i].clear();
    if (!out_.stderr_blocks.empty()) out_.stderr_blocks[i].clear();
  }
}

GpuWasiCalls::Live& GpuWasiCalls::live(uint32_t instance) {
  const uint64_t i = row(instance), k = i - first_;
  std::unique_ptr<Live>& l = live_[k];
  if (!l) {
    opened_[k] = 1;
    l = std::make_unique<Live>();
    l->cx = std::make_unique<wasi::Context>(w_.config);
    l->cx->borrow_preopens(owner_);
    l->input = std::make_unique<WasiInput>(w_, instance, out_.stdout_blocks.empty() ? nullptr : &out_.stdout_blocks[i],
                                           out_.stderr_blocks.empty() ? nullptr : &out_.stderr_blocks[i]);
    l->input->start(*l->cx, w_.seed + instance);
    for (uint32_t fd : {1u, 2u}) l->cx->stdio_taken(fd, direct_[2 * k + fd - 1]);
  }
  return *l;
}

void GpuWasiCalls::device_output(uint32_t instance, uint32_t fd, const uint8_t* bytes, size_t n) {
  const uint64_t k = row(instance) - first_;
  if (k >= count_ || fd < 1 || fd > 2) return;
  std::vector<std::string>& blocks = fd == 1 ? out_.stdout_blocks : out_.stderr_blocks;
  const bool pattern = !(fd == 1 ? w_.stdout_pattern : w_.stderr_pattern).empty();
  if (!live_[k] && !pattern && !blocks.empty()) {
    blocks[row(instance)].append(reinterpret_cast<const char*>(bytes), n);
    direct_[2 * k + fd - 1] += n;
    return;
  }
  try {
    Live& l = live(instance);
    l.cx->stdio_write(fd, bytes, n);
    if (l.cx->output_capped()) capped_[k] = 1;
  } catch (const std::exception&) {
    // The file a pattern names cannot be opened: open() found the first
    // one could, so the output goes as a call's would (HostError there).
  }
}

void GpuWasiCalls::device_exit(uint32_t instance, uint32_t code) {
  const uint64_t k = row(instance) - first_;
  if (k >= count_) return;
  exited_[k] = 1;
  exit_code_[k] = code;
}

void GpuWasiCalls::serve(gpu::HostCall& c) {
  if (c.func >= handles_.size()) {
    c.trap = TrapCode::HostError;
    return;
  }
  Live* l = nullptr;
  try {
    l = &live(c.instance);
  } catch (const std::exception&) {
    // An stdio file that cannot be opened: this instance fails, as the
    // host error it is (the CPU backend fails the batch before it starts).
    c.trap = TrapCode::HostError;
    return;
  }
  const uint64_t k = row(c.instance) - first_;
  if (kind_[c.func] == Kind::ReadFile || kind_[c.func] == Kind::WriteFile) {
    const uint32_t a = uint32_t(c.io[0]), b = uint32_t(c.io[1]), n = uint32_t(c.io[2]);
    const int32_t r = !c.memory                         ? -int32_t(wasi::kFault)  // no memory
                      : kind_[c.func] == Kind::ReadFile ? l->cx->read_file(c.memory, a, b, n)
                                                        : l->cx->write_file(c.memory, a, b, n);
    c.io[0] = uint32_t(r);
    return;
  }
  const Kind kind = kind_[c.func];
  // The call's first descriptor (fd_close's, fd_renumber's `from`), and
  // whether the device renumbered its side already.
  const uint32_t fd = uint32_t(c.io[0]), to = kind == Kind::FdRenumber ? uint32_t(c.io[1]) : 0;
  const bool renumbered = kind == Kind::FdRenumber && (c.io[0] & gpu::kDevRenumbered);
  c.io[0] = fd;
  auto held = [&](uint32_t n) {
    for (uint32_t& d : l->device_fds)
      if (d == uint64_t(n) + 1) return &d;
    return static_cast<uint32_t*>(nullptr);
  };
  uint8_t before[wasi::kFdstatSize] = {};
  const bool watch = kind == Kind::SetFdstat && held(fd) && l->cx->fdstat(fd, before);
  c.trap = l->cx->call(handles_[c.func], c.memory, c.io);
  if (c.trap == TrapCode::None && handles_[c.func].has_errno &&
      (uint32_t(c.io[0]) == wasi::kMfile || uint32_t(c.io[0]) == wasi::kNfile)) {
    c.trap = TrapCode::HostError;
    ++out_of_fds_;
    return;
  }
  if (c.trap == TrapCode::None && uint32_t(c.io[0]) == wasi::kSuccess) {
    // The device dropped its side of a closed descriptor before it left.
    if (kind == Kind::FdClose)
      if (uint32_t* d = held(fd)) *d = 0;
    if (kind == Kind::PathOpen && c.files && l->cx->opened()) give_to_device(*l, c, *l->cx->opened());
    if (kind == Kind::FdRenumber && fd != to && (held(fd) || held(to))) {
      // The device holds what moved: it renumbered its side too when it
      // knew both open, and else still serves the old numbers, which no
      // errno can mend (as when the process runs out of descriptors).
      if (!renumbered) {
        c.trap = TrapCode::HostError;
        return;
      }
      if (uint32_t* d = held(to)) *d = 0;
      if (uint32_t* d = held(fd)) *d = to + 1;
    }
    // The device answers fd_fdstat_get and checks rights from the file's
    // one fdstat: a descriptor of its that changes cannot go on.
    uint8_t after[wasi::kFdstatSize] = {};
    if (watch && (!l->cx->fdstat(fd, after) || std::memcmp(before, after, sizeof after) != 0)) {
      c.trap = TrapCode::HostError;
      return;
    }
  }
  if (c.trap == TrapCode::Exit && l->cx->exit_code()) {
    exited_[k] = 1;
    exit_code_[k] = *l->cx->exit_code();
  }
  if (l->cx->output_capped()) capped_[k] = 1;
}

void GpuWasiCalls::give_to_device(Live& l, gpu::HostCall& c, uint32_t fd) {
  const int host = l.cx->read_only_file(fd);
  if (host < 0) return;
  uint32_t slot = 0;
  while (slot < gpu::kDevFdSlots && l.device_fds[slot]) ++slot;
  if (slot == gpu::kDevFdSlots) return;
  int shared = -1;
  const int32_t id = device_file(*c.files, *l.cx, fd, host, &shared);
  if (id < 0) return;
  // From here the device keeps the offset: the host never reads through
  // this descriptor again.
  l.cx->share_descriptor(fd, shared);
  l.device_fds[slot] = fd + 1;
  c.fd_slot = int32_t(slot);
  c.fd = fd;
  c.file = uint32_t(id);
}

int32_t GpuWasiCalls::device_file(gpu::DeviceFiles& files, wasi::Context& cx, uint32_t fd, int host, int* shared) {
  struct stat st {};
  if (::fstat(host, &st) != 0) return -1;
  std::lock_guard<std::mutex> lock(files_mu_);
  SharedFile& f = files_[{uint64_t(st.st_dev), uint64_t(st.st_ino)}];
  if (f.table != files.table_id()) {
    // First sight of the file in this table: its bytes, then its
    // metadata (after the read, as a CPU run's fd_filestat_get would see
    // it), once. The first table's upload keeps a descriptor for all.
    f.table = files.table_id();
    f.id = -1;
    const int src = f.fd >= 0 ? f.fd : host;
    std::vector<uint8_t> bytes;
    gpu::DeviceFile d;
    if (uint64_t(st.st_size) > kDeviceFileBudget || !read_whole(src, uint64_t(st.st_size), bytes) ||
        !cx.filestat(fd, d.filestat) || !cx.fdstat(fd, d.fdstat))
      return -1;
    d.bytes = bytes.data();
    d.size = bytes.size();
    d.max_seek = max_seek_of(src);
    const int dup = f.fd >= 0 ? f.fd : ::fcntl(host, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return -1;
    std::memcpy(f.fdstat, d.fdstat, sizeof f.fdstat);
    f.id = files.upload(d);
    if (f.id < 0) {
      if (dup != f.fd) ::close(dup);
      return -1;
    }
    f.fd = dup;
  }
  // The device's fdstat of the file is the first descriptor's: another
  // asked for with other rights or flags stays the host's.
  uint8_t fdstat[wasi::kFdstatSize] = {};
  if (f.id < 0 || !cx.fdstat(fd, fdstat) || std::memcmp(fdstat, f.fdstat, sizeof fdstat) != 0) return -1;
  *shared = f.fd;
  return f.id;
}

void GpuWasiCalls::finish() {
  live_.clear();  // closes per-instance files
  for (uint64_t k = 0; k < count_; ++k) {
    const uint64_t i = first_ + k;
    // An instance the device served whole (no call left the kernel, no
    // output) never opened its --stdout/--stderr files: they are made now,
    // empty, as the CPU backend makes every instance's.
    if (!opened_[k] && (!w_.stdout_pattern.empty() || !w_.stderr_pattern.empty())) {
      try {
        WasiInput files(w_, base_ + i, nullptr, nullptr);
      } catch (const std::exception&) {
        // open() made the first instance's: a later one's folder vanished.
      }
    }
    if (exited_[k] && out_.traps[i] == uint8_t(TrapCode::Exit)) {
      out_.traps[i] = uint8_t(TrapCode::None);
      out_.trap_func[i] = 0;
      out_.trap_pc[i] = 0;
      out_.set_result_bits(i, 0, exit_code_[k]);
    }
    if (capped_[k]) {
      ++out_.output_capped;
      out_.first_output_capped = std::min<uint64_t>(out_.first_output_capped, i);
    }
  }
}

}  // namespace ww::batch
