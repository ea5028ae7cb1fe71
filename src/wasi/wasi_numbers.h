// The part of WASI preview1's numbers that the device serves too
// (exec/gpu/device/dev_wasi.cuh): errno values, clocks, seek's whence,
// the sizes of fdstat and filestat, and random_get's seeded generator, so
// that the host's calls and the GPU's give the same numbers and bytes. Compiles with nvcc
// and NVRTC: no host headers beyond <stdint.h>.
#pragma once

#include <stdint.h>

#include "semantics/hd.h"

namespace ww::wasi {

// clang-format off
enum Errno : uint32_t {
  kSuccess = 0, k2Big = 1, kAcces = 2, kAgain = 6, kBadf = 8, kBusy = 10, kExist = 20, kFault = 21,
  kFbig = 22, kIntr = 27, kInval = 28, kIo = 29, kIsdir = 31, kLoop = 32, kMfile = 33, kNametoolong = 37, kNfile = 41,
  kNoent = 44, kNomem = 48, kNospc = 51, kNosys = 52, kNotdir = 54, kNotempty = 55, kNotsup = 58,
  kNotty = 59, kOverflow = 61, kPerm = 63, kPipe = 64, kRange = 68, kRofs = 69, kSpipe = 70,
  kXdev = 75, kNotcapable = 76,
};
// clang-format on

enum Clock : uint32_t { kClockRealtime = 0, kClockMonotonic = 1, kClockProcessCputime = 2, kClockThreadCputime = 3 };
inline constexpr uint32_t kClockCount = 4;

enum Whence : uint32_t { kWhenceSet = 0, kWhenceCur = 1, kWhenceEnd = 2 };

inline constexpr uint32_t kFdstatSize = 24;    // filetype u8, flags u16 @2, rights u64 @8, @16
inline constexpr uint32_t kFilestatSize = 64;  // dev, ino, filetype @16, nlink, size, atim, mtim, ctim

// random_get with a seed (batches): word `counter` (1, 2, ...) of
// SplitMix64 over seed; the bytes are its little-endian bytes, 8 a word.
WW_HD inline uint64_t seeded_random_word(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * counter;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace ww::wasi
