// The GPU batch path's tuning values, all in one place. The defaults are
// what the benchmarks were measured with (bench/gpu/run.sh,
// bench/hashwasm, bench/scale, scripts/gpu-check.sh's tables); a user
// changes them through EngineOptions::gpu.tuning (and --gpu-workers) to
// experiment, never to get correct results: every value gives the same
// outputs.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace ww {

struct GpuTuning {
  // The most slices a wave whose instances take inputs runs in: each
  // slice's transfers go beside another slice's kernel (wave_slices.cu).
  // 1: every wave in one launch.
  uint32_t wave_slices = 8;
  // The most stretches a wave's results come down in while its kernel
  // still runs (wave_stream.cu). 1: all of them after the kernel.
  uint32_t stream_stretches = 8;
  // The ring of pinned host pieces that transfers go through
  // (pinned_staging.cuh): each piece's size and their number. Several
  // pieces in flight keep the copy engine busy while the host fills or
  // empties another (bench/scale/staging_pipeline.cu).
  uint32_t staging_piece_mib = 4;
  uint32_t staging_pieces = 8;
  // Host threads that copy through the staging and fill result columns
  // (common/host_workers.h), the calling thread included; 0: every core.
  // Takes effect before the process's first batch, which starts them.
  uint32_t host_workers = 0;
  // Wave loops per GPU, each with its share of the GPU's memory, so that
  // one wave's transfers and host work overlap another's kernel.
  uint32_t wave_loops_per_gpu = 1;

  // The limits of each value.
  static constexpr uint32_t kMaxSlices = 8, kMaxStretches = 8, kMaxPieces = 8, kMaxPieceMiB = 1024, kMaxWaveLoops = 8;

  uint64_t staging_piece_bytes() const { return uint64_t(staging_piece_mib) << 20; }
  bool operator==(const GpuTuning&) const = default;
  // "gpu tuning: wave_slices is 1 to 8, not 0", or Ok.
  [[nodiscard]] Status check() const {
    auto in = [](const char* name, uint32_t v, uint32_t lo, uint32_t hi) -> Status {
      if (v >= lo && v <= hi) return Status::Ok();
      return make_error(kNoOffset, std::string("gpu tuning: ") + name + " is " + std::to_string(lo) + " to " +
                                       std::to_string(hi) + ", not " + std::to_string(v));
    };
    WW_TRY(in("wave_slices", wave_slices, 1, kMaxSlices));
    WW_TRY(in("stream_stretches", stream_stretches, 1, kMaxStretches));
    WW_TRY(in("staging_piece_mib", staging_piece_mib, 1, kMaxPieceMiB));
    WW_TRY(in("staging_pieces", staging_pieces, 2, kMaxPieces));
    WW_TRY(in("host_workers", host_workers, 0, 1024));
    WW_TRY(in("wave_loops_per_gpu", wave_loops_per_gpu, 1, kMaxWaveLoops));
    return Status::Ok();
  }
};

namespace gpu {
using Tuning = GpuTuning;
}  // namespace gpu

}  // namespace ww
