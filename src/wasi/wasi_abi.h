// WASI preview1's numbers and layouts (the witx of wasi_snapshot_preview1):
// errno values, file types, clocks, and the sizes of the structs the calls
// write into guest memory.
#pragma once

#include <cerrno>
#include <cstdint>

namespace ww::wasi {

enum Errno : uint32_t {
  kSuccess = 0, k2Big = 1, kAcces = 2, kAgain = 6, kBadf = 8, kBusy = 10, kExist = 20, kFault = 21,
  kFbig = 22, kIntr = 27, kInval = 28, kIo = 29, kIsdir = 31, kLoop = 32, kMfile = 33, kNametoolong = 37,
  kNoent = 44, kNomem = 48, kNospc = 51, kNosys = 52, kNotdir = 54, kNotempty = 55, kNotsup = 58,
  kNotty = 59, kOverflow = 61, kPerm = 63, kPipe = 64, kRange = 68, kRofs = 69, kSpipe = 70,
  kXdev = 75, kNotcapable = 76,
};

enum Filetype : uint8_t {
  kFiletypeUnknown = 0, kFiletypeBlockDevice = 1, kFiletypeCharacterDevice = 2, kFiletypeDirectory = 3,
  kFiletypeRegularFile = 4, kFiletypeSocketDgram = 5, kFiletypeSocketStream = 6, kFiletypeSymbolicLink = 7,
};

enum Clock : uint32_t { kClockRealtime = 0, kClockMonotonic = 1, kClockProcessCputime = 2, kClockThreadCputime = 3 };
enum Whence : uint32_t { kWhenceSet = 0, kWhenceCur = 1, kWhenceEnd = 2 };
enum Oflags : uint32_t { kOflagCreat = 1, kOflagDirectory = 2, kOflagExcl = 4, kOflagTrunc = 8 };
enum Fdflags : uint32_t { kFdflagAppend = 1 };
// Rights: reading, and writing (refused beneath read-only preopens).
inline constexpr uint64_t kRightFdRead = 1ull << 1;
inline constexpr uint64_t kRightFdWrite = 1ull << 6;
inline constexpr uint64_t kRightsAll = (1ull << 29) - 1;

inline constexpr uint32_t kFdstatSize = 24;    // filetype u8, flags u16 @2, rights u64 @8, @16
inline constexpr uint32_t kFilestatSize = 64;  // dev, ino, filetype @16, nlink, size, atim, mtim, ctim
inline constexpr uint32_t kDirentSize = 24;    // next u64, ino u64, namlen u32 @16, type u8 @20
inline constexpr uint32_t kSubscriptionSize = 48;
inline constexpr uint32_t kEventSize = 32;
inline constexpr uint8_t kEventClock = 0;

inline uint32_t errno_from_host(int e) {
  switch (e) {
    case E2BIG: return k2Big;
    case EACCES: return kAcces;
    case EAGAIN: return kAgain;
    case EBADF: return kBadf;
    case EBUSY: return kBusy;
    case EEXIST: return kExist;
    case EFAULT: return kFault;
    case EFBIG: return kFbig;
    case EINTR: return kIntr;
    case EINVAL: return kInval;
    case EISDIR: return kIsdir;
    case ELOOP: return kLoop;
    case EMFILE: return kMfile;
    case ENAMETOOLONG: return kNametoolong;
    case ENOENT: return kNoent;
    case ENOMEM: return kNomem;
    case ENOSPC: return kNospc;
    case ENOSYS: return kNosys;
    case ENOTDIR: return kNotdir;
    case ENOTEMPTY: return kNotempty;
    case ENOTSUP: return kNotsup;
    case ENOTTY: return kNotty;
    case EOVERFLOW: return kOverflow;
    case EPERM: return kPerm;
    case EPIPE: return kPipe;
    case ERANGE: return kRange;
    case EROFS: return kRofs;
    case ESPIPE: return kSpipe;
    case EXDEV: return kXdev;
    default: return kIo;
  }
}

}  // namespace ww::wasi
