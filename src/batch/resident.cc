// Resident instances' memory from the host's side: on the GPU the device's
// own copy; on the CPU each instance's saved state (its written granules
// over the image) read, or changed as a write of those bytes would.
#include "batch/resident.h"

#include <algorithm>
#include <cstring>

#include "common/host_workers.h"

namespace ww::batch {
namespace {

constexpr uint64_t kShift = InstanceDelta::kGranuleShift;
constexpr uint64_t kGranule = uint64_t(1) << kShift;
constexpr uint64_t kStride = InstanceDelta::kStride;

// Instance memory 0 as its saved state describes it: the image's pages,
// or as many as it grew to, with its granules over them.
struct MemoryView {
  const InstanceSnapshot::Memory* image;
  const InstanceDelta::Memory* delta;  // null: the image's state

  uint64_t size() const { return uint64_t(delta ? delta->pages : image->pages) * kPageSize; }

  // Bytes [addr, addr + len) into `out` (the range lies in size()).
  void read(uint64_t addr, uint64_t len, uint8_t* out) const {
    const uint64_t image_size = image->bytes.size();
    if (addr < image_size) std::memcpy(out, image->bytes.data() + addr, std::min(len, image_size - addr));
    if (addr + len > image_size) {
      const uint64_t from = std::max(addr, image_size);
      std::memset(out + (from - addr), 0, addr + len - from);
    }
    if (!delta) return;
    // Granules in increasing order, as apply_delta lays them down (one's
    // own bytes over the spill of the one before).
    const auto& g = delta->granules;
    const uint64_t first = addr >= kStride ? (addr - kStride + 1) >> kShift : 0;
    for (size_t j = size_t(std::lower_bound(g.begin(), g.end(), uint32_t(first)) - g.begin()); j < g.size(); ++j) {
      const uint64_t at = uint64_t(g[j]) << kShift;
      if (at >= addr + len) break;
      const uint64_t lo = std::max(at, addr), hi = std::min({at + kStride, addr + len, size()});
      if (lo < hi) std::memcpy(out + (lo - addr), delta->bytes.data() + j * kStride + (lo - at), hi - lo);
    }
  }
};

std::string past_memory(uint64_t i, uint64_t addr, uint64_t len, uint64_t size) {
  return "bytes [" + std::to_string(addr) + ", " + std::to_string(addr + len) + ") are past instance " +
         std::to_string(i) + "'s memory (" + std::to_string(size / kPageSize) + " pages)";
}

}  // namespace

Status Resident::read_memory(uint64_t addr, uint64_t len, uint8_t* out) {
  if (!started_) return make_error(kNoOffset, "read_memory: the instances are not started");
  if (state_) return state_->read_memory(addr, len, out);
  if (cpu_.image.memories.empty()) return make_error(kNoOffset, "read_memory: the module has no memory");
  for (uint64_t i = 0; i < n_; ++i) {
    const MemoryView v{&cpu_.image.memories[0],
                       cpu_.deltas[i].memories.empty() ? nullptr : &cpu_.deltas[i].memories[0]};
    if (addr + len > v.size() || addr + len < addr)
      return make_error(kNoOffset, "read_memory: " + past_memory(i, addr, len, v.size()));
  }
  run_on_host_workers(size_t((n_ + 4095) / 4096), [&](size_t b) {
    for (uint64_t i = b * 4096; i < std::min<uint64_t>(n_, (b + 1) * 4096); ++i) {
      uint8_t* o = out + i * len;
      if (cpu_.traps[i]) {
        std::memset(o, 0, len);
        continue;
      }
      const MemoryView v{&cpu_.image.memories[0],
                         cpu_.deltas[i].memories.empty() ? nullptr : &cpu_.deltas[i].memories[0]};
      v.read(addr, len, o);
    }
  });
  return Status::Ok();
}

Status Resident::write_memory(uint64_t addr, uint64_t record, const uint8_t* data) {
  if (!started_) return make_error(kNoOffset, "write_memory: the instances are not started");
  if (state_) return state_->write_memory(addr, record, data);
  if (cpu_.image.memories.empty()) return make_error(kNoOffset, "write_memory: the module has no memory");
  const InstanceSnapshot::Memory& image = cpu_.image.memories[0];
  for (uint64_t i = 0; i < n_; ++i) {
    const uint64_t size =
        cpu_.deltas[i].memories.empty() ? image.bytes.size() : uint64_t(cpu_.deltas[i].memories[0].pages) * kPageSize;
    if (addr + record > size || addr + record < addr)
      return make_error(kNoOffset, "write_memory: " + past_memory(i, addr, record, size));
  }
  if (record == 0) return Status::Ok();
  run_on_host_workers(size_t((n_ + 4095) / 4096), [&](size_t b) {
    for (uint64_t i = b * 4096; i < std::min<uint64_t>(n_, (b + 1) * 4096); ++i) {
      InstanceDelta& d = cpu_.deltas[i];
      if (d.memories.empty()) {
        // The image's state so far: a delta that changes nothing but this.
        d.memories.resize(cpu_.image.memories.size());
        for (size_t k = 0; k < d.memories.size(); ++k) d.memories[k].pages = cpu_.image.memories[k].pages;
        d.globals = cpu_.image.globals;
        d.tables = cpu_.image.tables;
        d.elem_segments = cpu_.image.elem_segments;
        d.data_dropped = cpu_.image.data_dropped;
      }
      InstanceDelta::Memory& m = d.memories[0];
      const MemoryView v{&image, &m};
      const uint64_t size = v.size();
      // Every granule the range touches becomes one of the delta's, with
      // its current bytes (and spill) and then the new ones.
      const uint64_t g0 = addr >> kShift, g1 = (addr + record - 1) >> kShift;
      InstanceDelta::Memory merged;
      merged.pages = m.pages;
      size_t j = 0;
      auto take_old = [&](uint64_t upto) {
        for (; j < m.granules.size() && m.granules[j] < upto; ++j) {
          merged.granules.push_back(m.granules[j]);
          merged.bytes.insert(merged.bytes.end(), m.bytes.begin() + j * kStride, m.bytes.begin() + (j + 1) * kStride);
        }
      };
      for (uint64_t g = g0; g <= g1; ++g) {
        take_old(uint32_t(g));
        if (j < m.granules.size() && m.granules[j] == g) ++j;  // replaced below
        std::vector<uint8_t> bytes(kStride, 0);
        const uint64_t at = g << kShift;
        v.read(at, std::min(kStride, size - at), bytes.data());
        merged.granules.push_back(uint32_t(g));
        merged.bytes.insert(merged.bytes.end(), bytes.begin(), bytes.end());
      }
      take_old(~0u);
      // The new bytes over every granule (and spill) that holds them.
      for (size_t k = 0; k < merged.granules.size(); ++k) {
        const uint64_t at = uint64_t(merged.granules[k]) << kShift;
        const uint64_t lo = std::max(at, addr), hi = std::min({at + kStride, addr + record, size});
        if (lo < hi)
          std::memcpy(merged.bytes.data() + k * kStride + (lo - at), data + i * record + (lo - addr), hi - lo);
      }
      m = std::move(merged);
    }
  });
  return Status::Ok();
}

}  // namespace ww::batch
