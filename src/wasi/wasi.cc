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
  f->preopen = p.guest;
  f->writable = p.writable;
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

std::unique_ptr<Context::Fd> stdio_fd(int host, std::string* sink) {
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->sink = sink;
  struct stat st {};
  f->filetype = sink || host < 0          ? uint8_t(kFiletypeCharacterDevice)
                : ::fstat(host, &st) == 0 ? filetype_of(st.st_mode)
                                          : uint8_t(kFiletypeUnknown);
  return f;
}

}  // namespace

Context::Context(Config config) : config_(std::move(config)) {
  for (int host : {config_.stdin_fd, config_.stdout_fd, config_.stderr_fd}) fds_.push_back(stdio_fd(host, nullptr));
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
  fds_.resize(3 + preopen_fds_.size());
  fds_[0] = stdio_fd(stdio.in, nullptr);
  fds_[1] = stdio_fd(stdio.out ? -1 : stdio.out_fd, stdio.out);
  fds_[2] = stdio_fd(stdio.err ? -1 : stdio.err_fd, stdio.err);
  fds_[1]->cap = fds_[2]->cap = stdio.cap;
  output_capped_ = false;
  input_dirs_.resize(preopen_fds_.size(), -1);
  for (size_t k = 0; k < preopen_fds_.size(); ++k) {
    const Preopen& p = config_.preopens[k];
    if (per_instance(p)) {
      // The input's own directory, kept apart from the preopens (which a
      // GPU batch's contexts share).
      std::string error;
      int fd = open_writable(p, stdio.index, error);
      if (fd < 0) throw std::runtime_error(error);  // the batch's error: every instance would fail alike
      if (input_dirs_[k] >= 0) ::close(input_dirs_[k]);
      input_dirs_[k] = fd;
      fds_[3 + k] = preopen_fd(fd, p);
    }
    if (!fds_[3 + k]) fds_[3 + k] = preopen_fd(preopen_fds_[k], p);
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
