// WASI preview1's numbers and layouts (the witx of wasi_snapshot_preview1):
// errno values, file types, clocks, and the sizes of the structs the calls
// write into guest memory (those the device shares: wasi_numbers.h).
#pragma once

#include <cerrno>
#include <cstdint>

#include "wasi/wasi_numbers.h"

namespace ww::wasi {

enum Filetype : uint8_t {
  kFiletypeUnknown = 0,
  kFiletypeBlockDevice = 1,
  kFiletypeCharacterDevice = 2,
  kFiletypeDirectory = 3,
  kFiletypeRegularFile = 4,
  kFiletypeSocketDgram = 5,
  kFiletypeSocketStream = 6,
  kFiletypeSymbolicLink = 7,
};

enum Oflags : uint32_t { kOflagCreat = 1, kOflagDirectory = 2, kOflagExcl = 4, kOflagTrunc = 8 };
enum Fdflags : uint32_t { kFdflagAppend = 1 };
// Rights: reading, and writing (refused beneath read-only preopens).
inline constexpr uint64_t kRightFdRead = 1ull << 1;
inline constexpr uint64_t kRightFdWrite = 1ull << 6;
inline constexpr uint64_t kRightsAll = (1ull << 29) - 1;

inline constexpr uint32_t kDirentSize = 24;  // next u64, ino u64, namlen u32 @16, type u8 @20
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
    case ENFILE: return kNfile;
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
