#include "wasi/wasi.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/text.h"
#include "wasi/wasi_internal.h"

namespace ww::wasi {

bool imports_wasi(const Module& m) {
  for (const Import& imp : m.imports)
    if (imp.module == kModuleName) return true;
  return false;
}

bool implemented(const std::string& name) { return find_call(name) != nullptr; }

const FuncType* call_type(const std::string& name) {
  const CallInfo* c = find_call(name);
  return c ? &c->type : nullptr;
}

namespace {

std::unique_ptr<Context::Fd> preopen_fd(int host, const Preopen& p) {
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->filetype = kFiletypeDirectory;
  f->can_read = true;
  f->preopen = p.guest;
  f->writable = p.writable;
  // The same rights whether or not the preopen is writable, as wasmtime's:
  // what a read-only one refuses, the calls refuse.
  f->rights = kDirRights;
  f->inheriting = kDirRights | kFileRights;
  return f;
}

bool per_instance(const Preopen& p) { return p.writable && p.host.find("{i}") != std::string::npos; }

// A writable preopen's directory for instance `index`, made when missing
// (with its parents, as mkdir -p).
int open_writable(const Preopen& p, uint64_t index, std::string& error) {
  const std::string path = replace_all(p.host, "{i}", std::to_string(index));
  for (size_t at = 1; at <= path.size(); ++at)
    if (at == path.size() || path[at] == '/') {
      const std::string prefix = path.substr(0, at);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
        error = "cannot make --dir-rw " + prefix + ": " + std::strerror(errno);
        return -1;
      }
    }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) error = "cannot open --dir-rw " + path + ": " + std::strerror(errno);
  return fd;
}

// Descriptor 0 (`input`), 1 or 2: the host's `host`, or collected in
// `sink`, or neither (stdin at its end, output discarded). A terminal, a
// pipe and memory are streams; a regular file (or a device such as
// /dev/null) keeps its offset, as it would for a native program.
std::unique_ptr<Context::Fd> stdio_fd(int host, std::string* sink, bool input) {
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->sink = sink;
  f->can_read = input;
  f->can_write = !input;
  f->stream = true;
  struct stat st {};
  if (!sink && host >= 0 && ::fstat(host, &st) == 0) {
    const bool tty = ::isatty(host) == 1;
    f->filetype = tty ? uint8_t(kFiletypeCharacterDevice) : filetype_of(st.st_mode);
    f->stream = tty || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
    const int fl = ::fcntl(host, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND)) f->flags |= kFdflagAppend;
    if (fl >= 0 && (fl & O_NONBLOCK)) f->flags |= kFdflagNonblock;
  }
  if (f->stream) f->rights = kStreamRights | (input ? kRightFdRead : kRightFdWrite);
  else f->rights = kFileRights & ~(input ? kRightFdWrite | kRightFdAllocate | kRightFdFilestatSetSize : kRightFdRead);
  f->inheriting = f->rights;
  return f;
}

}  // namespace

ssize_t write_all(int fd, const uint8_t* p, size_t n, int64_t at) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = at < 0 ? ::write(fd, p + done, n - done) : ::pwrite(fd, p + done, n - done, off_t(at + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return done ? ssize_t(done) : -1;
    done += size_t(w);
  }
  return ssize_t(done);
}

uint8_t filetype_of(mode_t m) {
  if (S_ISREG(m)) return kFiletypeRegularFile;
  if (S_ISDIR(m)) return kFiletypeDirectory;
  if (S_ISCHR(m)) return kFiletypeCharacterDevice;
  if (S_ISBLK(m)) return kFiletypeBlockDevice;
  if (S_ISLNK(m)) return kFiletypeSymbolicLink;
  if (S_ISSOCK(m)) return kFiletypeSocketStream;
  return kFiletypeUnknown;  // a FIFO too: preview 1 has no code for it
}

uint64_t ns_of(const timespec& t) { return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec); }

void filestat_bytes(const struct stat& st, uint8_t b[kFilestatSize]) {
  std::memset(b, 0, kFilestatSize);
  auto u64 = [&](size_t off, uint64_t v) { std::memcpy(b + off, &v, 8); };
  u64(0, st.st_dev);
  u64(8, st.st_ino);
  b[16] = filetype_of(st.st_mode);
  u64(24, st.st_nlink);
  u64(32, uint64_t(st.st_size));
  u64(40, ns_of(st.st_atim));
  u64(48, ns_of(st.st_mtim));
  u64(56, ns_of(st.st_ctim));
}

Context::Context(Config config) : config_(std::move(config)) {
  fds_.push_back(stdio_fd(config_.stdin_fd, nullptr, true));
  fds_.push_back(stdio_fd(config_.stdout_fd, nullptr, false));
  fds_.push_back(stdio_fd(config_.stderr_fd, nullptr, false));
}

Context::~Context() {
  fds_.clear();
  if (owns_preopens_)
    for (int fd : preopen_fds_) ::close(fd);
  for (int fd : input_dirs_)
    if (fd >= 0) ::close(fd);
}

Status Context::open_preopens() {
  for (const Preopen& p : config_.preopens) {
    std::string error;
    // A per-instance directory opens with each input (start_input); a
    // single run has instance 0.
    int fd = p.writable ? open_writable(p, 0, error) : ::open(p.host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!p.writable && fd < 0) error = "cannot open --dir " + p.host + ": " + std::strerror(errno);
    if (fd < 0) return make_error(kNoOffset, error);
    preopen_fds_.push_back(fd);
    fds_.push_back(preopen_fd(fd, p));
  }
  return Status::Ok();
}

void Context::start_input(std::vector<std::string> args, const Stdio& stdio, uint64_t seed) {
  config_.args = std::move(args);
  // A table of its own: what the last input opened, closed or renumbered
  // is gone, and its preopens are back at 3, 4, ...
  fds_.clear();
  fds_.push_back(stdio_fd(stdio.in, nullptr, true));
  fds_.push_back(stdio_fd(stdio.out ? -1 : stdio.out_fd, stdio.out, false));
  fds_.push_back(stdio_fd(stdio.err ? -1 : stdio.err_fd, stdio.err, false));
  fds_[1]->cap = fds_[2]->cap = stdio.cap;
  output_capped_ = false;
  input_dirs_.resize(preopen_fds_.size(), -1);
  for (size_t k = 0; k < preopen_fds_.size(); ++k) {
    const Preopen& p = config_.preopens[k];
    int host = preopen_fds_[k];
    if (per_instance(p)) {
      // The input's own directory, kept apart from the preopens (which a
      // GPU batch's contexts share).
      std::string error;
      host = open_writable(p, stdio.index, error);
      if (host < 0) throw std::runtime_error(error);  // the batch's error: every instance would fail alike
      if (input_dirs_[k] >= 0) ::close(input_dirs_[k]);
      input_dirs_[k] = host;
    }
    fds_.push_back(preopen_fd(host, p));
  }
  exit_code_.reset();
  seed_ = seed;
  random_counter_ = 0;
}

Context::CallHandle Context::handle(const std::string& field, const FuncType& type) {
  CallHandle h;
  h.info = find_call(field);
  h.has_errno = type.results.size() == 1 && type.results[0] == ValType::I32;
  return h;
}

TrapCode Context::call(CallHandle h, GuestMemory* mem, uint64_t* slots) {
  if (!h.info) {
    if (h.has_errno) slots[0] = kNosys;
    return TrapCode::None;
  }
  opened_.reset();
  return static_cast<const CallInfo*>(h.info)->handler(CallContext{*this, mem}, slots);
}

int Context::read_only_file(uint32_t fd) const {
  const Fd* f = fd < fds_.size() ? fds_[fd].get() : nullptr;
  return f && f->owned && !f->writable && !f->sink && f->filetype == kFiletypeRegularFile ? f->host : -1;
}

bool Context::filestat(uint32_t fd, uint8_t out[64]) const {
  const Fd* f = fd < fds_.size() ? fds_[fd].get() : nullptr;
  if (!f) return false;
  if (f->host < 0) {
    // Stdio in memory: a pipe's metadata (wasmtime's for its stdio).
    std::memset(out, 0, kFilestatSize);
    out[16] = f->filetype;
    return true;
  }
  struct stat st {};
  if (::fstat(f->host, &st) != 0) return false;
  filestat_bytes(st, out);
  return true;
}

bool Context::fdstat(uint32_t fd, uint8_t out[24]) const {
  const Fd* f = fd < fds_.size() ? fds_[fd].get() : nullptr;
  if (!f) return false;
  std::memset(out, 0, kFdstatSize);
  out[0] = f->filetype;
  std::memcpy(out + 2, &f->flags, 2);
  std::memcpy(out + 8, &f->rights, 8);
  std::memcpy(out + 16, &f->inheriting, 8);
  return true;
}

ssize_t write_capped(Context::Fd& f, const uint8_t* p, size_t n, bool& capped, int64_t at) {
  if (f.cap == 0) {
    capped = true;
    errno = EFBIG;
    return -1;
  }
  if (n > f.cap) {
    capped = true;
    n = size_t(f.cap);
  }
  ssize_t w = ssize_t(n);
  if (f.sink) f.sink->append(reinterpret_cast<const char*>(p), n);
  else if (f.host >= 0) w = write_all(f.host, p, n, at);
  if (w > 0 && f.cap != ~uint64_t{0}) f.cap -= uint64_t(w);
  return w;
}

void Context::share_descriptor(uint32_t fd, int host) {
  Fd& f = *fds_.at(fd);
  if (f.owned && f.host >= 0) ::close(f.host);
  f.host = host;
  f.owned = false;
}

void Context::stdio_write(uint32_t fd, const uint8_t* p, size_t n) {
  if (fd < 1 || fd > 2 || !fds_[fd]) return;
  (void)write_capped(*fds_[fd], p, n, output_capped_);
}

void Context::stdio_taken(uint32_t fd, uint64_t n) {
  if (fd < 1 || fd > 2 || !fds_[fd]) return;
  Fd& f = *fds_[fd];
  if (f.cap != ~uint64_t{0}) f.cap -= std::min(f.cap, n);
}

void Context::borrow_preopens(const Context& owner) {
  if (owns_preopens_)
    for (int fd : preopen_fds_) ::close(fd);
  owns_preopens_ = false;
  preopen_fds_ = owner.preopen_fds_;
  fds_.resize(3);
  for (size_t k = 0; k < preopen_fds_.size(); ++k) fds_.push_back(preopen_fd(preopen_fds_[k], config_.preopens[k]));
}

Status Context::link(Store& store, const Module& m, std::vector<std::optional<ExternVal>>& resolved) {
  resolved.resize(m.imports.size());
  for (size_t i = 0; i < m.imports.size(); ++i) {
    const Import& imp = m.imports[i];
    if (imp.kind != ExternKind::Func) {
      if (imp.module == kModuleName)
        return make_error(imp.offset, "import " + imp.module + "." + imp.field + " is not a function");
      continue;
    }
    const FuncType& type = m.types[imp.func_type];
    if (imp.module == "gpu" && (imp.field == "read_file" || imp.field == "write_file")) {
      // The `gpu` file intrinsics, over this context's preopens (their
      // type was checked with the other gpu imports).
      const bool read = imp.field == "read_file";
      resolved[i] = ExternVal{
          ExternKind::Func, store.add_host_func(type, [this, read](Store& s, uint64_t* slots) {
            const InstanceRec& inst = s.impl().instances[instance_];
            std::optional<StoreGuestMemory> mem;
            if (!inst.memories.empty()) mem.emplace(&s.impl().memories[inst.memories[0]]);
            GuestMemory* g = mem ? &*mem : nullptr;
            const uint32_t a = uint32_t(slots[0]), b = uint32_t(slots[1]), n = uint32_t(slots[2]);
            slots[0] = uint32_t(g ? (read ? read_file(g, a, b, n) : write_file(g, a, b, n)) : -int32_t(kFault));
            return TrapCode::None;
          })};
      continue;
    }
    if (imp.module != kModuleName) continue;
    const CallInfo* call = find_call(imp.field);
    if (call && !(call->type == type))
      return make_error(imp.offset, "import " + imp.module + "." + imp.field + " has type " + functype_to_string(type) +
                                        ", WASI's is " + functype_to_string(call->type));
    HostFunc fn;
    if (call) {
      fn = [this, handler = call->handler](Store& s, uint64_t* slots) {
        const InstanceRec& inst = s.impl().instances[instance_];
        if (inst.memories.empty()) return handler(CallContext{*this, nullptr}, slots);
        StoreGuestMemory mem(&s.impl().memories[inst.memories[0]]);
        return handler(CallContext{*this, &mem}, slots);
      };
    } else {
      // A call this layer lacks: ENOSYS when it returns an errno.
      const bool has_errno = type.results.size() == 1 && type.results[0] == ValType::I32;
      fn = [has_errno](Store&, uint64_t* slots) {
        if (has_errno) slots[0] = kNosys;
        return TrapCode::None;
      };
    }
    resolved[i] = ExternVal{ExternKind::Func, store.add_host_func(type, std::move(fn))};
  }
  return Status::Ok();
}

}  // namespace ww::wasi
