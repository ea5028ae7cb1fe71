// The wave loop's own steps: its set-up, a wave in one launch from its
// set-up to its rows, a resident batch's calls, and the context's call
// shape and phases. Every CUDA call is checked and a failure becomes an
// Error naming the call.
#include "exec/gpu/wave/wave_loop.cuh"

#include <algorithm>

#include "exec/gpu/device/dev_wasi_ids.h"
#include "exec/gpu/wave/wave_kernels.h"

namespace ww::gpu {

void WaveContext::bind_call() {
  const Module& m = req.module->module;
  ftype = &m.func_type(req.result_func());
  nparams = uint32_t(m.func_type(req.func_index).params.size());
  nres = uint32_t(ftype->results.size());
  ref_results = std::any_of(ftype->results.begin(), ftype->results.end(), is_ref);
  results32 = results_are_32bit(ftype->results, slot_width);
  v128_results = has_v128(ftype->results);
}

Status WaveContext::end_phase(double& acc_ms) {
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  lap(acc_ms);
  return Status::Ok();
}

bool WaveContext::args_per_row() const { return nparams && (req.fill_args || req.args_per_instance); }

bool WaveContext::inputs_on_wire() const { return args_per_row() || !req.mem_in.empty() || !req.device_args.empty(); }

bool WaveContext::finished_from_count() const { return !req.resident && !serves_host_calls && req.then.empty(); }

void WaveLoop::own_results(RunResult& out, uint32_t n) {
  out.results.assign(uint64_t(n) * c_.nres, 0);
  out.results_hi.assign(c_.v128_results ? uint64_t(n) * c_.nres : 0, 0);
  out.traps.assign(n, 0);
  out.trap_func.assign(n, 0);
  out.trap_pc.assign(n, 0);
  out.finished.assign(n, 0);
  c_.dest = {out.results.data(), out.traps.data(), out.trap_func.data(), out.trap_pc.data(), out.finished.data(), true};
  if (c_.v128_results) c_.dest.results_hi = out.results_hi.data();
}

Status WaveLoop::setup(RunResult& out) {
  c_.phase_t = Clock::now();
  c_.trace("wave loop start");
  // The module's arrays and the intrinsics' buffers come from the wave's
  // block: their own cudaMalloc would be a visible share of a small batch
  // (SHA-256 and hash-wasm sha256, 1M instances).
  PackedModule packed = pack_module(c_.img, b_.mod, c_.sparse && c_.img.has_memory ? c_.plan.chunk_shift : 0);
  b_.arena.reserve(b_.wave_block_bytes() + packed.bytes() + intrinsics_bytes(c_.req.batch));
  c_.trace("wave buffers: one block");
  WW_ASSIGN_OR_RETURN(x_.staging, Resources::process().current().take_staging(c_.req.tuning));
  x_.sig = &x_.staging->signals();
  x_.sig->words[0] = 0;
  x_.sig->words[1] = 1;                    // the deadline that stops a running wave
  x_.sig->wave_words->ignored_pixels = 0;  // as on the device, until a wave brings the count down
  c_.trace("wave buffers: staging");
  WW_TRY(packed.upload(b_.arena, *x_.staging));
  c_.trace("upload module: its arrays");
  WW_TRY(b_.arena.alloc(&b_.wave_words, 1));
  WW_CUDA(cudaMemsetAsync(b_.wave_words, 0, sizeof(WaveWords)));
  WW_TRY(upload_intrinsics(b_.arena, c_.req.batch, b_.I, &b_.wave_words->ignored_pixels,
                           c_.req.claim ? &b_.canvas_before : nullptr,
                           c_.req.claim || c_.req.resident ? nullptr : &b_.canvas_mapped));
  c_.trace("upload module: intrinsics");
  // No synchronisation until the wave's set-up (init_wave): the module
  // and the buffers below cross meanwhile, and their device time counts
  // to the memory set-up.
  c_.lap(c_.upload_ms);
  c_.trace("upload module");
  WW_TRY(b_.alloc_wave_buffers(l_.host_calls.get()));
  // Each staging piece holds this many instances' values of the widest
  // direction (then bytes for traps and flags, words for trap sites).
  const uint64_t row_bytes = 8 * std::max<uint64_t>(io_slots(c_.req), 1);
  x_.staging_rows = uint32_t(std::min<uint64_t>(c_.plan.wave_size, c_.req.tuning.staging_piece_bytes() / row_bytes));
  c_.trace("allocate wave buffers");

  WW_TRY(b_.arena.alloc(&b_.W.done, 1));
  WW_CUDA(cudaMemsetAsync(b_.W.done, 0, sizeof(unsigned long long)));
  b_.W.trapped = &b_.wave_words->counts[0];
  b_.W.finished_count = &b_.wave_words->counts[1];
  WW_TRY(b_.arena.alloc(&b_.stream_done, PinnedStaging::WaveSignals::kMaxStretches));

  c_.trace("done and trapped words");
  // Only a deadline and the clocks (gpu.get_time, WASI's) read the
  // device's clock from the batch's start; the round trip to read it is a
  // visible cost in a small batch.
  const bool clocks = std::any_of(c_.img.import_intrinsic.begin(), c_.img.import_intrinsic.end(), [](uint8_t id) {
    return id == uint8_t(Intrinsic::GetTime) || (id >= kDevWasiFirst && !dev_stand_in(id));
  });
  if (c_.req.timeout_s > 0 || clocks) {
    WW_ASSIGN_OR_RETURN(b_.W.start_ns, b_.device_now_ns());
    c_.trace("device clock");
  }
  if (c_.req.batch) c_.req.batch->start_clock();
  WW_TRY(b_.prepare_call(b_.arena, b_.W.start_ns));

  c_.lap(c_.memory_setup_ms);
  c_.trace("streams, events, timer");
  out.result_types = c_.ftype->results;
  c_.dest = c_.req.dest;
  if (!c_.dest.traps) {
    own_results(out, c_.req.instances);
    c_.trace("host result arrays");
  }
  return Status::Ok();
}

Status WaveLoop::init_wave(uint32_t first, uint32_t n, uint32_t blocks) {
  WW_CUDA(cudaEventRecord(x_.sig->setup));
  WW_TRY(x_.upload_inputs(first, n));
  x_.words_queued = false;  // the launch queues its own
  WW_TRY(b_.begin_wave(n, {true, true, false}));
  WW_TRY(b_.apply_memory_inputs(b_.W, blocks, nullptr));
  // The kernel is queued behind the set-up, not after a wait for it, which
  // would make the host and the device take turns once more every wave;
  // launch_and_wait counts the set-up's device time.
  l_.setup_queued = true;
  c_.lap(c_.memory_setup_ms);
  return Status::Ok();
}

Status WaveLoop::download_wave(uint32_t first, uint32_t n, uint32_t blocks, RunResult& out) {
  WW_TRY(x_.queue_canvas(first, n));
  WW_TRY(b_.launch_mem_out(b_.W, blocks, nullptr));
  WW_TRY(x_.fetch_outputs(first, n, x_.streamed_rows, n));
  return x_.download_status(first, n);
}

// Instance 0's final state back into the source instance (the spec runner).
Status WaveLoop::write_back_first(uint32_t n) {
  InstanceState st;
  WW_CUDA(cudaMemcpy(&st.pages, b_.W.mem_pages, 4, cudaMemcpyDeviceToHost));
  if (c_.img.has_memory) {
    uint64_t bytes = uint64_t(st.pages) * kPageSize;
    uint8_t* d_tmp;
    WW_TRY(b_.arena.alloc(&d_tmp, bytes));
    WW_CUDA(wave_kernels::gather_memory(c_.layout, b_.W, d_tmp, bytes));
    st.memory.resize(bytes);
    WW_CUDA(cudaMemcpy(st.memory.data(), d_tmp, bytes, cudaMemcpyDeviceToHost));
  }
  WW_TRY(download_column0(st.globals, b_.W.globals, b_.mod.init.nglobals, n));
  WW_TRY(download_column0(st.data_dropped, b_.W.data_dropped, b_.mod.init.ndatas, n));
  WW_TRY(download_column0(st.elem_dropped, b_.W.elem_dropped, b_.mod.init.nelems, n));
  if (c_.img.tables_mutable) {
    WW_TRY(download_column0(st.table_size, b_.W.table_size, b_.mod.M.num_tables, n));
    WW_TRY(download_column0(st.table_elems, b_.W.tables, b_.mod.init.total_table_cap, n));
  } else {
    st.table_size = c_.img.table_init_size;
    st.table_elems = c_.img.table_elems;
  }
  write_back(c_.S, c_.instance, c_.img, st);
  return Status::Ok();
}

Status WaveLoop::run_wave(uint32_t first, uint32_t n, RunResult& out, uint32_t* redo) {
  *redo = 0;
  b_.W.n = n;
  b_.W.first = c_.req.index_base + first;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  const bool cancelled = c_.req.cancel && c_.req.cancel->load();
  if (cancelled || (c_.req.timeout_s > 0 && seconds_since(c_.t_start) > c_.req.timeout_s)) {
    const TrapCode why = cancelled ? TrapCode::Interrupted : TrapCode::Timeout;
    for (uint32_t t = 0; t < n; ++t) c_.dest.traps[first + t] = uint8_t(why);
    // Rows that an earlier run finished (a stretch run again) are
    // unfinished now, as the trap says.
    parallel_fill(c_.dest.finished + first, 0, n);
    return Status::Ok();
  }
  if (c_.req.host_calls) c_.req.host_calls->begin(b_.W.first, n);
  const Status ran = [&]() -> Status {
    const uint32_t slices = slice_count(n);
    WW_TRY(x_.begin_stream(n, slices > 1));
    if (slices > 1) return run_slices(first, n, slices);
    WW_TRY(init_wave(first, n, blocks));
    if (l_.host_calls) WW_TRY(l_.host_calls->begin_wave(b_.W, b_.I));
    WW_TRY(l_.launch_chain(blocks, out));
    if (l_.host_calls) WW_TRY(l_.host_calls->end_wave(b_.W, b_.I, b_.W.first));
    return download_wave(first, n, blocks, out);
  }();
  if (!ran.ok()) {
    // No row of a wave that failed passes for finished.
    if (x_.finished_prefilled) parallel_fill(c_.dest.finished + first, 0, n);
    return ran;
  }
  if (c_.req.cancel && c_.req.cancel->load()) {
    // Instances the cancel stopped report so, not the deadline it moved.
    for (uint32_t t = 0; t < n; ++t)
      if (!c_.dest.finished[first + t]) c_.dest.traps[first + t] = uint8_t(TrapCode::Interrupted);
  }
  if (c_.sparse && b_.W.mem_cap) WW_TRY(b_.account_pool(first, n, *x_.sig->wave_words, x_.wave_trapped, redo));
  WW_ASSIGN_OR_RETURN(StackPool::Outcome stack,
                      b_.stack_pool.account(b_.arena, b_.W, c_.dest.traps + first, n, x_.sig->wave_words->stack_used));
  *redo = std::max(*redo, stack.redo);
  b_.stack_pool_grew = stack.grew;
  if (stack.wave_cap)
    b_.stack_wave_cap = b_.stack_wave_cap ? std::min(b_.stack_wave_cap, stack.wave_cap) : stack.wave_cap;
  c_.trace("wave: pool accounting");
  if (c_.req.write_back && first == 0) WW_TRY(write_back_first(n));
  waves_done_ += n - *redo;
  if (c_.req.progress) c_.req.progress(waves_done_, c_.req.instances, seconds_since(c_.t_start));
  return Status::Ok();
}

Status WaveLoop::begin_resident(uint32_t n) {
  b_.W.n = n;
  b_.W.first = c_.req.index_base;
  return init_wave(0, n, (n + kBlock - 1) / kBlock);
}

Status WaveLoop::resident_call(RunResult& out) {
  const uint32_t n = b_.W.n;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  c_.phase_t = Clock::now();
  // What only this call needs goes when it ends.
  DeviceArena call;
  WW_ASSIGN_OR_RETURN(uint64_t now, b_.device_now_ns());
  WW_TRY(b_.prepare_call(call, now));
  WW_TRY(b_.alloc_memory_io(call, n));
  out.result_types = c_.ftype->results;
  own_results(out, n);
  WW_TRY(x_.upload_inputs(0, n));
  // The instances keep their state and memory from call to call.
  x_.words_queued = false;  // the launch queues its own
  WW_TRY(b_.begin_wave(n, {false, false, true}));
  WW_TRY(b_.apply_memory_inputs(b_.W, blocks, nullptr));
  WW_TRY(c_.end_phase(c_.memory_setup_ms));
  l_.setup_queued = false;  // begin_resident's set-up is long done
  if (c_.req.host_calls) c_.req.host_calls->begin(b_.W.first, n);
  WW_TRY(l_.launch_chain(blocks, out));
  WW_TRY(download_wave(0, n, blocks, out));
  if (c_.req.cancel && c_.req.cancel->load())
    for (uint32_t t = 0; t < n; ++t)
      if (!c_.dest.finished[t]) c_.dest.traps[t] = uint8_t(TrapCode::Interrupted);
  b_.mem_in.clear();
  b_.mem_out.clear();
  return Status::Ok();
}

Status WaveLoop::read_memory(uint64_t addr, uint64_t len, uint8_t* out) {
  WW_TRY(b_.check_range(addr, len, "read_memory"));
  if (len == 0) return Status::Ok();
  const uint32_t n = b_.W.n, blocks = (n + kBlock - 1) / kBlock;
  DeviceArena call;
  uint8_t* d = nullptr;
  WW_TRY(call.alloc(&d, uint64_t(n) * len));
  WW_CUDA(wave_kernels::mem_out(c_.layout, blocks, nullptr, b_.W, d, uint32_t(len), uint32_t(addr)));
  return x_.staging->fetch(out, d, uint64_t(n) * len);
}

Status WaveLoop::write_memory(uint64_t addr, uint64_t record, const uint8_t* data) {
  WW_TRY(b_.check_range(addr, record, "write_memory"));
  if (record == 0) return Status::Ok();
  const uint32_t n = b_.W.n, blocks = (n + kBlock - 1) / kBlock;
  DeviceArena call;
  uint8_t* d = nullptr;
  WW_TRY(call.alloc(&d, uint64_t(n) * record));
  WW_TRY(x_.staging->send(d, data, uint64_t(n) * record));
  WW_CUDA(wave_kernels::mem_in(c_.layout, blocks, nullptr, b_.W, d, uint32_t(record), uint32_t(addr)));
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  return Status::Ok();
}

Status WaveLoop::finish_outputs() {
  // A canvas coming down is part of the download.
  const Clock::time_point t0 = Clock::now();
  const bool canvas_down = x_.canvas_queued;
  WW_TRY(x_.drop_queued_canvas());  // its copy done
  WW_TRY(download_intrinsics(c_.req.batch, b_.I, *x_.staging, c_.req.claim ? &b_.canvas_before : nullptr,
                             canvas_down || b_.canvas_mapped, x_.sig->wave_words->ignored_pixels));
  c_.download_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  c_.trace("intrinsics' buffers");
  return Status::Ok();
}

Status WaveLoop::settle_thread() {
  if (settled_) return Status::Ok();
  settled_ = true;
  WW_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  return Status::Ok();
}

Status WaveLoop::release() {
  if (released_) return Status::Ok();
  released_ = true;
  WW_TRY(settle_thread());
  // Streams the batch left idle are only asked: a synchronisation each
  // would cost every batch its round trips.
  if (x_.sig)
    for (cudaStream_t s : {x_.sig->poll_stream, x_.sig->outputs, x_.sig->compute[0], x_.sig->compute[1]})
      if (cudaStreamQuery(s) != cudaSuccess) WW_CUDA(cudaStreamSynchronize(s));
  b_.arena.release_in_background();
  if (x_.staging) Resources::process().current().give_staging(std::move(x_.staging));
  return Status::Ok();
}

void WaveLoop::report_phases(RunResult& out) const {
  out.upload_ms = c_.upload_ms;
  out.memory_setup_ms = c_.memory_setup_ms;
  out.download_ms = c_.download_ms;
  out.pool_bytes_used = b_.pool_bytes_used;
  out.pool_wave_instances = b_.pool_wave_instances;
  out.wave_slices = wave_slices_;
  out.streamed_rows = x_.streamed_total;
  out.mapped_rows = x_.mapped_total;
  out.canvas_mapped = b_.canvas_mapped;
  out.stack_pool_bytes = b_.stack_pool.bytes();  // the pool only grows
  out.trapped_counted = x_.trapped_counted;
}

}  // namespace ww::gpu
