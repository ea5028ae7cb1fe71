#include "exec/gpu/gpu_plan.h"

#include <algorithm>

namespace ww::gpu {

const char* layout_name(MemoryLayout l) {
  return l == MemoryLayout::Interleaved ? "interleaved" : "contiguous";
}

std::string BatchPlan::to_string() const {
  auto kib = [](uint64_t b) { return std::to_string((b + 1023) / 1024) + " KiB"; };
  return "memory " + std::to_string(memory_pages) + " pages (" + kib(linear_bytes_per_instance) +
         ") + " + std::to_string(overhead_bytes_per_instance) + " B per instance; " +
         std::to_string(waves) + (waves == 1 ? " wave" : " waves") + " of up to " +
         std::to_string(wave_size) + " instances; " + kib(device_free_bytes) + " GPU memory free";
}

uint32_t memory_pages_for(const BatchRequest& req, const GpuImage& img) {
  if (!img.has_memory) return 0;
  uint32_t pages = req.memory_pages;
  if (pages == 0) pages = img.uses_memory_grow ? img.init_pages + kDefaultGrowPages : img.init_pages;
  pages = std::min(pages, std::max(img.max_pages, img.init_pages));
  return std::max(pages, img.init_pages);
}

uint64_t overhead_bytes_per_instance(const BatchRequest& req, const GpuImage& img, bool frames) {
  uint64_t b = 0;
  if (frames) {
    b += uint64_t(req.stack_slots) * 8;      // frames
    b += uint64_t(req.max_call_depth) * 12;  // call records
  }
  b += img.globals.size() * 8;
  if (req.module && req.func_index < req.module->module.num_funcs()) {  // arguments and results
    const FuncType& ft = req.module->module.func_type(req.func_index);
    b += 8 * std::max(ft.params.size(), ft.results.size());
  }
  if (img.tables_mutable) b += uint64_t(img.total_table_cap()) * 8 + img.table_cap.size() * 4;
  b += img.data_size.size() + img.elem_size.size();  // dropped flags
  b += 4 + 1 + 4 + 4 + 1;                            // pages, trap, trap func/pc, finished
  b += (memory_pages_for(req, img) + 31) / 32;       // a dirty flag per page per 32 instances
  for (const MemIn& m : req.mem_in) b += m.record_size;
  for (const MemOut& m : req.mem_out) b += m.length;
  return b;
}

Result<BatchPlan> plan_for(const BatchRequest& req, const GpuImage& img, uint64_t free_bytes,
                           bool frames, uint64_t reserved) {
  BatchPlan p;
  p.memory_pages = memory_pages_for(req, img);
  p.linear_bytes_per_instance = uint64_t(p.memory_pages) * kPageSize;
  p.overhead_bytes_per_instance = overhead_bytes_per_instance(req, img, frames);
  p.device_free_bytes = free_bytes;
  uint64_t module_bytes = img.code.size() * 4 + img.consts.size() * 8 + img.memory.size() +
                          img.data_bytes.size() + img.table_elems.size() * 8 + img.elem_refs.size() * 8;
  uint64_t per = p.linear_bytes_per_instance + p.overhead_bytes_per_instance;
  // The interleaved layout rounds a wave up to whole groups of 32 instances.
  uint64_t reserve = kReserveBytes + reserved + module_bytes + 31 * p.linear_bytes_per_instance;
  uint64_t budget = free_bytes > reserve ? free_bytes - reserve : 0;
  uint64_t fit = budget / per;
  if (fit < std::min<uint64_t>(32, req.instances))
    return make_error(kNoOffset, "this batch needs " + std::to_string(per) +
                                     " bytes of GPU memory per instance but only " +
                                     std::to_string(free_bytes) + " bytes are free");
  // Waves need not fill the GPU's memory: once a wave holds enough
  // instances to keep every SM busy, a larger one only costs allocating,
  // zeroing and freeing more (about 1 ms per GB on an H200), while another
  // wave costs little, since only the pages a wave wrote are reset. Waves
  // are then made equal, so the last is not a short one.
  uint64_t wave = std::min<uint64_t>(req.instances, fit);
  const uint64_t cap = std::max<uint64_t>(kBusyWaveInstances, kWaveMemoryBytes / per);
  if (wave > cap) {
    const uint64_t waves = (uint64_t(req.instances) + cap - 1) / cap;
    wave = std::min<uint64_t>((req.instances + waves - 1) / waves + 31, fit);
  }
  if (req.max_wave) wave = std::min<uint64_t>(wave, std::max<uint32_t>(req.max_wave, 1));
  // Whole warps per wave, except a last short one.
  if (wave < req.instances && wave >= 32) wave -= wave % 32;
  p.wave_size = uint32_t(wave);
  p.waves = uint32_t((uint64_t(req.instances) + wave - 1) / wave);
  return p;
}

}  // namespace ww::gpu
