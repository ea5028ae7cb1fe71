// A wave loop's device buffers: one block for the wave's columns, its
// memory inputs and outputs, and the sparse memory pool, whose size each
// wave's use corrects for the next.
#include <algorithm>

#include "exec/gpu/wave/wave_loop.cuh"

namespace ww::gpu {

// The wave's buffers in one block, as the plan counted them per instance
// (the sparse pool apart); 256 bytes of rounding for each of them.
uint64_t WaveLoop::wave_block_bytes() const {
  const uint64_t warps32 = (uint64_t(plan_.wave_size) + 31) / 32 * 32;
  uint64_t block = (plan_.overhead_bytes_per_instance +
                    (plan_.layout == MemoryLayout::Sparse ? 0 : plan_.linear_bytes_per_instance)) *
                       warps32 +
                   (uint64_t(64) << 10) + ((sizeof(WaveWords) + 255) & ~uint64_t{255});
  if (results32_ || req_.resident) block += 2 * req_.tuning.staging_piece_bytes();
  // The first sparse pool too: a cudaMalloc costs about 0.2 ms whatever
  // its size up to 4 GiB (bench/scale/alloc_cost.cu), and the pool's own
  // was 0.21-0.28 ms of a 3.5 ms batch (SHA-256, 1M instances). A pool that
  // grows later comes from cudaMalloc; this one then stays until the block
  // goes (account_pool grows into what is free).
  if (sparse_ && plan_.memory_pages) block += plan_.pool_bytes + 256;
  return block;
}

Status WaveLoop::alloc_wave_buffers() {
  const uint64_t WV = plan_.wave_size;
  // Whole warps: the stack and interleaved memory layouts group instances by 32.
  const uint64_t warps32 = (WV + 31) / 32 * 32;
  const bool frames = launcher_.needs_frames();
  const uint64_t depth = frames ? req_.max_call_depth : 0;
  W_.total = req_.total_instances ? req_.total_instances : req_.instances;
  W_.stack_slots = frames ? req_.stack_slots : 0;
  W_.max_depth = req_.max_call_depth;
  W_.slots_limit = std::max(req_.stack_slots_limit, W_.stack_slots);
  W_.depth_limit = std::max(req_.call_depth_limit, req_.max_call_depth);
  W_.mem_cap = uint64_t(plan_.memory_pages) * kPageSize;
  W_.mem_max_pages = img_.has_memory ? std::min(img_.max_pages, plan_.memory_pages) : 0;
  W_.mem_grow_limit = img_.has_memory && grows_past_reservation_rerun(req_) ? img_.max_pages : W_.mem_max_pages;
  W_.tables_mutable = img_.tables_mutable;
  WW_TRY(arena_.alloc(&W_.slots, uint64_t(W_.stack_slots) * warps32));
  WW_TRY(arena_.alloc(&W_.io, uint64_t(io_slots(req_)) * WV));
  if (const uint32_t words = packed_result_words(req_)) WW_TRY(arena_.alloc(&packed32_, uint64_t(words) * WV));
  if (!req_.then.empty() || req_.resident) WW_TRY(arena_.alloc(&W_.pos, WV));
  WW_TRY(arena_.alloc(&W_.call_pc, depth * WV));
  WW_TRY(arena_.alloc(&W_.call_func, depth * WV));
  WW_TRY(arena_.alloc(&W_.call_fb, depth * WV));
  W_.mem_cap_pages = uint32_t(W_.mem_cap / kPageSize);
  groups_ = uint32_t(warps32 / 32);
  WW_TRY(arena_.alloc(&wave_on_device_, 1));
  W_.self = wave_on_device_;
  next_wave_ = plan_.wave_size;
  if (sparse_ && W_.mem_cap) {
    W_.chunk_shift = plan_.chunk_shift;
    W_.cap_chunks = uint32_t(W_.mem_cap >> W_.chunk_shift);
    W_.image = mod_.image_chunks;
    W_.image_chunks = mod_.num_image_chunks;
    W_.table_stride = plan_.chunk_table_shared ? 0 : W_.cap_chunks;
    WW_TRY(arena_.alloc(&W_.chunk_table, chunk_table_entries()));
    W_.pool_used = words_->pool_used;
    WW_TRY(set_pool(plan_.pool_bytes));
    trace_("wave buffers: sparse pool");
    next_wave_ = plan_.first_wave;
  } else {
    WW_TRY(arena_.alloc(&W_.mem, W_.mem_cap * warps32));
    WW_TRY(arena_.alloc(&W_.mem_dirty, std::max<uint64_t>(uint64_t(groups_) * W_.mem_cap_pages, 1)));
  }
  WW_TRY(arena_.alloc(&W_.mem_pages, WV));
  WW_TRY(arena_.alloc(&W_.globals, uint64_t(mod_.init.nglobals) * WV));
  WW_TRY(arena_.alloc(&W_.tables, img_.tables_mutable ? uint64_t(mod_.init.total_table_cap) * WV : 1));
  WW_TRY(arena_.alloc(&W_.table_size, img_.tables_mutable ? uint64_t(mod_.M.num_tables) * WV : 1));
  WW_TRY(arena_.alloc(&W_.data_dropped, uint64_t(mod_.init.ndatas) * WV));
  WW_TRY(arena_.alloc(&W_.elem_dropped, uint64_t(mod_.init.nelems) * WV));
  WW_TRY(arena_.alloc(&W_.trap, WV));
  WW_TRY(arena_.alloc(&W_.trap_func, WV));
  WW_TRY(arena_.alloc(&W_.trap_pc, WV));
  WW_TRY(arena_.alloc(&W_.finished, WV));
  // A resident batch's instances cannot run again: the pool is there from the start.
  WW_TRY(stack_pool_.setup(arena_, W_, img_, uint32_t(WV), frames,
                           req_.resident || imports_atomic_add(req_.module->module), req_.max_stack_pool_bytes,
                           words_->stack_used));
  trace_("wave buffers: stack pool");
  if (host_calls_) WW_TRY(host_calls_->alloc(arena_, W_, I_, uint32_t(WV), host_call_width(), launcher_.leave_words()));
  // Values of the widest direction, then bytes for traps and flags and
  // words for where instances trapped.
  const uint64_t row_bytes = 8 * std::max<uint64_t>(io_slots(req_), 1);
  staging_rows_ = uint32_t(std::min<uint64_t>(WV, req_.tuning.staging_piece_bytes() / row_bytes));
  if (results32_ || req_.resident)
    for (uint32_t*& scratch : results32_scratch_) WW_TRY(arena_.alloc(&scratch, req_.tuning.staging_piece_bytes() / 4));
  // A resident batch's calls bring their own.
  return req_.resident ? Status::Ok() : alloc_memory_io(arena_, WV);
}

Status WaveLoop::alloc_memory_io(DeviceArena& arena, uint64_t rows) {
  d_mem_in_.assign(req_.mem_in.size(), nullptr);
  d_mem_out_.assign(req_.mem_out.size(), nullptr);
  for (size_t k = 0; k < req_.mem_in.size(); ++k)
    WW_TRY(arena.alloc(&d_mem_in_[k], uint64_t(req_.mem_in[k].record_size) * rows));
  for (size_t k = 0; k < req_.mem_out.size(); ++k)
    WW_TRY(arena.alloc(&d_mem_out_[k], uint64_t(req_.mem_out[k].length) * rows));
  return Status::Ok();
}

Status WaveLoop::set_pool(uint64_t bytes) {
  if (W_.pool) arena_.release(W_.pool);
  W_.pool = nullptr;
  WW_TRY(arena_.alloc(&W_.pool, bytes));
  pool_chunks_ = bytes >> (W_.chunk_shift + 5);
  const uint32_t counts[2] = {0, uint32_t(std::min<uint64_t>(pool_chunks_, 0xffffffffu))};
  WW_TRY(copy_to_device(W_.pool_used, counts, sizeof counts));
  return Status::Ok();
}

Status WaveLoop::account_pool(uint32_t first, uint32_t n, uint32_t* redo) {
  const uint32_t used = sig_->wave_words->pool_used[0];  // queue_wave_words
  const uint64_t chunk = uint64_t(32) << W_.chunk_shift;
  const uint64_t taken = std::min<uint64_t>(used, pool_chunks_);
  if (taken * chunk > pool_bytes_used_) {
    pool_bytes_used_ = taken * chunk;
    pool_wave_instances_ = n;
  }
  const uint8_t out_of_pool = uint8_t(TrapCode::OutOfDeviceMemory);
  const uint8_t* traps = dest_.traps + first;
  const uint32_t r = wave_trapped_ ? uint32_t(parallel_find_byte(traps, out_of_pool, n)) : n;
  *redo = r < n ? n - r : 0;
  // A wave that took nothing from the pool says nothing of the next: it
  // is the plan's size, and the pool stays as it is. (Sized from a guess
  // of a part per 64 groups, collatz's 100M instances on the interpreter,
  // whose pool is one chunk, ran in 38,923 waves instead of 4.)
  if (taken == 0 && *redo == 0) {
    next_wave_ = plan_.wave_size;
    return Status::Ok();
  }
  // Chunks per group of 32: measured, or when the pool ran out, the whole
  // pool over the groups before the first that did not fit.
  const double per_group = *redo ? double(pool_chunks_) / std::max<uint32_t>(r / 32, 1)
                                 : std::max(double(taken) / ((n + 31) / 32), 1.0 / 64);
  // The pool grows, while it may, to hold the rest of the batch at that
  // use with an eighth to spare; the next wave is what it then holds.
  const uint64_t rest = req_.instances - (first + n - *redo);
  const double want = double((rest + 31) / 32) * per_group * 1.125;
  if (want > double(pool_chunks_) && pool_chunks_ * chunk < plan_.pool_bytes_max) {
    // What the device holds since the plan (a first pool cut from the
    // wave's block stays until the block goes; another wave loop's
    // buffers) is not the plan's to give: the pool grows into what is free
    // now, a margin left. SQLite at 1M beside a 75 GB CUDA stack failed
    // here, asking the plan's 66 GB with 65 GB free.
    size_t free_b = 0, total_b = 0;
    WW_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const uint64_t room = free_b > kReserveBytes ? (free_b - kReserveBytes) / chunk * chunk : 0;
    const uint64_t bytes = std::min({plan_.pool_bytes_max, uint64_t(want + 1) * chunk, room});
    if (bytes > pool_chunks_ * chunk) WW_TRY(set_pool(bytes));
  }
  uint64_t next = uint64_t(double(pool_chunks_) / (per_group * 1.125)) * 32;
  // A lone instance that does not fit keeps its trap (run_batch moves past it).
  if (*redo && next >= n) next = std::max<uint32_t>(n / 2, 1);
  next = std::min<uint64_t>(next, plan_.wave_size);
  if (next >= 32) next -= next % 32;
  next_wave_ = uint32_t(std::max<uint64_t>(next, 1));
  return Status::Ok();
}

}  // namespace ww::gpu
