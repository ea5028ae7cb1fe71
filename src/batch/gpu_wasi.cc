#include "batch/gpu_wasi.h"

#include <sys/resource.h>

#include <algorithm>
#include <stdexcept>

namespace ww::batch {

GpuWasiCalls::GpuWasiCalls(const WasiBatch& w, const Module& m, BatchResult& out, uint64_t first, uint64_t count)
    : w_(w), out_(out), first_(first), count_(count), owner_(w.config) {
  for (const Import& im : m.imports)
    if (im.kind == ExternKind::Func)
      handles_.push_back(im.module == wasi::kModuleName ? wasi::Context::handle(im.field, m.types[im.func_type])
                                                        : wasi::Context::CallHandle{});
  live_.resize(count);
  exited_.assign(count, 0);
  capped_.assign(count, 0);
  exit_code_.assign(count, 0);
}

Status GpuWasiCalls::open() {
  // Every waiting instance may hold files open at once: as many
  // descriptors as the process may have.
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &lim);
  }
  // An stdio pattern that cannot be opened fails the batch before it
  // starts, as on the CPU (instance `first`'s files are made now, as they
  // would be at its first call).
  try {
    WasiInput probe(w_, first_, nullptr, nullptr);
  } catch (const std::exception& e) {
    return make_error(kNoOffset, e.what());
  }
  return owner_.open_preopens();
}

uint32_t GpuWasiCalls::max_wave() const {
  if (w_.config.preopens.empty()) return 0;
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 0;
  // About four descriptors per instance (SQLite: its database and a
  // journal), with room for the process's own.
  return uint32_t(std::max<uint64_t>(32, (uint64_t(lim.rlim_cur) > 512 ? lim.rlim_cur - 512 : 0) / 4));
}

void GpuWasiCalls::begin(uint32_t first, uint32_t n) {
  // A wave (or one run again): what these instances had goes, output too.
  for (uint64_t i = first; i < uint64_t(first) + n && i - first_ < count_; ++i) {
    const uint64_t k = i - first_;
    live_[k].reset();
    exited_[k] = capped_[k] = 0;
    exit_code_[k] = 0;
    if (!out_.stdout_blocks.empty()) out_.stdout_blocks[i].clear();
    if (!out_.stderr_blocks.empty()) out_.stderr_blocks[i].clear();
  }
}

GpuWasiCalls::Live& GpuWasiCalls::live(uint32_t instance) {
  std::unique_ptr<Live>& l = live_[instance - first_];
  if (!l) {
    l = std::make_unique<Live>();
    l->cx = std::make_unique<wasi::Context>(w_.config);
    l->cx->borrow_preopens(owner_);
    l->input = std::make_unique<WasiInput>(w_, instance, out_.stdout_blocks.empty() ? nullptr : &out_.stdout_blocks[instance],
                                           out_.stderr_blocks.empty() ? nullptr : &out_.stderr_blocks[instance]);
    l->input->start(*l->cx, w_.seed + instance);
  }
  return *l;
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
  const uint64_t k = c.instance - first_;
  c.trap = l->cx->call(handles_[c.func], c.memory, c.io);
  if (c.trap == TrapCode::Exit && l->cx->exit_code()) {
    exited_[k] = 1;
    exit_code_[k] = *l->cx->exit_code();
  }
  if (l->cx->output_capped()) capped_[k] = 1;
}

void GpuWasiCalls::finish() {
  live_.clear();  // closes per-instance files
  for (uint64_t k = 0; k < count_; ++k) {
    const uint64_t i = first_ + k;
    if (exited_[k] && out_.traps[i] == uint8_t(TrapCode::Exit)) {
      out_.traps[i] = uint8_t(TrapCode::None);
      out_.trap_func[i] = 0;
      out_.trap_pc[i] = 0;
      out_.results[i] = exit_code_[k];
    }
    if (capped_[k]) {
      ++out_.output_capped;
      out_.first_output_capped = std::min<uint64_t>(out_.first_output_capped, i);
    }
  }
}

}  // namespace ww::batch
