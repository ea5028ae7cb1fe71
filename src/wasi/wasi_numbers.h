// The part of WASI preview1's numbers that the device serves too
// (exec/gpu/device/dev_wasi.cuh): errno values, clocks, seek's whence,
// rights, the sizes of fdstat and filestat, and random_get's seeded generator, so
// that the host's calls and the GPU's give the same numbers and bytes. Compiles with nvcc
// and NVRTC: no host headers beyond <stdint.h>.
#pragma once

#include <stdint.h>

#include "semantics/hd.h"

namespace ww::wasi {

// clang-format off
enum Errno : uint32_t {
  kSuccess = 0, k2Big = 1, kAcces = 2, kAgain = 6, kBadf = 8, kBusy = 10, kDquot = 19, kExist = 20, kFault = 21,
  kFbig = 22, kIlseq = 25, kIntr = 27, kInval = 28, kIo = 29, kIsdir = 31, kLoop = 32, kMfile = 33, kMlink = 34,
  kNametoolong = 37, kNfile = 41, kNodev = 43, kNoent = 44, kNomem = 48, kNospc = 51, kNosys = 52, kNotdir = 54,
  kNotempty = 55, kNotsock = 57, kNotsup = 58, kNotty = 59, kNxio = 60, kOverflow = 61, kPerm = 63, kPipe = 64,
  kRange = 68, kRofs = 69, kSpipe = 70, kTxtbsy = 74, kXdev = 75, kNotcapable = 76,
};
// clang-format on

enum Clock : uint32_t { kClockRealtime = 0, kClockMonotonic = 1, kClockProcessCputime = 2, kClockThreadCputime = 3 };
inline constexpr uint32_t kClockCount = 4;

enum Whence : uint32_t { kWhenceSet = 0, kWhenceCur = 1, kWhenceEnd = 2 };

// Rights, bit k of the witx's `rights` flags.
inline constexpr uint64_t kRightFdDatasync = 1ull << 0;
inline constexpr uint64_t kRightFdRead = 1ull << 1;
inline constexpr uint64_t kRightFdSeek = 1ull << 2;
inline constexpr uint64_t kRightFdFdstatSetFlags = 1ull << 3;
inline constexpr uint64_t kRightFdSync = 1ull << 4;
inline constexpr uint64_t kRightFdTell = 1ull << 5;
inline constexpr uint64_t kRightFdWrite = 1ull << 6;
inline constexpr uint64_t kRightFdAdvise = 1ull << 7;
inline constexpr uint64_t kRightFdAllocate = 1ull << 8;
inline constexpr uint64_t kRightPathCreateDirectory = 1ull << 9;
inline constexpr uint64_t kRightPathCreateFile = 1ull << 10;
inline constexpr uint64_t kRightPathLinkSource = 1ull << 11;
inline constexpr uint64_t kRightPathLinkTarget = 1ull << 12;
inline constexpr uint64_t kRightPathOpen = 1ull << 13;
inline constexpr uint64_t kRightFdReaddir = 1ull << 14;
inline constexpr uint64_t kRightPathReadlink = 1ull << 15;
inline constexpr uint64_t kRightPathRenameSource = 1ull << 16;
inline constexpr uint64_t kRightPathRenameTarget = 1ull << 17;
inline constexpr uint64_t kRightPathFilestatGet = 1ull << 18;
inline constexpr uint64_t kRightPathFilestatSetSize = 1ull << 19;
inline constexpr uint64_t kRightPathFilestatSetTimes = 1ull << 20;
inline constexpr uint64_t kRightFdFilestatGet = 1ull << 21;
inline constexpr uint64_t kRightFdFilestatSetSize = 1ull << 22;
inline constexpr uint64_t kRightFdFilestatSetTimes = 1ull << 23;
inline constexpr uint64_t kRightPathSymlink = 1ull << 24;
inline constexpr uint64_t kRightPathRemoveDirectory = 1ull << 25;
inline constexpr uint64_t kRightPathUnlinkFile = 1ull << 26;
inline constexpr uint64_t kRightPollFdReadwrite = 1ull << 27;
inline constexpr uint64_t kRightSockShutdown = 1ull << 28;
inline constexpr uint64_t kRightSockAccept = 1ull << 29;

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
