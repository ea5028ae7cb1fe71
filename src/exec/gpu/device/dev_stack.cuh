// The interpreter's call stack past an instance's own slots: segments from
// a pool shared by the wave, so that recursion reaches the CPU backend's
// limits without every instance holding that much.
//
// An instance starts in its own stack (DevWave::slots, stack_slots slots,
// call records in call_pc/call_func/call_fb for max_depth calls). A call
// that does not fit there, or in the segment it runs in, moves to the next
// segment: the callee's arguments are copied to it, and the caller's
// place goes into the segment's header.
//
// A segment is a column of seg_slots slots at stride 32 in the same lane
// (address mod 256) as the instance's own column: segment c of lane L at
// stack_pool[(c * seg_slots + a) * 32 + L]. Its slots are then slots of
// the instance's own column at a (signed) distance, so a frame in a
// segment is just a frame base, and the interpreter's loop, its slot
// accesses and its registers stay as they were without segments: only
// calls and returns that cross the instance's own stack look further.
// Lanes take segments from counters of their own, so the threads of a warp
// that recurse together take the same c (coalesced).
//
// Within a segment, frames grow up from kSegFrames and the records of
// calls made inside it grow down from its top, so a segment holds a few
// wide frames or many narrow ones. A segment, once taken, stays the
// instance's for the wave and is linked from the one before it
// (kSegNext), so a recursion that goes back and forth over a boundary
// takes it once.
#pragma once

#include <stdint.h>

#include "bytecode/function_code.h"
#include "exec/gpu/device/dev_state.cuh"
#include "semantics/traps.h"

namespace ww::gpu {

// Header slots of a segment. "Places" are frame bases relative to the
// instance's own column (0: its own stack).
enum : uint32_t {
  kSegPrevFrame = 0,  // the caller's frame base | the call's base slot << 32
  kSegReturn = 1,     // return word offset | the caller's function << 32
  kSegPrev = 2,       // the previous segment's place (0: the instance's own stack)
  kSegShape = 3,      // the depth of its first frame | its slot offset << 32 (below)
  kSegNext = 4,       // the next segment's place once taken, or 0
  kSegFrames = 5,     // the first frame slot
};

// One thread's frame column (see DevWave::slots): slot a at gm[a * 32],
// a signed, so that segments below the column are reachable too.
struct Frames {
  uint64_t* gm;
  __device__ __forceinline__ uint64_t& at(uint32_t a) const { return gm[int64_t(int32_t(a)) * 32]; }
};

// Where a segment stands in the stack the CPU would lay out contiguously:
// frame base f of it is slot f + offset there (mod 2^32), which the CPU's
// limits count.
struct SegShape {
  uint32_t first_depth;
  uint32_t offset;
};

__device__ __forceinline__ SegShape seg_shape(const Frames& fr, uint32_t seg) {
  if (seg == 0) return SegShape{0, 0};
  const uint64_t v = fr.at(seg + kSegShape);
  return SegShape{uint32_t(v), uint32_t(v >> 32)};
}

// The segment after `seg` for instance t (lane t % 32), taken from the
// pool the first time; 0 when the lane's part of the pool is used up.
__device__ inline uint32_t next_segment(const DevWave& w, uint32_t t, const Frames& fr, uint32_t seg) {
  uint32_t next = seg ? uint32_t(fr.at(seg + kSegNext)) : w.stack_next[t];
  if (next) return next;
  const uint32_t lane = t & 31u;
  const uint32_t c = atomicAdd(&w.stack_used[lane], 1u);
  if (c >= w.stack_per_lane) return 0;
  const uint64_t* col = w.stack_pool + uint64_t(c) * w.seg_slots * 32 + lane;
  // Both columns are in lane t % 32 of 256-byte aligned blocks: the
  // distance is whole slots. Device memory is far below 2^31 slots of
  // 256 bytes, so it fits a signed 32-bit place.
  next = uint32_t(int32_t((col - fr.gm) / 32));
  fr.at(next + kSegNext) = 0;
  if (seg) fr.at(seg + kSegNext) = next;
  else w.stack_next[t] = next;
  return next;
}

// Record k (0: return offset | function << 32, 1: frame base) of the call
// made at `depth` inside segment `seg`.
__device__ __forceinline__ uint64_t& seg_record(const DevWave& w, const Frames& fr, uint32_t seg, SegShape s,
                                                uint32_t depth, uint32_t k) {
  return fr.at(seg + w.seg_slots - 2 * (depth - s.first_depth + 1) + k);
}

// The interpreter's calls and returns that leave or cross the instance's
// own stack. Out of line: inline in the interpreter's loop, this code
// would make ptxas give the loop fewer registers, and every interpreted
// program would run far slower (bench/gpu/kernel-ab.sh compares
// interpreter kernels).
struct SegmentMove {
  uint32_t fb;
  TrapCode trap;
};

// A call from frame base fb at `depth` with the callee's frame at fb +
// call_base (its arguments there): where the callee's frame goes, or the
// trap.
__device__ __noinline__ inline SegmentMove segment_call(const DevWave& w, uint32_t t, Frames fr, uint32_t fb,
                                                        uint32_t call_base, const FunctionCode& fc, uint32_t depth,
                                                        uint32_t cur, uint32_t ret_off) {
  const uint32_t seg = fb > w.stack_slots ? w.stack_seg[t] : 0;
  const SegShape shape = seg_shape(fr, seg);
  const uint32_t nfb = fb + call_base;
  // The CPU backend's limits, counted on the stack as if it were one
  // contiguous array, so that both backends run out at the same call.
  if (depth + 1 >= w.depth_limit || uint64_t(nfb + shape.offset) + fc.frame_slots > w.slots_limit)
    return {0, TrapCode::CallStackExhausted};
  if (seg && nfb - seg + fc.frame_slots + 2 * (depth - shape.first_depth + 1) <= w.seg_slots) {
    seg_record(w, fr, seg, shape, depth, 0) = ret_off | uint64_t(cur) << 32;
    seg_record(w, fr, seg, shape, depth, 1) = fb;
    return {nfb, TrapCode::None};
  }
  // The callee starts the next segment with its arguments; the caller's
  // place goes into the segment's header.
  const uint32_t next = next_segment(w, t, fr, seg);
  if (!next || kSegFrames + fc.frame_slots + 2 > w.seg_slots) return {0, TrapCode::OutOfStackPool};
  fr.at(next + kSegPrevFrame) = fb | uint64_t(call_base) << 32;
  fr.at(next + kSegReturn) = ret_off | uint64_t(cur) << 32;
  fr.at(next + kSegPrev) = seg;
  fr.at(next + kSegShape) = (depth + 1) | uint64_t(nfb + shape.offset - (next + kSegFrames)) << 32;
  for (uint32_t k = 0; k < fc.num_params; ++k) fr.at(next + kSegFrames + k) = fr.at(nfb + k);
  w.stack_seg[t] = next;
  return {next + kSegFrames, TrapCode::None};
}

struct SegmentReturn {
  uint32_t fb, ret_off, func;
};

// The return of function `cur` at `depth` from a frame in a segment: the
// caller's frame base, return offset and function (its results, from a
// segment's first frame, copied to the caller's frame).
__device__ __noinline__ inline SegmentReturn segment_return(const DevWave& w, uint32_t t, Frames fr, uint32_t fb,
                                                            uint32_t depth, uint32_t num_results) {
  const uint32_t seg = w.stack_seg[t];
  const SegShape shape = seg_shape(fr, seg);
  if (depth == shape.first_depth) {
    const uint64_t frame = fr.at(seg + kSegPrevFrame), ret = fr.at(seg + kSegReturn);
    const uint32_t dst = uint32_t(frame) + uint32_t(frame >> 32);
    for (uint32_t k = 0; k < num_results; ++k) fr.at(dst + k) = fr.at(fb + k);
    w.stack_seg[t] = uint32_t(fr.at(seg + kSegPrev));
    return {uint32_t(frame), uint32_t(ret), uint32_t(ret >> 32)};
  }
  const uint64_t ret = seg_record(w, fr, seg, shape, depth - 1, 0);
  return {uint32_t(seg_record(w, fr, seg, shape, depth - 1, 1)), uint32_t(ret), uint32_t(ret >> 32)};
}

}  // namespace ww::gpu
