#include "exec/gpu/plan/gpu_plan.h"

#include <algorithm>

#include "intrinsics/gpu_batch.h"

namespace ww {

const char* layout_name(MemoryLayout l) {
  switch (l) {
    case MemoryLayout::Interleaved: return "interleaved";
    case MemoryLayout::Contiguous: return "contiguous";
    case MemoryLayout::Sparse: return "sparse";
    case MemoryLayout::Auto: return "auto";
  }
  return "?";
}

std::optional<MemoryLayout> parse_layout(std::string_view s) {
  for (MemoryLayout l : {MemoryLayout::Auto, MemoryLayout::Interleaved, MemoryLayout::Contiguous, MemoryLayout::Sparse})
    if (s == layout_name(l)) return l;
  return std::nullopt;
}

}  // namespace ww

namespace ww::gpu {

uint64_t intrinsics_bytes(const GpuBatch* gb) {
  auto cut = [](uint64_t bytes) { return (std::max<uint64_t>(bytes, 16) + 255) & ~uint64_t{255}; };
  uint64_t bytes = 0;
  if (!gb) return bytes;
  if (gb->image) bytes += cut(gb->image->pixels.size() * 4);
  if (!gb->state.empty()) bytes += cut(gb->state.size() * 4);
  for (int u = 0; u < kMaxTextureUnits; ++u)
    if (gb->texture_bound(u)) bytes += cut(gb->textures[u].rgba.size());
  return bytes;
}

std::string BatchPlan::to_string() const {
  auto kib = [](uint64_t b) { return std::to_string((b + 1023) / 1024) + " KiB"; };
  if (layout == MemoryLayout::Sparse)
    return "sparse memory " + std::to_string(memory_pages) + " pages reserved, chunks of " +
           std::to_string(1u << chunk_shift) + " B per instance from a pool of " + kib(pool_bytes) + " (up to " +
           kib(pool_bytes_max) + "), + " + std::to_string(overhead_bytes_per_instance) +
           " B per instance; waves of up to " + std::to_string(wave_size) + " instances, the first " +
           std::to_string(first_wave) + "; " + kib(device_free_bytes) + " GPU memory free";
  return std::string(layout_name(layout)) + " memory " + std::to_string(memory_pages) + " pages (" +
         kib(linear_bytes_per_instance) + ") + " + std::to_string(overhead_bytes_per_instance) + " B per instance; " +
         std::to_string(waves) + (waves == 1 ? " wave" : " waves") + " of up to " + std::to_string(wave_size) +
         " instances; " + kib(device_free_bytes) + " GPU memory free";
}

bool imports_atomic_add(const Module& m) {
  for (const Import& im : m.imports)
    if (im.module == intrinsics::kModuleName && im.field == "atomic_add") return true;
  return false;
}

bool grows_past_reservation_rerun(const BatchRequest& req) {
  return req.grow_reruns && req.module && !req.resident && req.then.empty() && !req.write_back &&
         !imports_atomic_add(req.module->module);
}

MemoryLayout choose_layout(const Module& m, uint64_t instances, uint32_t memory_pages, uint64_t free_bytes) {
  if (m.num_memories() == 0 || imports_atomic_add(m)) return MemoryLayout::Interleaved;
  const uint64_t pages = memory_pages ? memory_pages : std::max<uint64_t>(m.memory_type(0).limits.min, 1);
  const uint64_t dense = instances * pages * kPageSize;
  const uint64_t room = free_bytes > kReserveBytes ? free_bytes - kReserveBytes : 0;
  return dense <= std::min(kWaveMemoryBytes, room) ? MemoryLayout::Interleaved : MemoryLayout::Sparse;
}

uint32_t sparse_chunk_shift(uint64_t capacity_bytes) {
  uint32_t s = kSparseMinChunkShift;
  while (s < 16 && (capacity_bytes >> s) * 8 / 32 > kSparseTableBytesPerInstance) ++s;
  return s;
}

uint32_t memory_pages_for(const BatchRequest& req, const GpuImage& img) {
  if (!img.has_memory) return 0;
  uint32_t pages = req.memory_pages;
  if (pages == 0 && !img.uses_memory_grow) pages = img.init_pages;
  if (pages == 0) {
    pages = img.init_pages + kDefaultGrowPages;
    // An instance that grows past its reservation runs again from the
    // start (rerun_grown), and the host would serve its calls again: a
    // directory made twice, a file renamed twice. Batches whose calls
    // the host serves reserve their share of kHostCallMemoryBytes, so
    // that a small batch of WASI programs seldom runs again. Dense
    // memory holds instances in groups of 32.
    if (req.host_calls && req.instances) {
      const uint64_t share = kHostCallMemoryBytes / kPageSize / ((uint64_t(req.instances) + 31) / 32 * 32);
      pages = uint32_t(std::max<uint64_t>(pages, std::min<uint64_t>(share, img.max_pages)));
    }
  }
  pages = std::min(pages, std::max(img.max_pages, img.init_pages));
  return std::max(pages, img.init_pages);
}

bool results_are_32bit(const std::vector<ValType>& results, uint32_t slot_width) {
  return slot_width == 1 && all_32bit(results);
}

uint32_t packed_result_words(const BatchRequest& req) {
  if (!req.module || req.resident || !req.then.empty() || !req.mem_out.empty() || req.write_back ||
      !req.device_results.empty() || req.func_index >= req.module->module.num_funcs())
    return 0;
  const std::vector<ValType>& results = req.module->module.func_type(req.func_index).results;
  return results_are_32bit(results, req.module->code.bytecode.slot_width) ? uint32_t(results.size()) : 0;
}

uint32_t io_slots(const BatchRequest& req) {
  const Module* m = req.module ? &req.module->module : nullptr;
  if (!m) return 0;
  const uint32_t slot_width = req.module->code.bytecode.slot_width;
  if (req.resident) {  // any export may be called
    size_t values = 0;
    for (const Export& e : m->exports)
      if (e.kind == ExternKind::Func)
        values = std::max({values, m->func_type(e.index).params.size(), m->func_type(e.index).results.size()});
    return uint32_t(values) * slot_width;
  }
  if (req.func_index >= m->num_funcs() || req.result_func() >= m->num_funcs()) return 0;
  return uint32_t(
             std::max(m->func_type(req.func_index).params.size(), m->func_type(req.result_func()).results.size())) *
         slot_width;
}

bool memory_written(const BatchRequest& req, const GpuImage& img) {
  return img.writes_memory || !req.mem_in.empty() || req.resident;
}

uint64_t overhead_bytes_per_instance(const BatchRequest& req, const GpuImage& img, bool frames) {
  uint64_t b = 0;
  if (frames) {
    b += uint64_t(req.stack_slots) * 8;      // frames
    b += uint64_t(req.max_call_depth) * 12;  // call records
    b += 8;                                  // the stack segment it runs in, and its first
  }
  b += img.globals.size() * 8;
  b += 8 * uint64_t(io_slots(req));
  b += 4 * uint64_t(packed_result_words(req));
  if (!req.then.empty() || req.resident) b += 4;  // the chain position
  if (img.tables_mutable) b += uint64_t(img.total_table_cap()) * 8 + img.table_cap.size() * 4;
  b += img.data_size.size() + img.elem_size.size();  // dropped flags
  b += 4 + 1 + 4 + 4 + 1;                            // pages, trap, trap func/pc, finished
  if (req.layout == MemoryLayout::Sparse) {
    // A chunk table entry per chunk per 32 instances, unless one shared
    // table serves memory nothing writes.
    const uint64_t cap = uint64_t(memory_pages_for(req, img)) * kPageSize;
    if (memory_written(req, img)) b += (cap >> sparse_chunk_shift(cap)) * 8 / 32;
  } else {
    b += (memory_pages_for(req, img) + 31) / 32;  // a dirty flag per page per 32 instances
  }
  for (const MemIn& m : req.mem_in) b += m.record_size;
  for (const MemOut& m : req.mem_out) b += m.length;
  return b;
}

namespace {

// Either layout's refusal when not even one wave of 32 instances (or the
// whole batch, when smaller) fits `fit` instances' worth of memory.
Status check_fits(const BatchRequest& req, uint64_t fit, uint64_t per, uint64_t free_bytes) {
  if (fit >= std::min<uint64_t>(32, req.instances)) return Status::Ok();
  return make_error(kNoOffset, "this batch needs " + std::to_string(per) +
                                   " bytes of GPU memory per instance but only " + std::to_string(free_bytes) +
                                   " bytes are free");
}

// A wave within --gpu-max-wave, of whole warps except a last short one.
uint64_t whole_warps(const BatchRequest& req, uint64_t wave) {
  if (req.max_wave) wave = std::min<uint64_t>(wave, std::max<uint32_t>(req.max_wave, 1));
  if (wave < req.instances && wave >= 32) wave -= wave % 32;
  return wave;
}

// Sparse: the wave buffers hold as many instances as fit with one chunk
// part each; the pool may take the rest (at most what every instance's
// whole capacity needs) but starts smaller, and the first wave is sized to
// kSparseChunksGuess parts. Memory that nothing writes (no store, no
// memory input, no import that may write it) needs a pool of one chunk:
// 8 parts an instance would make Mandelbrot's 8.3M pixels a 66 GB
// cudaMalloc, a large share of its batch (bench/scale/alloc_cost.cu gives
// cudaMalloc's cost by size).
// `idle_room`: what the GPU's idle block holds beyond the module's arrays
// and the intrinsics' buffers, which share the wave's block.
Result<BatchPlan> plan_sparse(const BatchRequest& req, BatchPlan p, uint64_t budget, bool written, uint64_t idle_room) {
  const uint64_t cap = p.linear_bytes_per_instance;
  p.chunk_shift = sparse_chunk_shift(cap);
  const uint64_t part = uint64_t(1) << p.chunk_shift;
  const uint64_t group_chunk = part * 32;
  const uint64_t per = p.overhead_bytes_per_instance;
  const uint64_t fit = budget / (per + part);
  WW_TRY(check_fits(req, fit, per + part, p.device_free_bytes));
  const uint64_t wave = whole_warps(req, std::min<uint64_t>(req.instances, fit));
  const uint64_t groups = (wave + 31) / 32;
  const uint64_t rest = budget - wave * per;
  const uint64_t whole = groups * ((cap + part - 1) / part) * group_chunk + group_chunk;
  auto whole_chunks = [&](uint64_t b) { return std::max(b / group_chunk, uint64_t{1}) * group_chunk; };
  p.pool_bytes_max = std::min(rest, whole);
  if (req.max_pool_bytes) p.pool_bytes_max = std::min(p.pool_bytes_max, req.max_pool_bytes);
  p.pool_bytes_max = whole_chunks(p.pool_bytes_max);
  p.pool_bytes = written ? std::max(kSparsePoolStart, groups * 32 * kSparsePoolAllowanceBytes) : group_chunk;
  if (req.first_pool_bytes) p.pool_bytes = req.first_pool_bytes;
  p.pool_bytes = whole_chunks(std::min(p.pool_bytes, p.pool_bytes_max));
  const uint64_t guess = std::min(cap, kSparseChunksGuess * part);
  const uint64_t first = written ? std::max<uint64_t>(32, p.pool_bytes / std::max<uint64_t>(guess, 1) / 32 * 32) : wave;
  // The idle block's room beyond the wave's other buffers and the image's
  // padding to whole chunks, with one of zeros (gpu_plan.h).
  const uint64_t others = (wave + 31) / 32 * 32 * per + 2 * group_chunk + kIdleBlockMargin;
  if (written && !req.first_pool_bytes && idle_room > others + p.pool_bytes)
    p.pool_bytes = whole_chunks(std::min(idle_room - others, p.pool_bytes_max));
  p.wave_size = uint32_t(wave);
  p.first_wave = uint32_t(std::min(first, wave));
  p.chunk_table_shared = !written;
  p.linear_bytes_per_instance = guess;
  p.waves = uint32_t((uint64_t(req.instances) + p.first_wave - 1) / p.first_wave);
  return p;
}

}  // namespace

Result<BatchPlan> plan_for(const BatchRequest& req, const GpuImage& img, uint64_t free_bytes, bool frames,
                           uint64_t reserved, uint64_t host_call_bytes, uint64_t idle_block) {
  BatchPlan p;
  p.layout = req.layout;
  p.memory_pages = memory_pages_for(req, img);
  p.linear_bytes_per_instance = uint64_t(p.memory_pages) * kPageSize;
  p.overhead_bytes_per_instance = overhead_bytes_per_instance(req, img, frames) + host_call_bytes;
  p.device_free_bytes = free_bytes;
  uint64_t module_bytes = img.code.size() * 4 + img.consts.size() * 8 + img.memory.size() + img.data_bytes.size() +
                          img.table_elems.size() * 8 + img.elem_refs.size() * 8;
  if (req.layout == MemoryLayout::Sparse && p.memory_pages) {
    // The image, padded to whole chunks, and one chunk of zeros.
    const uint64_t module_on_device = module_bytes * 2 + (1u << 16);
    const uint64_t reserve = kReserveBytes + reserved + module_on_device;
    // The module's arrays and the intrinsics' buffers share the wave's block.
    const uint64_t shared = module_on_device + intrinsics_bytes(req.batch);
    return plan_sparse(req, p, free_bytes > reserve ? free_bytes - reserve : 0, memory_written(req, img),
                       idle_block > shared ? idle_block - shared : 0);
  }
  if (req.layout == MemoryLayout::Sparse) p.layout = MemoryLayout::Interleaved;  // no memory to place
  uint64_t per = p.linear_bytes_per_instance + p.overhead_bytes_per_instance;
  // The interleaved layout rounds a wave up to whole groups of 32 instances.
  uint64_t reserve = kReserveBytes + reserved + module_bytes + 31 * p.linear_bytes_per_instance;
  uint64_t budget = free_bytes > reserve ? free_bytes - reserve : 0;
  uint64_t fit = budget / per;
  WW_TRY(check_fits(req, fit, per, free_bytes));
  // Waves need not fill the GPU's memory: once a wave holds enough
  // instances to keep every SM busy, a larger one only costs allocating,
  // zeroing and freeing more (bench/scale/alloc_cost.cu), while another
  // wave costs little, since only the pages a wave wrote are reset. Waves
  // are then made equal, so the last is not a short one.
  uint64_t wave = std::min<uint64_t>(req.instances, fit);
  const uint64_t cap = std::max<uint64_t>(kBusyWaveInstances, kWaveMemoryBytes / per);
  if (wave > cap) {
    const uint64_t waves = (uint64_t(req.instances) + cap - 1) / cap;
    wave = std::min<uint64_t>((req.instances + waves - 1) / waves + 31, fit);
  }
  wave = whole_warps(req, wave);
  p.wave_size = uint32_t(wave);
  p.waves = uint32_t((uint64_t(req.instances) + wave - 1) / wave);
  return p;
}

}  // namespace ww::gpu
