// The GPU batch as a loop over waves: plan, upload the module and the
// intrinsics once, then per wave initialise the instances, hand the launch
// to a KernelLauncher (the interpreter or compiled code), poll for progress
// and the timeout, and download results, traps and memory outputs. Every
// CUDA call is checked and a failure becomes an Error naming the call.
#include "exec/gpu/wave/wave_loop.cuh"

#include <cstddef>

#include "exec/gpu/device/wave_kernels.cuh"

namespace ww::gpu {

void load_kernels(bool interpreter) {
  // Asking for a kernel's attributes loads it; what fails here fails again,
  // checked, where a batch launches it.
  cudaFuncAttributes a;
  (void)cudaFuncGetAttributes(&a, read_timer_kernel);
  (void)cudaFuncGetAttributes(&a, init_state_kernel);
  (void)cudaFuncGetAttributes(&a, begin_wave_kernel);
  (void)cudaFuncGetAttributes(&a, pack_results32_kernel);
  for (DevLayout l : {DevLayout::Interleaved, DevLayout::Contiguous, DevLayout::Sparse})
    with_layout(l, [&](auto L) {
      (void)cudaFuncGetAttributes(&a, mem_in_kernel<decltype(L)::value>);
      (void)cudaFuncGetAttributes(&a, mem_out_kernel<decltype(L)::value>);
    });
  (void)cudaGetLastError();
  if (interpreter) load_interpreter_kernels();
}

void WaveLoop::bind_call() {
  const Module& m = req_.module->module;
  ftype_ = &m.func_type(req_.result_func());
  nparams_ = uint32_t(m.func_type(req_.func_index).params.size());
  nres_ = uint32_t(ftype_->results.size());
  ref_results_ = std::any_of(ftype_->results.begin(), ftype_->results.end(), is_ref);
  results32_ = results_are_32bit(ftype_->results, w_);
  v128_results_ = has_v128(ftype_->results);
}

void WaveLoop::own_results(RunResult& out, uint32_t n) {
  out.results.assign(uint64_t(n) * nres_, 0);
  out.results_hi.assign(v128_results_ ? uint64_t(n) * nres_ : 0, 0);
  out.traps.assign(n, 0);
  out.trap_func.assign(n, 0);
  out.trap_pc.assign(n, 0);
  out.finished.assign(n, 0);
  dest_ = {out.results.data(), out.traps.data(), out.trap_func.data(), out.trap_pc.data(), out.finished.data(), true};
  if (v128_results_) dest_.results_hi = out.results_hi.data();
}

Result<uint64_t> WaveLoop::device_now_ns() {
  if (!d_timer_) WW_TRY(arena_.alloc(&d_timer_, 1));
  read_timer_kernel<<<1, 1>>>(d_timer_);
  WW_CUDA(cudaGetLastError());
  uint64_t now = 0;
  WW_CUDA(cudaMemcpy(&now, d_timer_, sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return now;
}

Status WaveLoop::prepare_call(DeviceArena& arena, uint64_t now_ns) {
  bind_call();
  W_.entry = req_.func_index - req_.module->module.num_imported_funcs;
  W_.fuel = req_.fuel;
  // A call that can be cancelled has a deadline, if only the end of time,
  // so that code looks at it and stops when the host moves it.
  W_.deadline_ns = req_.timeout_s > 0 ? now_ns + uint64_t(req_.timeout_s * 1e9) : req_.cancel ? ~uint64_t{0} : 0;
  W_.args_uniform = !req_.args_per_instance && !req_.fill_args;
  W_.args = nullptr;
  W_.arg_index_kind = nullptr;
  if (W_.args_uniform) WW_TRY(arena.upload(&W_.args, as_slots(req_.args, req_.args_hi, w_)));
  if (W_.args_uniform && !req_.arg_index_kind.empty())
    WW_TRY(arena.upload(&W_.arg_index_kind, as_slots(req_.arg_index_kind, {}, w_)));
  return upload_chain(arena);
}

Status WaveLoop::setup(RunResult& out) {
  phase_t_ = Clock::now();
  trace_("wave loop start");
  // The module's arrays and the intrinsics' buffers come from the wave's
  // block: their own cudaMalloc was 0.15-0.30 ms of a 3 ms batch (SHA-256
  // and hash-wasm sha256, 1M instances).
  PackedModule packed = pack_module(img_, mod_, sparse_ && img_.has_memory ? plan_.chunk_shift : 0);
  arena_.reserve(wave_block_bytes() + packed.bytes() + intrinsics_bytes(req_.batch));
  trace_("wave buffers: one block");
  WW_ASSIGN_OR_RETURN(staging_, Resources::process().current().take_staging(req_.tuning));
  sig_ = &staging_->signals();
  sig_->words[0] = 0;
  sig_->words[1] = 1;                    // the deadline that stops a running wave
  sig_->wave_words->ignored_pixels = 0;  // as on the device, until a wave brings the count down
  trace_("wave buffers: staging");
  WW_TRY(packed.upload(arena_, staging_.get()));
  trace_("upload module: its arrays");
  WW_TRY(arena_.alloc(&words_, 1));
  WW_CUDA(cudaMemsetAsync(words_, 0, sizeof(WaveWords)));
  WW_TRY(upload_intrinsics(arena_, req_.batch, I_, &words_->ignored_pixels, req_.claim ? &canvas_before_ : nullptr,
                           req_.claim || req_.resident ? nullptr : &canvas_mapped_));
  trace_("upload module: intrinsics");
  // No synchronisation until the wave's set-up (init_wave): the module
  // and the buffers below cross meanwhile, and their device time counts
  // to the memory set-up.
  lap(upload_ms_);
  trace_("upload module");
  WW_TRY(alloc_wave_buffers());
  trace_("allocate wave buffers");

  WW_TRY(arena_.alloc(&W_.done, 1));
  WW_CUDA(cudaMemsetAsync(W_.done, 0, sizeof(unsigned long long)));
  W_.trapped = &words_->counts[0];
  W_.finished_count = &words_->counts[1];
  WW_TRY(arena_.alloc(&stream_done_, PinnedStaging::WaveSignals::kMaxStretches));

  trace_("done and trapped words");
  // Only a deadline and the clocks (gpu.get_time, WASI's) read the
  // device's clock from the batch's start; the round trip to read it was
  // 0.05-0.06 ms of a 1.5-3 ms batch.
  const bool clocks = std::any_of(img_.import_intrinsic.begin(), img_.import_intrinsic.end(),
                                  [](uint8_t id) { return id == uint8_t(Intrinsic::GetTime) || id >= kDevWasiFirst; });
  if (req_.timeout_s > 0 || clocks) {
    WW_ASSIGN_OR_RETURN(W_.start_ns, device_now_ns());
    trace_("device clock");
  }
  if (req_.batch) req_.batch->start_clock();
  WW_TRY(prepare_call(arena_, W_.start_ns));

  lap(memory_setup_ms_);
  trace_("streams, events, timer");
  out.result_types = ftype_->results;
  dest_ = req_.dest;
  if (!dest_.traps) {
    own_results(out, req_.instances);
    trace_("host result arrays");
  }
  return Status::Ok();
}

Status WaveLoop::end_phase(double& acc_ms) {
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  lap(acc_ms);
  return Status::Ok();
}

Status WaveLoop::restore_dense_memory() {
  const uint32_t words = uint32_t(mod_.num_image_words);
  if (!memory_ready_) {
    // The buffer's first use: zeros at memset speed, then the image.
    WW_CUDA(cudaMemsetAsync(W_.mem, 0, W_.mem_cap * uint64_t(groups_) * 32));
    WW_CUDA(cudaMemsetAsync(W_.mem_dirty, 0, uint64_t(groups_) * W_.mem_cap_pages));
    if (words) {
      dim3 grid(uint32_t(std::min<uint64_t>((uint64_t(words) * 32 + 255) / 256, 4096)), std::min(groups_, 65535u));
      with_dense_layout(layout_, [&](auto L) {
        copy_image_kernel<decltype(L)::value><<<grid, 256>>>(W_, groups_, mod_.image_words, words);
      });
      WW_CUDA(cudaGetLastError());
    }
    memory_ready_ = true;
    return Status::Ok();
  }
  const uint64_t flags = uint64_t(groups_) * W_.mem_cap_pages;
  if (flags > 0x7fffffffu) return make_error(kNoOffset, "GPU batch: too many memory pages per wave");
  with_dense_layout(layout_, [&](auto L) {
    restore_dirty_pages_kernel<decltype(L)::value><<<uint32_t(flags), 256>>>(W_, mod_.image_words, words);
  });
  WW_CUDA(cudaGetLastError());
  return Status::Ok();
}

bool WaveLoop::args_per_row() const { return nparams_ && (req_.fill_args || req_.args_per_instance); }

bool WaveLoop::inputs_on_wire() const { return args_per_row() || !req_.mem_in.empty() || !req_.device_args.empty(); }

Status WaveLoop::prepare_arg_rows(uint32_t n) {
  // Values land at rows k * w_; the rows between hold the high words,
  // zero but for v128 constants.
  if (!args_per_row() || w_ == 1) return Status::Ok();
  WW_CUDA(cudaMemsetAsync(W_.io, 0, uint64_t(nparams_) * w_ * n * 8));
  for (uint32_t k = 0; k < nparams_ && k < req_.args_hi.size(); ++k)
    if (req_.args_hi[k]) {
      fill_words_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(W_.io + (uint64_t(k) * w_ + 1) * n, req_.args_hi[k], n);
      WW_CUDA(cudaGetLastError());
    }
  return Status::Ok();
}

Status WaveLoop::upload_args(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1) {
  // Value k of instance t at io[k * w_ * n + t] (shared ones were uploaded
  // once, in setup).
  if (!args_per_row() || r1 <= r0) return Status::Ok();
  const uint32_t rows = staging_rows_;
  return staging_->upload((r1 - r0 + rows - 1) / rows,
                          [&](uint64_t p, void* buf) {
                            uint64_t* io = static_cast<uint64_t*>(buf);
                            const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                            if (req_.fill_args) {
                              req_.fill_args(first + off, m, io);
                              return;
                            }
                            for (uint32_t t = 0; t < m; ++t)
                              for (uint32_t k = 0; k < nparams_; ++k)
                                io[uint64_t(k) * m + t] = req_.args[uint64_t(first + off + t) * nparams_ + k];
                          },
                          [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
                            const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                            WW_CUDA(cudaMemcpy2DAsync(W_.io + off, uint64_t(n) * w_ * 8, buf, uint64_t(m) * 8,
                                                      uint64_t(m) * 8, nparams_, cudaMemcpyHostToDevice, s));
                            return Status::Ok();
                          });
}

Status WaveLoop::upload_mem_in(uint32_t first, uint32_t r0, uint32_t r1) {
  for (size_t k = 0; k < req_.mem_in.size(); ++k) {
    const MemIn& mi = req_.mem_in[k];
    WW_TRY(staging_->send(d_mem_in_[k] + uint64_t(r0) * mi.record_size,
                          mi.data + (uint64_t(first) + r0) * mi.record_size, uint64_t(r1 - r0) * mi.record_size));
  }
  return Status::Ok();
}

Status WaveLoop::upload_inputs(uint32_t first, uint32_t n) {
  WW_TRY(prepare_arg_rows(n));
  WW_TRY(upload_args(first, n, 0, n));
  // Columns already on the device go over what the host wrote for them.
  for (size_t k = 0; k < req_.device_args.size() && k < nparams_; ++k) {
    const BatchRequest::DeviceColumn& c = req_.device_args[k];
    if (!c.data) continue;
    column_in_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(
        static_cast<const uint8_t*>(c.data) + uint64_t(first) * c.width, c.width, n, W_.io + uint64_t(k) * w_ * n);
    WW_CUDA(cudaGetLastError());
  }
  WW_TRY(upload_mem_in(first, 0, n));
  // Inputs on the wire are the upload's: it waits for them. Without any,
  // the set-up's synchronisation covers the wave's few words.
  if (inputs_on_wire()) WW_TRY(end_phase(upload_ms_));
  else lap(upload_ms_);
  trace_("wave: arguments, inputs");
  return Status::Ok();
}

Status WaveLoop::apply_memory_inputs(const DevWave& w, uint32_t blocks, cudaStream_t stream) {
  for (size_t k = 0; k < req_.mem_in.size(); ++k) {
    const MemIn& mi = req_.mem_in[k];
    with_layout(layout_, [&](auto L) {
      mem_in_kernel<decltype(L)::value><<<blocks, kBlock, 0, stream>>>(w, d_mem_in_[k], mi.record_size, mi.address);
    });
    WW_CUDA(cudaGetLastError());
  }
  return Status::Ok();
}

Status WaveLoop::launch_mem_out(const DevWave& w, uint32_t blocks, cudaStream_t stream) {
  for (size_t k = 0; k < req_.mem_out.size(); ++k) {
    const MemOut& mo = req_.mem_out[k];
    with_layout(layout_, [&](auto L) {
      mem_out_kernel<decltype(L)::value><<<blocks, kBlock, 0, stream>>>(w, d_mem_out_[k], mo.length, mo.address);
    });
    WW_CUDA(cudaGetLastError());
  }
  return Status::Ok();
}

Status WaveLoop::begin_wave(uint32_t n, Fresh fresh) {
  words_queued_ = false;  // a wave's own launch queues them
  WaveStart start;
  start.stacks = stack_pool_.on();
  start.instances = fresh.instances;
  start.done = fresh.done;
  const bool sparse_memory = sparse_ && W_.mem_cap;
  if (fresh.memory && sparse_memory) {
    // Nothing of the pool needs clearing: an instance copies its part of
    // the image into a chunk on its first write there.
    start.clear = W_.chunk_table;
    start.clear_words = chunk_table_entries();
    start.pool_used = true;
  }
  begin_wave_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(mod_.M, W_, mod_.init, start);
  WW_CUDA(cudaGetLastError());
  trace_("wave: set-up kernel");
  if (fresh.memory && W_.mem_cap && !sparse_memory) WW_TRY(restore_dense_memory());
  trace_("wave: memory reset");
  return Status::Ok();
}

Status WaveLoop::init_wave(uint32_t first, uint32_t n, uint32_t blocks) {
  WW_CUDA(cudaEventRecord(sig_->setup));
  WW_TRY(upload_inputs(first, n));
  WW_TRY(begin_wave(n, {true, true, false}));
  WW_TRY(apply_memory_inputs(W_, blocks, nullptr));
  // The kernel is queued behind the set-up, not after a wait for it, which
  // would make the host and the device take turns once more every wave;
  // launch_and_wait counts the set-up's device time.
  setup_queued_ = true;
  lap(memory_setup_ms_);
  return Status::Ok();
}

// What the host reads after every wave (WaveWords) comes down in one
// transfer; without `counts`, those are on the host already and stay as
// they came.
Status WaveLoop::queue_wave_words(bool counts) {
  static_assert(sizeof(WaveWords) % 8 == 0 && offsetof(WaveWords, pool_used) % 8 == 0);
  const size_t from = counts ? 0 : offsetof(WaveWords, pool_used);
  WW_CUDA(cudaMemcpyAsync(reinterpret_cast<char*>(sig_->wave_words) + from,
                          reinterpret_cast<const char*>(words_) + from, sizeof(WaveWords) - from,
                          cudaMemcpyDeviceToHost, cudaStreamPerThread));
  return Status::Ok();
}

// A slice's kernels on the compute stream (wave_slices.cu runs the
// slices): here, since wave_kernels.cuh's kernels are defined in one file.
Status WaveLoop::launch_slice(uint32_t k, uint32_t r0, uint32_t r1) {
  WW_TRY(drop_queued_canvas());
  using Signals = PinnedStaging::WaveSignals;
  const cudaEvent_t* ev = sig_->slice[k];
  const cudaStream_t s = sig_->compute[k % PinnedStaging::WaveSignals::kComputeStreams];
  DevWave w = W_;
  w.t_base = r0;
  const uint32_t blocks = (r1 - r0 + kBlock - 1) / kBlock;
  WW_CUDA(cudaEventRecord(ev[Signals::kInputs], cudaStreamPerThread));
  WW_CUDA(cudaStreamWaitEvent(s, ev[Signals::kInputs], 0));
  WW_CUDA(cudaEventRecord(ev[Signals::kSetUp], s));
  init_state_kernel<<<blocks, kBlock, 0, s>>>(mod_.M, w, mod_.init);
  WW_CUDA(cudaGetLastError());
  WW_TRY(apply_memory_inputs(w, blocks, s));
  WW_CUDA(cudaEventRecord(ev[Signals::kKernel], s));
  WW_TRY(launcher_.launch(mod_.M, w, I_, blocks, layout_, s));
  WW_CUDA(cudaEventRecord(ev[Signals::kOutputs], s));
  WW_TRY(launch_mem_out(w, blocks, s));
  WW_CUDA(cudaEventRecord(ev[Signals::kDone], s));
  return Status::Ok();
}

// Mandelbrot's 33 MB canvas came down through the staging after its 33 MB
// of results, 0.7 ms each, behind a 0.3 ms kernel (bench/RESULTS.md).
Status WaveLoop::queue_canvas(uint32_t first, uint32_t n) {
  GpuBatch* gb = req_.batch;
  if (!gb || !gb->image || !I_.image || req_.claim || req_.resident || canvas_mapped_ || first + n < req_.instances)
    return Status::Ok();
  const uint64_t bytes = gb->image->pixels.size() * 4;
  if (!host_range_pinned(gb->image->pixels.data(), bytes)) return Status::Ok();
  WW_CUDA(cudaStreamWaitEvent(sig_->outputs, sig_->stop, 0));
  WW_CUDA(cudaMemcpyAsync(gb->image->pixels.data(), I_.image, bytes, cudaMemcpyDeviceToHost, sig_->outputs));
  WW_CUDA(cudaEventRecord(sig_->canvas, sig_->outputs));
  canvas_queued_ = true;
  return Status::Ok();
}

// Waits for queue_canvas's copy. Before a later launch (a wave that runs
// again draws after the copy) finish_outputs() then fetches the canvas, once the
// copy has stopped writing it.
Status WaveLoop::drop_queued_canvas() {
  if (canvas_queued_) WW_CUDA(cudaEventSynchronize(sig_->canvas));
  canvas_queued_ = false;
  return Status::Ok();
}

Status WaveLoop::download_wave(uint32_t first, uint32_t n, uint32_t blocks, RunResult& out) {
  WW_TRY(queue_canvas(first, n));
  WW_TRY(launch_mem_out(W_, blocks, nullptr));
  WW_TRY(fetch_outputs(first, n, streamed_rows_, n));
  return download_status(first, n);
}

Status WaveLoop::fetch_outputs(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down) {
  if (r1 <= r0) return Status::Ok();  // every row streamed (wave_stream.cu)
  for (size_t k = 0; k < req_.mem_out.size(); ++k) {
    const MemOut& mo = req_.mem_out[k];
    WW_TRY(staging_->fetch(mo.data + (uint64_t(first) + r0) * mo.length, d_mem_out_[k] + uint64_t(r0) * mo.length,
                           uint64_t(r1 - r0) * mo.length, down));
  }
  if (nres_ && !req_.device_results.empty()) {
    // Results that stay on the device: column by column where the caller
    // said (a wave with them runs unsliced).
    for (uint32_t k = 0; k < nres_ && k < req_.device_results.size(); ++k) {
      const BatchRequest::DeviceOut& o = req_.device_results[k];
      column_out_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(
          W_.io + uint64_t(k) * w_ * n, W_.trap, o.width, n, static_cast<uint8_t*>(o.data) + uint64_t(first) * o.width);
      WW_CUDA(cudaGetLastError());
    }
  } else if (nres_ && results32_) {
    if (!results_mapped_) WW_TRY(download_results32(first, n, r0, r1, down));  // else the kernel wrote them
    trace_("wave: download results");
  } else if (nres_) {
    const InstanceRec& irec = S_.instances[instance_];
    const uint32_t rows = staging_rows_;
    WW_TRY(staging_->download((r1 - r0 + rows - 1) / rows,
                              [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
                                const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                                WW_CUDA(cudaMemcpy2DAsync(buf, uint64_t(m) * 8, W_.io + off, uint64_t(n) * 8,
                                                          uint64_t(m) * 8, nres_ * w_, cudaMemcpyDeviceToHost, s));
                                return Status::Ok();
                              },
                              [&](uint64_t p, void* buf) {
                                const uint64_t* io = static_cast<const uint64_t*>(buf);
                                const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                                const BatchRequest::Destination to_d = dest_.from(first + off, nres_);
                                uint64_t* to = to_d.results;
                                uint64_t* to_hi = to_d.results_hi;
                                uint32_t* to32 = to_d.results32;  // 32-bit results in wider slots (v128 modules)
                                if (nres_ == 1 && w_ == 1 && !ref_results_ && !to32) {
                                  parallel_copy(to, io, uint64_t(m) * 8);
                                  return;
                                }
                                // Column k of the piece to field k of each row, in row blocks on
                                // every core (references are translated on one: they are rare).
                                const uint32_t block = ref_results_ ? m : 1u << 15;
                                run_on_host_workers((m + block - 1) / block, [&](size_t b) {
                                  const uint32_t t0 = uint32_t(b) * block, t1 = std::min(m, t0 + block);
                                  for (uint32_t t = t0; t < t1; ++t)
                                    for (uint32_t k = 0; k < nres_; ++k) {
                                      uint64_t v = io[uint64_t(k) * w_ * m + t];
                                      if (is_ref(ftype_->results[k]))
                                        v = from_gpu_ref(irec, img_, ftype_->results[k], v);
                                      if (to32) {
                                        to32[uint64_t(t) * nres_ + k] = uint32_t(v);
                                        continue;
                                      }
                                      to[uint64_t(t) * nres_ + k] = v;
                                      if (to_hi)
                                        to_hi[uint64_t(t) * nres_ + k] =
                                            w_ > 1 ? io[(uint64_t(k) * w_ + 1) * m + t] : 0;
                                    }
                                });
                              },
                              down));
    trace_("wave: download results");
  }
  return Status::Ok();
}

// 32-bit results, packed on the device. Into a pinned 4-byte column they
// come straight down; otherwise through the staging, copied, transposed or
// widened into their column there.
Status WaveLoop::download_results32(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down) {
  uint32_t* to32 = dest_.results32 ? dest_.results32 + uint64_t(first) * nres_ : nullptr;
  const bool direct = to32 && nres_ == 1 && host_range_pinned(to32 + r0, uint64_t(r1 - r0) * 4);
  if (direct && W_.packed32) {
    WW_TRY(staging_->fetch(to32 + r0, W_.packed32 + r0, uint64_t(r1 - r0) * 4, down));
    trace_("wave: results straight down");
    return Status::Ok();
  }
  const uint32_t rows = uint32_t(std::min<uint64_t>(r1 - r0, staging_->piece_bytes() / (4 * uint64_t(nres_))));
  return staging_->download((r1 - r0 + rows - 1) / rows,
                            [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
                              const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                              if (W_.packed32) {  // packed as the instances finished
                                WW_CUDA(cudaMemcpy2DAsync(buf, uint64_t(m) * 4, W_.packed32 + off, uint64_t(n) * 4,
                                                          uint64_t(m) * 4, nres_, cudaMemcpyDeviceToHost, s));
                                return Status::Ok();
                              }
                              uint32_t* packed = results32_scratch_[p & 1];
                              pack_results32_kernel<<<(m + kBlock - 1) / kBlock, kBlock, 0, s>>>(W_.io, n, off, m,
                                                                                                 nres_, packed);
                              WW_CUDA(cudaGetLastError());
                              WW_CUDA(cudaMemcpyAsync(direct ? static_cast<void*>(to32 + off) : buf, packed,
                                                      uint64_t(m) * nres_ * 4, cudaMemcpyDeviceToHost, s));
                              return Status::Ok();
                            },
                            [&](uint64_t p, void* buf) {
                              trace_("wave: 32-bit results piece down");
                              if (direct) return;
                              const uint32_t* v = static_cast<const uint32_t*>(buf);
                              const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                              if (to32 && nres_ == 1) {
                                parallel_copy(to32 + off, v, uint64_t(m) * 4);
                                return;
                              }
                              uint64_t* to = to32 ? nullptr : dest_.results + uint64_t(first + off) * nres_;
                              if (nres_ == 1) {
                                parallel_widen_u32(to, v, m);
                                return;
                              }
                              uint32_t* row32 = to32 ? to32 + uint64_t(off) * nres_ : nullptr;
                              constexpr uint32_t kRowsPerJob = 1u << 16;
                              run_on_host_workers((m + kRowsPerJob - 1) / kRowsPerJob, [&](size_t b) {
                                const uint32_t t0 = uint32_t(b) * kRowsPerJob, t1 = std::min(m, t0 + kRowsPerJob);
                                for (uint32_t t = t0; t < t1; ++t)
                                  for (uint32_t k = 0; k < nres_; ++k) {
                                    const uint32_t x = v[uint64_t(k) * m + t];
                                    if (row32) row32[uint64_t(t) * nres_ + k] = x;
                                    else to[uint64_t(t) * nres_ + k] = x;
                                  }
                              });
                            },
                            down);
}

// Instance 0's final state back into the source instance (the spec runner).
Status WaveLoop::write_back_first(uint32_t n) {
  InstanceState st;
  WW_CUDA(cudaMemcpy(&st.pages, W_.mem_pages, 4, cudaMemcpyDeviceToHost));
  if (img_.has_memory) {
    uint64_t bytes = uint64_t(st.pages) * kPageSize;
    uint8_t* d_tmp;
    WW_TRY(arena_.alloc(&d_tmp, bytes));
    with_layout(layout_, [&](auto L) { gather_memory_kernel<decltype(L)::value><<<1024, 256>>>(W_, d_tmp, bytes); });
    WW_CUDA(cudaGetLastError());
    st.memory.resize(bytes);
    WW_CUDA(cudaMemcpy(st.memory.data(), d_tmp, bytes, cudaMemcpyDeviceToHost));
  }
  WW_TRY(download_column0(st.globals, W_.globals, mod_.init.nglobals, n));
  WW_TRY(download_column0(st.data_dropped, W_.data_dropped, mod_.init.ndatas, n));
  WW_TRY(download_column0(st.elem_dropped, W_.elem_dropped, mod_.init.nelems, n));
  if (img_.tables_mutable) {
    WW_TRY(download_column0(st.table_size, W_.table_size, mod_.M.num_tables, n));
    WW_TRY(download_column0(st.table_elems, W_.tables, mod_.init.total_table_cap, n));
  } else {
    st.table_size = img_.table_init_size;
    st.table_elems = img_.table_elems;
  }
  write_back(S_, instance_, img_, st);
  return Status::Ok();
}

Status WaveLoop::run_wave(uint32_t first, uint32_t n, RunResult& out, uint32_t* redo) {
  *redo = 0;
  W_.n = n;
  W_.first = req_.index_base + first;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  const bool cancelled = req_.cancel && req_.cancel->load();
  if (cancelled || (req_.timeout_s > 0 && seconds_since(t_start_) > req_.timeout_s)) {
    const TrapCode why = cancelled ? TrapCode::Interrupted : TrapCode::Timeout;
    for (uint32_t t = 0; t < n; ++t) dest_.traps[first + t] = uint8_t(why);
    // Rows that an earlier run finished (a stretch run again) are
    // unfinished now, as the trap says.
    parallel_fill(dest_.finished + first, 0, n);
    return Status::Ok();
  }
  if (req_.host_calls) req_.host_calls->begin(W_.first, n);
  const Status ran = [&]() -> Status {
    WW_TRY(begin_stream(n));
    if (const uint32_t slices = slice_count(n); slices > 1) return run_slices(first, n, slices);
    WW_TRY(init_wave(first, n, blocks));
    if (host_calls_) WW_TRY(host_calls_->begin_wave(W_, I_));
    WW_TRY(launch_chain(blocks, out));
    if (host_calls_) WW_TRY(host_calls_->end_wave(W_, I_, W_.first));
    return download_wave(first, n, blocks, out);
  }();
  if (!ran.ok()) {
    // No row of a wave that failed passes for finished.
    if (finished_prefilled_) parallel_fill(dest_.finished + first, 0, n);
    return ran;
  }
  if (req_.cancel && req_.cancel->load()) {
    // Instances the cancel stopped report so, not the deadline it moved.
    for (uint32_t t = 0; t < n; ++t)
      if (!dest_.finished[first + t]) dest_.traps[first + t] = uint8_t(TrapCode::Interrupted);
  }
  if (sparse_ && W_.mem_cap) WW_TRY(account_pool(first, n, redo));
  WW_ASSIGN_OR_RETURN(StackPool::Outcome stack,
                      stack_pool_.account(arena_, W_, dest_.traps + first, n, sig_->wave_words->stack_used));
  *redo = std::max(*redo, stack.redo);
  stack_pool_grew_ = stack.grew;
  if (stack.wave_cap) stack_wave_cap_ = stack_wave_cap_ ? std::min(stack_wave_cap_, stack.wave_cap) : stack.wave_cap;
  trace_("wave: pool accounting");
  if (req_.write_back && first == 0) WW_TRY(write_back_first(n));
  waves_done_ += n - *redo;
  if (req_.progress) req_.progress(waves_done_, req_.instances, seconds_since(t_start_));
  return Status::Ok();
}

Status WaveLoop::begin_resident(uint32_t n) {
  W_.n = n;
  W_.first = req_.index_base;
  return init_wave(0, n, (n + kBlock - 1) / kBlock);
}

Status WaveLoop::resident_call(RunResult& out) {
  const uint32_t n = W_.n;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  phase_t_ = Clock::now();
  // What only this call needs goes when it ends.
  DeviceArena call;
  WW_ASSIGN_OR_RETURN(uint64_t now, device_now_ns());
  WW_TRY(prepare_call(call, now));
  WW_TRY(alloc_memory_io(call, n));
  out.result_types = ftype_->results;
  own_results(out, n);
  WW_TRY(upload_inputs(0, n));
  // The instances keep their state and memory from call to call.
  WW_TRY(begin_wave(n, {false, false, true}));
  WW_TRY(apply_memory_inputs(W_, blocks, nullptr));
  WW_TRY(end_phase(memory_setup_ms_));
  setup_queued_ = false;  // begin_resident's set-up is long done
  if (req_.host_calls) req_.host_calls->begin(W_.first, n);
  WW_TRY(launch_chain(blocks, out));
  WW_TRY(download_wave(0, n, blocks, out));
  if (req_.cancel && req_.cancel->load())
    for (uint32_t t = 0; t < n; ++t)
      if (!dest_.finished[t]) dest_.traps[t] = uint8_t(TrapCode::Interrupted);
  d_mem_in_.clear();
  d_mem_out_.clear();
  return Status::Ok();
}

Status WaveLoop::check_range(uint64_t addr, uint64_t len, const char* what) {
  if (!img_.has_memory) return make_error(kNoOffset, std::string(what) + ": the module has no memory");
  std::vector<uint32_t> pages(W_.n);
  WW_CUDA(cudaMemcpy(pages.data(), W_.mem_pages, uint64_t(W_.n) * 4, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < W_.n; ++t)
    if (addr + len > uint64_t(pages[t]) * kPageSize || addr + len < addr)
      return make_error(kNoOffset, std::string(what) + ": bytes [" + std::to_string(addr) + ", " +
                                       std::to_string(addr + len) + ") are past instance " + std::to_string(t) +
                                       "'s memory (" + std::to_string(pages[t]) + " pages)");
  return Status::Ok();
}

Status WaveLoop::read_memory(uint64_t addr, uint64_t len, uint8_t* out) {
  WW_TRY(check_range(addr, len, "read_memory"));
  if (len == 0) return Status::Ok();
  const uint32_t n = W_.n, blocks = (n + kBlock - 1) / kBlock;
  DeviceArena call;
  uint8_t* d = nullptr;
  WW_TRY(call.alloc(&d, uint64_t(n) * len));
  with_layout(layout_, [&](auto L) {
    mem_out_kernel<decltype(L)::value><<<blocks, kBlock>>>(W_, d, uint32_t(len), uint32_t(addr));
  });
  WW_CUDA(cudaGetLastError());
  return staging_->fetch(out, d, uint64_t(n) * len);
}

Status WaveLoop::write_memory(uint64_t addr, uint64_t record, const uint8_t* data) {
  WW_TRY(check_range(addr, record, "write_memory"));
  if (record == 0) return Status::Ok();
  const uint32_t n = W_.n, blocks = (n + kBlock - 1) / kBlock;
  DeviceArena call;
  uint8_t* d = nullptr;
  WW_TRY(call.alloc(&d, uint64_t(n) * record));
  WW_TRY(staging_->send(d, data, uint64_t(n) * record));
  with_layout(layout_, [&](auto L) {
    mem_in_kernel<decltype(L)::value><<<blocks, kBlock>>>(W_, d, uint32_t(record), uint32_t(addr));
  });
  WW_CUDA(cudaGetLastError());
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  return Status::Ok();
}

}  // namespace ww::gpu
