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
enum Fdflags : uint32_t {
  kFdflagAppend = 1,
  kFdflagDsync = 2,
  kFdflagNonblock = 4,
  kFdflagRsync = 8,
  kFdflagSync = 16,
};
inline constexpr uint32_t kFdflagsAll = 31;
inline constexpr uint32_t kFdflagsSync = kFdflagDsync | kFdflagRsync | kFdflagSync;
inline constexpr uint32_t kLookupSymlinkFollow = 1;
// fd_filestat_set_times / path_filestat_set_times.
enum Fstflags : uint32_t { kFstAtim = 1, kFstAtimNow = 2, kFstMtim = 4, kFstMtimNow = 8 };
inline constexpr uint32_t kAdviceCount = 6;  // normal, sequential, random, willneed, dontneed, noreuse

inline constexpr uint64_t kRightsAll = (1ull << 30) - 1;
// What a regular file may be given, and a directory: a descriptor's rights
// are what path_open asked for within these (and within its directory's
// inheriting rights), so that a directory never reports fd_seek or
// fd_filestat_set_size, nor a file the path_* rights.
inline constexpr uint64_t kFileRights = kRightFdDatasync | kRightFdRead | kRightFdSeek | kRightFdFdstatSetFlags |
                                        kRightFdSync | kRightFdTell | kRightFdWrite | kRightFdAdvise |
                                        kRightFdAllocate | kRightFdFilestatGet | kRightFdFilestatSetSize |
                                        kRightFdFilestatSetTimes | kRightPollFdReadwrite;
inline constexpr uint64_t kDirRights =
    kRightPathCreateDirectory | kRightPathCreateFile | kRightPathLinkSource | kRightPathLinkTarget | kRightPathOpen |
    kRightFdReaddir | kRightPathReadlink | kRightPathRenameSource | kRightPathRenameTarget | kRightPathFilestatGet |
    kRightPathFilestatSetSize | kRightPathFilestatSetTimes | kRightFdFilestatGet | kRightFdFilestatSetTimes |
    kRightPathSymlink | kRightPathRemoveDirectory | kRightPathUnlinkFile;
// A pipe's, a terminal's or stdio collected in memory: no seeking (the
// absence of fd_seek and fd_tell is what makes wasi-libc's isatty true on a
// character device).
inline constexpr uint64_t kStreamRights =
    kRightFdFdstatSetFlags | kRightFdFilestatGet | kRightPollFdReadwrite | kRightFdSync | kRightFdDatasync;

inline constexpr uint32_t kDirentSize = 24;  // next u64, ino u64, namlen u32 @16, type u8 @20
inline constexpr uint32_t kSubscriptionSize = 48;
inline constexpr uint32_t kEventSize = 32;
enum Eventtype : uint8_t { kEventClock = 0, kEventFdRead = 1, kEventFdWrite = 2 };
inline constexpr uint16_t kEventHangup = 1;  // eventrwflags.fd_readwrite_hangup

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
    case EILSEQ: return kIlseq;
    case EINVAL: return kInval;
    case EISDIR: return kIsdir;
    case ELOOP: return kLoop;
    case EMLINK: return kMlink;
    case EMFILE: return kMfile;
    case ENFILE: return kNfile;
    case ENAMETOOLONG: return kNametoolong;
    case ENOENT: return kNoent;
    case ENOMEM: return kNomem;
    case ENOSPC: return kNospc;
    case ENOSYS: return kNosys;
    case ENODEV: return kNodev;
    case ENOTDIR: return kNotdir;
    case ENOTSOCK: return kNotsock;
    case ENXIO: return kNxio;
    case ENOTEMPTY: return kNotempty;
    case ENOTSUP: return kNotsup;
    case ENOTTY: return kNotty;
    case EOVERFLOW: return kOverflow;
    case EPERM: return kPerm;
    case EPIPE: return kPipe;
    case ERANGE: return kRange;
    case EROFS: return kRofs;
    case ESPIPE: return kSpipe;
    case ETXTBSY: return kTxtbsy;
    case EXDEV: return kXdev;
    case EDQUOT: return kDquot;
    default: return kIo;
  }
}

}  // namespace ww::wasi
