// Whole input files read into memory on every core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/host_column.h"
#include "common/result.h"

namespace ww {

// The file's bytes. A regular file is read in pieces by pread on the host
// workers: from the page cache a read is a copy plus the destination's
// page faults, and on one thread a 64 MB --mem-in file is a large share of
// a 1M-instance CPU batch's wall time (bench/hashwasm/run-cpu.sh's batch).
// Anything else (a pipe, /proc) is read in order. Errors name the path.
Result<Column<uint8_t>> read_whole_file(const std::string& path);
// Its first `max_bytes` at most, the same way; `file_size` gets the whole
// file's size (a pipe's is what it held). A batch of 1M 64-byte records
// from a file of 16M reads 64 MB, not 1 GB.
Result<Column<uint8_t>> read_file_prefix(const std::string& path, uint64_t max_bytes, uint64_t* file_size = nullptr);
// The same as a vector (module files: small, and kept by their owner).
Result<std::vector<uint8_t>> read_file_bytes(const std::string& path);

}  // namespace ww
