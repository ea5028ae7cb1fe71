// A wave's traffic through the staging: arguments and memory inputs up,
// results and memory outputs down, and the --image canvas.
#include "exec/gpu/wave/wave_transfers.cuh"

#include <algorithm>

#include "common/host_workers.h"
#include "exec/gpu/wave/wave_kernels.h"

namespace ww::gpu {

Status WaveTransfers::prepare_arg_rows(uint32_t n) {
  // Values land at rows k * c_.slot_width; the rows between hold the high words,
  // zero but for v128 constants.
  if (!c_.args_per_row() || c_.slot_width == 1) return Status::Ok();
  WW_CUDA(cudaMemsetAsync(b_.W.io, 0, uint64_t(c_.nparams) * c_.slot_width * n * 8));
  for (uint32_t k = 0; k < c_.nparams && k < c_.req.args_hi.size(); ++k)
    if (c_.req.args_hi[k]) {
      WW_CUDA(wave_kernels::fill_words(b_.W.io + (uint64_t(k) * c_.slot_width + 1) * n, c_.req.args_hi[k], n));
    }
  return Status::Ok();
}

Status WaveTransfers::upload_args(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1) {
  // Value k of instance t at io[k * c_.slot_width * n + t] (shared ones were uploaded
  // once, in setup).
  if (!c_.args_per_row() || r1 <= r0) return Status::Ok();
  const uint32_t rows = staging_rows;
  return staging->upload(
      (r1 - r0 + rows - 1) / rows,
      [&](uint64_t p, void* buf) {
        uint64_t* io = static_cast<uint64_t*>(buf);
        const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
        if (c_.req.fill_args) {
          c_.req.fill_args(first + off, m, io);
          return;
        }
        for (uint32_t t = 0; t < m; ++t)
          for (uint32_t k = 0; k < c_.nparams; ++k)
            io[uint64_t(k) * m + t] = c_.req.args[uint64_t(first + off + t) * c_.nparams + k];
      },
      [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
        const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
        WW_CUDA(cudaMemcpy2DAsync(b_.W.io + off, uint64_t(n) * c_.slot_width * 8, buf, uint64_t(m) * 8, uint64_t(m) * 8,
                                  c_.nparams, cudaMemcpyHostToDevice, s));
        return Status::Ok();
      });
}

Status WaveTransfers::upload_mem_in(uint32_t first, uint32_t r0, uint32_t r1) {
  for (size_t k = 0; k < c_.req.mem_in.size(); ++k) {
    const MemIn& mi = c_.req.mem_in[k];
    WW_TRY(staging->send(b_.mem_in[k] + uint64_t(r0) * mi.record_size,
                         mi.data + (uint64_t(first) + r0) * mi.record_size, uint64_t(r1 - r0) * mi.record_size));
  }
  return Status::Ok();
}

Status WaveTransfers::upload_inputs(uint32_t first, uint32_t n) {
  WW_TRY(prepare_arg_rows(n));
  WW_TRY(upload_args(first, n, 0, n));
  // Columns already on the device go over what the host wrote for them.
  for (size_t k = 0; k < c_.req.device_args.size() && k < c_.nparams; ++k) {
    const BatchRequest::DeviceColumn& c = c_.req.device_args[k];
    if (!c.data) continue;
    WW_CUDA(wave_kernels::column_in(static_cast<const uint8_t*>(c.data) + uint64_t(first) * c.width, c.width, n,
                                    b_.W.io + uint64_t(k) * c_.slot_width * n));
  }
  WW_TRY(upload_mem_in(first, 0, n));
  // Inputs on the wire are the upload's: it waits for them. Without any,
  // the set-up's synchronisation covers the wave's few words.
  if (c_.inputs_on_wire()) WW_TRY(c_.end_phase(c_.upload_ms));
  else c_.lap(c_.upload_ms);
  c_.trace("wave: arguments, inputs");
  return Status::Ok();
}

Status WaveTransfers::fetch_outputs(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down) {
  if (r1 <= r0) return Status::Ok();  // every row streamed (wave_stream.cu)
  for (size_t k = 0; k < c_.req.mem_out.size(); ++k) {
    const MemOut& mo = c_.req.mem_out[k];
    WW_TRY(staging->fetch(mo.data + (uint64_t(first) + r0) * mo.length, b_.mem_out[k] + uint64_t(r0) * mo.length,
                          uint64_t(r1 - r0) * mo.length, down));
  }
  if (c_.nres && !c_.req.device_results.empty()) {
    // Results that stay on the device: column by column where the caller
    // said (a wave with them runs unsliced).
    for (uint32_t k = 0; k < c_.nres && k < c_.req.device_results.size(); ++k) {
      const BatchRequest::DeviceOut& o = c_.req.device_results[k];
      WW_CUDA(wave_kernels::column_out(b_.W.io + uint64_t(k) * c_.slot_width * n, b_.W.trap, o.width, n,
                                       static_cast<uint8_t*>(o.data) + uint64_t(first) * o.width));
    }
  } else if (c_.nres && c_.results32) {
    if (!results_mapped) WW_TRY(download_results32(first, n, r0, r1, down));  // else the kernel wrote them
    c_.trace("wave: download results");
  } else if (c_.nres) {
    const InstanceRec& irec = c_.S.instances[c_.instance];
    const uint32_t rows = staging_rows;
    WW_TRY(staging->download((r1 - r0 + rows - 1) / rows,
                             [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
                               const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                               WW_CUDA(cudaMemcpy2DAsync(buf, uint64_t(m) * 8, b_.W.io + off, uint64_t(n) * 8,
                                                         uint64_t(m) * 8, c_.nres * c_.slot_width,
                                                         cudaMemcpyDeviceToHost, s));
                               return Status::Ok();
                             },
                             [&](uint64_t p, void* buf) {
                               const uint64_t* io = static_cast<const uint64_t*>(buf);
                               const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                               const BatchRequest::Destination to_d = c_.dest.from(first + off, c_.nres);
                               uint64_t* to = to_d.results;
                               uint64_t* to_hi = to_d.results_hi;
                               uint32_t* to32 = to_d.results32;  // 32-bit results in wider slots (v128 modules)
                               if (c_.nres == 1 && c_.slot_width == 1 && !c_.ref_results && !to32) {
                                 parallel_copy(to, io, uint64_t(m) * 8);
                                 return;
                               }
                               // Column k of the piece to field k of each row, in row blocks on
                               // every core (references are translated on one: they are rare).
                               const uint32_t block = c_.ref_results ? m : 1u << 15;
                               run_on_host_workers((m + block - 1) / block, [&](size_t b) {
                                 const uint32_t t0 = uint32_t(b) * block, t1 = std::min(m, t0 + block);
                                 for (uint32_t t = t0; t < t1; ++t)
                                   for (uint32_t k = 0; k < c_.nres; ++k) {
                                     uint64_t v = io[uint64_t(k) * c_.slot_width * m + t];
                                     if (is_ref(c_.ftype->results[k]))
                                       v = from_gpu_ref(irec, c_.img, c_.ftype->results[k], v);
                                     if (to32) {
                                       to32[uint64_t(t) * c_.nres + k] = uint32_t(v);
                                       continue;
                                     }
                                     to[uint64_t(t) * c_.nres + k] = v;
                                     if (to_hi)
                                       to_hi[uint64_t(t) * c_.nres + k] =
                                           c_.slot_width > 1 ? io[(uint64_t(k) * c_.slot_width + 1) * m + t] : 0;
                                   }
                               });
                             },
                             down));
    c_.trace("wave: download results");
  }
  return Status::Ok();
}

// 32-bit results, packed on the device. Into a pinned 4-byte column they
// come straight down; otherwise through the staging, copied, transposed or
// widened into their column there.
Status WaveTransfers::download_results32(uint32_t first, uint32_t n, uint32_t r0, uint32_t r1, cudaStream_t down) {
  uint32_t* to32 = c_.dest.results32 ? c_.dest.results32 + uint64_t(first) * c_.nres : nullptr;
  const bool direct = to32 && c_.nres == 1 && host_range_pinned(to32 + r0, uint64_t(r1 - r0) * 4);
  if (direct && b_.W.packed32) {
    WW_TRY(staging->fetch(to32 + r0, b_.W.packed32 + r0, uint64_t(r1 - r0) * 4, down));
    c_.trace("wave: results straight down");
    return Status::Ok();
  }
  const uint32_t rows = uint32_t(std::min<uint64_t>(r1 - r0, staging->piece_bytes() / (4 * uint64_t(c_.nres))));
  return staging->download((r1 - r0 + rows - 1) / rows,
                           [&](uint64_t p, void* buf, cudaStream_t s) -> Status {
                             const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                             if (b_.W.packed32) {  // packed as the instances finished
                               WW_CUDA(cudaMemcpy2DAsync(buf, uint64_t(m) * 4, b_.W.packed32 + off, uint64_t(n) * 4,
                                                         uint64_t(m) * 4, c_.nres, cudaMemcpyDeviceToHost, s));
                               return Status::Ok();
                             }
                             uint32_t* packed = b_.results32_scratch[p & 1];
                             WW_CUDA(wave_kernels::pack_results32(s, b_.W.io, n, off, m, c_.nres, packed));
                             WW_CUDA(cudaMemcpyAsync(direct ? static_cast<void*>(to32 + off) : buf, packed,
                                                     uint64_t(m) * c_.nres * 4, cudaMemcpyDeviceToHost, s));
                             return Status::Ok();
                           },
                           [&](uint64_t p, void* buf) {
                             c_.trace("wave: 32-bit results piece down");
                             if (direct) return;
                             const uint32_t* v = static_cast<const uint32_t*>(buf);
                             const uint32_t off = r0 + uint32_t(p * rows), m = std::min(rows, r1 - off);
                             if (to32 && c_.nres == 1) {
                               parallel_copy(to32 + off, v, uint64_t(m) * 4);
                               return;
                             }
                             uint64_t* to = to32 ? nullptr : c_.dest.results + uint64_t(first + off) * c_.nres;
                             if (c_.nres == 1) {
                               parallel_widen_u32(to, v, m);
                               return;
                             }
                             uint32_t* row32 = to32 ? to32 + uint64_t(off) * c_.nres : nullptr;
                             constexpr uint32_t kRowsPerJob = 1u << 16;
                             run_on_host_workers((m + kRowsPerJob - 1) / kRowsPerJob, [&](size_t b) {
                               const uint32_t t0 = uint32_t(b) * kRowsPerJob, t1 = std::min(m, t0 + kRowsPerJob);
                               for (uint32_t t = t0; t < t1; ++t)
                                 for (uint32_t k = 0; k < c_.nres; ++k) {
                                   const uint32_t x = v[uint64_t(k) * m + t];
                                   if (row32) row32[uint64_t(t) * c_.nres + k] = x;
                                   else to[uint64_t(t) * c_.nres + k] = x;
                                 }
                             });
                           },
                           down);
}

// Through the staging, Mandelbrot's 33 MB canvas would come down after its
// 33 MB of results, doubling the download behind a short kernel: after
// the last kernel, it comes straight into its registered host copy on the
// outputs stream, beside the results' download.
Status WaveTransfers::queue_canvas(uint32_t first, uint32_t n) {
  GpuBatch* gb = c_.req.batch;
  if (!gb || !gb->image || !b_.I.image || c_.req.claim || c_.req.resident || b_.canvas_mapped ||
      first + n < c_.req.instances)
    return Status::Ok();
  const uint64_t bytes = gb->image->pixels.size() * 4;
  if (!host_range_pinned(gb->image->pixels.data(), bytes)) return Status::Ok();
  WW_CUDA(cudaStreamWaitEvent(sig->outputs, sig->stop, 0));
  WW_CUDA(cudaMemcpyAsync(gb->image->pixels.data(), b_.I.image, bytes, cudaMemcpyDeviceToHost, sig->outputs));
  WW_CUDA(cudaEventRecord(sig->canvas, sig->outputs));
  canvas_queued = true;
  return Status::Ok();
}

// Waits for queue_canvas's copy. Before a later launch (a wave that runs
// again draws after the copy) finish_outputs() then fetches the canvas, once the
// copy has stopped writing it.
Status WaveTransfers::drop_queued_canvas() {
  if (canvas_queued) WW_CUDA(cudaEventSynchronize(sig->canvas));
  canvas_queued = false;
  return Status::Ok();
}

}  // namespace ww::gpu
