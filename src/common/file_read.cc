#include "common/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/host_workers.h"

namespace ww {
namespace {

// Pieces of at least this size: below it a thread's start costs more than
// its share of the copy.
constexpr size_t kMinPiece = size_t(4) << 20;

Error fail(const std::string& what, const std::string& path, int e) {
  return make_error(kNoOffset, what + " " + path + ": " + std::strerror(e));
}

// Reads in order until end of file (pipes report no size).
Status read_stream(int fd, const std::string& path, Column<uint8_t>& out) {
  size_t have = 0;
  for (;;) {
    if (out.size() - have < (size_t(1) << 16)) out.resize(std::max<size_t>(out.size() * 2, size_t(1) << 20));
    ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read", path, errno);
    if (n == 0) break;
    have += size_t(n);
  }
  out.resize(have);
  return Status::Ok();
}

}  // namespace

Result<Column<uint8_t>> read_whole_file(const std::string& path) { return read_file_prefix(path, UINT64_MAX); }

Result<Column<uint8_t>> read_file_prefix(const std::string& path, uint64_t max_bytes, uint64_t* file_size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fail("cannot open", path, errno);
  if (S_ISDIR(st.st_mode)) return make_error(kNoOffset, path + " is a directory");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open", path, errno);
  Column<uint8_t> out;
  Status status = Status::Ok();
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    // /proc files say 0 and still have contents.
    status = read_stream(fd, path, out);
    if (file_size) *file_size = out.size();
    if (out.size() > max_bytes) out.resize(max_bytes);
  } else {
    if (file_size) *file_size = uint64_t(st.st_size);
    const size_t size = size_t(std::min<uint64_t>(uint64_t(st.st_size), max_bytes));
    out.resize(size);
    // A small file (a module, say) never starts the workers.
    const size_t pieces = size < 2 * kMinPiece ? 1 : std::min(size / kMinPiece, host_worker_count());
    const size_t per = (size + pieces - 1) / pieces;
    std::atomic<int> error{0};
    std::atomic<bool> short_read{false};
    auto read_piece = [&](size_t k) {
      size_t at = k * per;
      const size_t end = std::min(size, at + per);
      while (at < end) {
        ssize_t n = ::pread(fd, out.data() + at, end - at, off_t(at));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return error.store(errno);
        if (n == 0) return short_read.store(true);  // the file shrank while read
        at += size_t(n);
      }
    };
    if (pieces == 1) read_piece(0);
    else run_on_host_workers(pieces, read_piece);
    if (error.load()) status = fail("cannot read", path, error.load());
    else if (short_read.load()) status = make_error(kNoOffset, path + " changed while it was read");
  }
  ::close(fd);
  if (!status.ok()) return status.error();
  return out;
}

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  WW_ASSIGN_OR_RETURN(Column<uint8_t> bytes, read_whole_file(path));
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace ww
