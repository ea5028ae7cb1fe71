#include "wasi/wasi.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wasi/wasi_internal.h"

namespace ww::wasi {

bool imports_wasi(const Module& m) {
  for (const Import& imp : m.imports)
    if (imp.module == kModuleName) return true;
  return false;
}

bool implemented(const std::string& name) { return find_call(name) != nullptr; }

namespace {

std::unique_ptr<Context::Fd> preopen_fd(int host, const std::string& guest) {
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->filetype = kFiletypeDirectory;
  f->preopen = guest;
  return f;
}

std::unique_ptr<Context::Fd> stdio_fd(int host, std::string* sink) {
  auto f = std::make_unique<Context::Fd>();
  f->host = host;
  f->sink = sink;
  struct stat st {};
  f->filetype = sink || host < 0                ? uint8_t(kFiletypeCharacterDevice)
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
  for (int fd : preopen_fds_) ::close(fd);
}


Status Context::open_preopens() {
  for (const Preopen& p : config_.preopens) {
    int fd = ::open(p.host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return make_error(kNoOffset, "cannot open --dir " + p.host + ": " + std::strerror(errno));
    preopen_fds_.push_back(fd);
    fds_.push_back(preopen_fd(fd, p.guest));
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
  for (size_t k = 0; k < preopen_fds_.size(); ++k)
    if (!fds_[3 + k]) fds_[3 + k] = preopen_fd(preopen_fds_[k], config_.preopens[k].guest);
  exit_code_.reset();
  seed_ = seed;
  random_counter_ = 0;
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
    if (imp.module != kModuleName) continue;
    const CallInfo* call = find_call(imp.field);
    if (call && !(call->type == type))
      return make_error(imp.offset, "import " + imp.module + "." + imp.field + " has type " +
                                        functype_to_string(type) + ", WASI's is " + functype_to_string(call->type));
    HostFunc fn;
    if (call) {
      fn = [this, handler = call->handler](Store& s, uint64_t* slots) {
        const InstanceRec& inst = s.impl().instances[instance_];
        CallContext c{*this, inst.memories.empty() ? nullptr : &s.impl().memories[inst.memories[0]]};
        return handler(c, slots);
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
