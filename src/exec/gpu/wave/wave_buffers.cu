// A wave loop's device buffers: one block for the wave's columns, its
// memory inputs and outputs, and the sparse memory pool, whose size each
// wave's use corrects for the next; the call's words and chain; each
// wave's set-up on the device.
#include "exec/gpu/wave/wave_buffers.cuh"

#include <algorithm>

#include "exec/gpu/wave/wave_kernels.h"

namespace ww::gpu {

// The wave's buffers in one block, as the plan counted them per instance
// (the sparse pool apart); 256 bytes of rounding for each of them.
uint64_t WaveBuffers::wave_block_bytes() const {
  const uint64_t warps32 = (uint64_t(c_.plan.wave_size) + 31) / 32 * 32;
  uint64_t block = (c_.plan.overhead_bytes_per_instance +
                    (c_.plan.layout == MemoryLayout::Sparse ? 0 : c_.plan.linear_bytes_per_instance)) *
                       warps32 +
                   (uint64_t(64) << 10) + ((sizeof(WaveWords) + 255) & ~uint64_t{255});
  if (c_.results32 || c_.req.resident) block += 2 * c_.req.tuning.staging_piece_bytes();
  // The first sparse pool too: a cudaMalloc costs about the same whatever
  // its size up to 4 GiB (bench/scale/alloc_cost.cu), and the pool's own
  // would be a visible share of a small batch (SHA-256, 1M instances). A
  // pool that grows later comes from cudaMalloc; this one then stays until
  // the block goes (account_pool grows into what is free).
  if (c_.sparse && c_.plan.memory_pages) block += c_.plan.pool_bytes + 256;
  return block;
}

Status WaveBuffers::alloc_wave_buffers(HostCallPass* host_calls) {
  const uint64_t WV = c_.plan.wave_size;
  // Whole warps: the stack and interleaved memory layouts group instances by 32.
  const uint64_t warps32 = (WV + 31) / 32 * 32;
  const bool frames = c_.launcher.needs_frames();
  const uint64_t depth = frames ? c_.req.max_call_depth : 0;
  W.total = c_.req.total_instances ? c_.req.total_instances : c_.req.instances;
  W.stack_slots = frames ? c_.req.stack_slots : 0;
  W.max_depth = c_.req.max_call_depth;
  W.slots_limit = std::max(c_.req.stack_slots_limit, W.stack_slots);
  W.depth_limit = std::max(c_.req.call_depth_limit, c_.req.max_call_depth);
  W.mem_cap = uint64_t(c_.plan.memory_pages) * kPageSize;
  W.mem_max_pages = c_.img.has_memory ? std::min(c_.img.max_pages, c_.plan.memory_pages) : 0;
  W.mem_grow_limit = c_.img.has_memory && grows_past_reservation_rerun(c_.req) ? c_.img.max_pages : W.mem_max_pages;
  W.tables_mutable = c_.img.tables_mutable;
  WW_TRY(arena.alloc(&W.slots, uint64_t(W.stack_slots) * warps32));
  WW_TRY(arena.alloc(&W.io, uint64_t(io_slots(c_.req)) * WV));
  if (const uint32_t words = packed_result_words(c_.req)) WW_TRY(arena.alloc(&packed32, uint64_t(words) * WV));
  if (!c_.req.then.empty() || c_.req.resident) WW_TRY(arena.alloc(&W.pos, WV));
  WW_TRY(arena.alloc(&W.call_pc, depth * WV));
  WW_TRY(arena.alloc(&W.call_func, depth * WV));
  WW_TRY(arena.alloc(&W.call_fb, depth * WV));
  W.mem_cap_pages = uint32_t(W.mem_cap / kPageSize);
  groups = uint32_t(warps32 / 32);
  WW_TRY(arena.alloc(&wave_on_device, 1));
  W.self = wave_on_device;
  next_wave = c_.plan.wave_size;
  if (c_.sparse && W.mem_cap) {
    W.chunk_shift = c_.plan.chunk_shift;
    W.cap_chunks = uint32_t(W.mem_cap >> W.chunk_shift);
    W.image = mod.image_chunks;
    W.image_chunks = mod.num_image_chunks;
    W.table_stride = c_.plan.chunk_table_shared ? 0 : W.cap_chunks;
    WW_TRY(arena.alloc(&W.chunk_table, chunk_table_entries()));
    W.pool_used = wave_words->pool_used;
    WW_TRY(set_pool(c_.plan.pool_bytes));
    c_.trace("wave buffers: sparse pool");
    next_wave = c_.plan.first_wave;
  } else {
    WW_TRY(arena.alloc(&W.mem, W.mem_cap * warps32));
    WW_TRY(arena.alloc(&W.mem_dirty, std::max<uint64_t>(uint64_t(groups) * W.mem_cap_pages, 1)));
  }
  WW_TRY(arena.alloc(&W.mem_pages, WV));
  WW_TRY(arena.alloc(&W.globals, uint64_t(mod.init.nglobals) * WV));
  WW_TRY(arena.alloc(&W.tables, c_.img.tables_mutable ? uint64_t(mod.init.total_table_cap) * WV : 1));
  WW_TRY(arena.alloc(&W.table_size, c_.img.tables_mutable ? uint64_t(mod.M.num_tables) * WV : 1));
  WW_TRY(arena.alloc(&W.data_dropped, uint64_t(mod.init.ndatas) * WV));
  WW_TRY(arena.alloc(&W.elem_dropped, uint64_t(mod.init.nelems) * WV));
  WW_TRY(arena.alloc(&W.trap, WV));
  WW_TRY(arena.alloc(&W.trap_func, WV));
  WW_TRY(arena.alloc(&W.trap_pc, WV));
  WW_TRY(arena.alloc(&W.finished, WV));
  // A resident batch's instances cannot run again, nor those that add to
  // shared state; those whose calls the host serves should not (it would
  // serve them again: a WASI program's directory made twice, the WASI
  // suite's fd_readdir on the GPU), so their waves of up to about 130K
  // instances (default limits) get the pool's least size from the start.
  const StackPool::Upfront upfront = c_.req.resident || imports_atomic_add(c_.req.module->module)
                                         ? StackPool::Upfront::Always
                                     : c_.req.host_calls ? StackPool::Upfront::IfLeastSize
                                                         : StackPool::Upfront::Never;
  WW_TRY(stack_pool.setup(arena, W, c_.img, uint32_t(WV), frames, upfront, c_.req.max_stack_pool_bytes,
                          wave_words->stack_used));
  c_.trace("wave buffers: stack pool");
  if (host_calls) WW_TRY(host_calls->alloc(arena, W, I, uint32_t(WV), c_.host_call_width(), c_.launcher.leave_words()));
  if (c_.results32 || c_.req.resident)
    for (uint32_t*& scratch : results32_scratch) WW_TRY(arena.alloc(&scratch, c_.req.tuning.staging_piece_bytes() / 4));
  // A resident batch's calls bring their own.
  return c_.req.resident ? Status::Ok() : alloc_memory_io(arena, WV);
}

Status WaveBuffers::alloc_memory_io(DeviceArena& from, uint64_t rows) {
  mem_in.assign(c_.req.mem_in.size(), nullptr);
  mem_out.assign(c_.req.mem_out.size(), nullptr);
  for (size_t k = 0; k < c_.req.mem_in.size(); ++k)
    WW_TRY(from.alloc(&mem_in[k], uint64_t(c_.req.mem_in[k].record_size) * rows));
  for (size_t k = 0; k < c_.req.mem_out.size(); ++k)
    WW_TRY(from.alloc(&mem_out[k], uint64_t(c_.req.mem_out[k].length) * rows));
  return Status::Ok();
}

Result<uint64_t> WaveBuffers::device_now_ns() {
  if (!timer) WW_TRY(arena.alloc(&timer, 1));
  WW_CUDA(wave_kernels::read_timer(timer));
  uint64_t now = 0;
  WW_CUDA(cudaMemcpy(&now, timer, sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return now;
}

Status WaveBuffers::prepare_call(DeviceArena& from, uint64_t now_ns) {
  c_.bind_call();
  W.entry = c_.req.func_index - c_.req.module->module.num_imported_funcs;
  W.fuel = c_.req.fuel;
  // A call that can be cancelled has a deadline, if only the end of time,
  // so that code looks at it and stops when the host moves it.
  W.deadline_ns = c_.req.timeout_s > 0 ? now_ns + uint64_t(c_.req.timeout_s * 1e9) : c_.req.cancel ? ~uint64_t{0} : 0;
  W.args_uniform = !c_.req.args_per_instance && !c_.req.fill_args;
  W.args = nullptr;
  W.arg_index_kind = nullptr;
  if (W.args_uniform) WW_TRY(from.upload(&W.args, as_slots(c_.req.args, c_.req.args_hi, c_.slot_width)));
  if (W.args_uniform && !c_.req.arg_index_kind.empty())
    WW_TRY(from.upload(&W.arg_index_kind, as_slots(c_.req.arg_index_kind, {}, c_.slot_width)));
  return upload_chain(from);
}

Status WaveBuffers::upload_chain(DeviceArena& from) {
  W.pos_begin = W.pos_end = W.pos_total = 0;
  if (c_.req.then.empty()) return Status::Ok();
  const uint32_t nimp = c_.req.module->module.num_imported_funcs;
  std::vector<DevThenCall> calls;
  std::vector<uint64_t> args;
  std::vector<uint8_t> kinds;
  uint64_t end = 1;  // position 0 is the export
  for (const BatchRequest::ThenCall& c : c_.req.then) {
    end += c.repeat;
    if (end > 0xffffffffu) return make_error(kNoOffset, "GPU batch: more than 2^32-1 calls in the chain");
    calls.push_back({c.func_index - nimp, uint32_t(end), uint32_t(args.size())});
    std::vector<uint8_t> call_kinds(c.args.size(), 0);
    std::copy_n(c.arg_index_kind.begin(), std::min(c.arg_index_kind.size(), c.args.size()), call_kinds.begin());
    for (uint64_t v : as_slots(c.args, c.args_hi, c_.slot_width)) args.push_back(v);
    for (uint8_t k : as_slots(call_kinds, {}, c_.slot_width)) kinds.push_back(k);
  }
  // Never empty, so that every pointer is a real allocation.
  args.push_back(0);
  kinds.push_back(0);
  WW_TRY(from.upload(&W.then, calls));
  WW_TRY(from.upload(&W.then_args, args));
  WW_TRY(from.upload(&W.then_arg_kind, kinds));
  W.pos_total = uint32_t(end);
  return Status::Ok();
}

Status WaveBuffers::begin_wave(uint32_t n, Fresh fresh) {
  WaveStart start;
  start.stacks = stack_pool.on();
  start.instances = fresh.instances;
  start.done = fresh.done;
  const bool sparse_memory = c_.sparse && W.mem_cap;
  if (fresh.memory && sparse_memory) {
    // Nothing of the pool needs clearing: an instance copies its part of
    // the image into a chunk on its first write there.
    start.clear = W.chunk_table;
    start.clear_words = chunk_table_entries();
    start.pool_used = true;
  }
  WW_CUDA(wave_kernels::begin_wave((n + kBlock - 1) / kBlock, mod.M, W, mod.init, start));
  c_.trace("wave: set-up kernel");
  if (fresh.memory && W.mem_cap && !sparse_memory) WW_TRY(restore_dense_memory());
  c_.trace("wave: memory reset");
  return Status::Ok();
}

Status WaveBuffers::restore_dense_memory() {
  const uint32_t words = uint32_t(mod.num_image_words);
  if (!memory_ready) {
    // The buffer's first use: zeros at memset speed, then the image.
    WW_CUDA(cudaMemsetAsync(W.mem, 0, W.mem_cap * uint64_t(groups) * 32));
    WW_CUDA(cudaMemsetAsync(W.mem_dirty, 0, uint64_t(groups) * W.mem_cap_pages));
    if (words) {
      dim3 grid(uint32_t(std::min<uint64_t>((uint64_t(words) * 32 + 255) / 256, 4096)), std::min(groups, 65535u));
      WW_CUDA(wave_kernels::copy_image(c_.layout, grid, W, groups, mod.image_words, words));
    }
    memory_ready = true;
    return Status::Ok();
  }
  const uint64_t flags = uint64_t(groups) * W.mem_cap_pages;
  if (flags > 0x7fffffffu) return make_error(kNoOffset, "GPU batch: too many memory pages per wave");
  WW_CUDA(wave_kernels::restore_dirty_pages(c_.layout, uint32_t(flags), W, mod.image_words, words));
  return Status::Ok();
}

Status WaveBuffers::apply_memory_inputs(const DevWave& w, uint32_t blocks, cudaStream_t stream) {
  for (size_t k = 0; k < c_.req.mem_in.size(); ++k) {
    const MemIn& mi = c_.req.mem_in[k];
    WW_CUDA(wave_kernels::mem_in(c_.layout, blocks, stream, w, mem_in[k], mi.record_size, mi.address));
  }
  return Status::Ok();
}

Status WaveBuffers::launch_mem_out(const DevWave& w, uint32_t blocks, cudaStream_t stream) {
  for (size_t k = 0; k < c_.req.mem_out.size(); ++k) {
    const MemOut& mo = c_.req.mem_out[k];
    WW_CUDA(wave_kernels::mem_out(c_.layout, blocks, stream, w, mem_out[k], mo.length, mo.address));
  }
  return Status::Ok();
}

Status WaveBuffers::check_range(uint64_t addr, uint64_t len, const char* what) {
  if (!c_.img.has_memory) return make_error(kNoOffset, std::string(what) + ": the module has no memory");
  std::vector<uint32_t> pages(W.n);
  WW_CUDA(cudaMemcpy(pages.data(), W.mem_pages, uint64_t(W.n) * 4, cudaMemcpyDeviceToHost));
  for (uint32_t t = 0; t < W.n; ++t)
    if (addr + len > uint64_t(pages[t]) * kPageSize || addr + len < addr)
      return make_error(kNoOffset, std::string(what) + ": bytes [" + std::to_string(addr) + ", " +
                                       std::to_string(addr + len) + ") are past instance " + std::to_string(t) +
                                       "'s memory (" + std::to_string(pages[t]) + " pages)");
  return Status::Ok();
}

Status WaveBuffers::set_pool(uint64_t bytes) {
  if (W.pool) arena.release(W.pool);
  W.pool = nullptr;
  WW_TRY(arena.alloc(&W.pool, bytes));
  pool_chunks = bytes >> (W.chunk_shift + 5);
  const uint32_t counts[2] = {0, uint32_t(std::min<uint64_t>(pool_chunks, 0xffffffffu))};
  WW_TRY(copy_to_device(W.pool_used, counts, sizeof counts));
  return Status::Ok();
}

Status WaveBuffers::account_pool(uint32_t first, uint32_t n, const WaveWords& down, uint64_t wave_trapped,
                                 uint32_t* redo) {
  const uint32_t used = down.pool_used[0];
  const uint64_t chunk = uint64_t(32) << W.chunk_shift;
  const uint64_t taken = std::min<uint64_t>(used, pool_chunks);
  if (taken * chunk > pool_bytes_used) {
    pool_bytes_used = taken * chunk;
    pool_wave_instances = n;
  }
  const uint8_t out_of_pool = uint8_t(TrapCode::OutOfDeviceMemory);
  const uint8_t* traps = c_.dest.traps + first;
  const uint32_t r = wave_trapped ? uint32_t(parallel_find_byte(traps, out_of_pool, n)) : n;
  *redo = r < n ? n - r : 0;
  // A wave that took nothing from the pool says nothing of the next: it
  // is the plan's size, and the pool stays as it is. (Sized from a guess
  // of a part per 64 groups, collatz's 100M instances on the interpreter,
  // whose pool is one chunk, would run in 38,923 waves instead of 4.)
  if (taken == 0 && *redo == 0) {
    next_wave = c_.plan.wave_size;
    return Status::Ok();
  }
  // Chunks per group of 32: measured, or when the pool ran out, the whole
  // pool over the groups before the first that did not fit.
  const double per_group =
      *redo ? double(pool_chunks) / std::max<uint32_t>(r / 32, 1) : std::max(double(taken) / ((n + 31) / 32), 1.0 / 64);
  // The pool grows, while it may, to hold the rest of the batch at that
  // use with an eighth to spare; the next wave is what it then holds.
  const uint64_t rest = c_.req.instances - (first + n - *redo);
  const double want = double((rest + 31) / 32) * per_group * 1.125;
  if (want > double(pool_chunks) && pool_chunks * chunk < c_.plan.pool_bytes_max) {
    // What the device holds since the plan (a first pool cut from the
    // wave's block stays until the block goes; another wave loop's
    // buffers) is not the plan's to give: the pool grows into what is free
    // now, a margin left: beside a large CUDA stack, SQLite's pool at 1M as
    // the plan sized it may be more than is free.
    size_t free_b = 0, total_b = 0;
    WW_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const uint64_t room = free_b > kReserveBytes ? (free_b - kReserveBytes) / chunk * chunk : 0;
    const uint64_t bytes = std::min({c_.plan.pool_bytes_max, uint64_t(want + 1) * chunk, room});
    if (bytes > pool_chunks * chunk) WW_TRY(set_pool(bytes));
  }
  uint64_t next = uint64_t(double(pool_chunks) / (per_group * 1.125)) * 32;
  // A lone instance that does not fit keeps its trap (run_batch moves past it).
  if (*redo && next >= n) next = std::max<uint32_t>(n / 2, 1);
  next = std::min<uint64_t>(next, c_.plan.wave_size);
  if (next >= 32) next -= next % 32;
  next_wave = uint32_t(std::max<uint64_t>(next, 1));
  return Status::Ok();
}

}  // namespace ww::gpu
