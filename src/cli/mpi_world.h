// `mpirun -np R wasmwarp run ...`: the MPI job this process is a rank of,
// its share of a batch's instances, and the few collectives the CLI needs
// to write one set of outputs from every rank. Without MPI support built
// (WW_HAVE_MPI), or started without mpirun, the world is one process and
// every collective is the identity.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace ww::cli {

struct MpiWorld {
  int rank = 0;
  int size = 1;
  // Among the ranks on this host (GPUs are handed out by it).
  int local_rank = 0;
  int local_size = 1;
  // MPI_Init ran (even for one rank): the process finalizes before it ends.
  bool initialized = false;
  bool active() const { return size > 1; }
};
const MpiWorld& mpi_world();

// First thing in main: MPI_Init when a launcher (mpirun, srun) started the
// process. status() is an error when one did but MPI support is not built.
class MpiScope {
 public:
  MpiScope(int* argc, char*** argv);
  ~MpiScope();
  MpiScope(const MpiScope&) = delete;
  MpiScope& operator=(const MpiScope&) = delete;
  const Status& status() const { return status_; }
  // Ends the whole job with `code`: a rank that fails may leave the others
  // waiting in a collective it never reaches.
  void abort(int code) const;

 private:
  Status status_ = Status::Ok();
  bool started_ = false;
};

// This rank's instances of a batch of n: [first, first + count), the
// first n % size ranks taking one more, in rank order.
struct MpiShare {
  uint64_t first = 0, count = 0;
};
MpiShare mpi_share(uint64_t n);

// Collectives: every rank calls them, in the same order.
uint64_t mpi_sum(uint64_t v);
uint64_t mpi_max(uint64_t v);
// Each element summed over the ranks, in place.
void mpi_sum_each(std::vector<uint64_t>& v);
// Every rank's `bytes`, one after another in rank order, into `path`,
// which appears whole or not at all (a temporary name that rank 0 renames
// once every rank wrote). Each rank holds only its own share.
[[nodiscard]] Status mpi_write_ordered(const std::string& path, std::string_view bytes);
// Every rank's `text` to `f` (stdout or stderr) in rank order, written by
// rank 0.
void mpi_print_ordered(std::string_view text, FILE* f);
// Rank 0 gets each word's maximum over the ranks, in place; the others'
// words are left as they are.
void mpi_max_to_root(uint32_t* words, uint64_t n);
// Rank 0 gets every rank's `line`, in rank order; the others nothing.
std::vector<std::string> mpi_gather(const std::string& line);

}  // namespace ww::cli
