#include "cli/mpi_world.h"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#ifdef WW_HAVE_MPI
// The C API only: Open MPI's header otherwise pulls in C++ bindings that
// need a library of their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace ww::cli {
namespace {

MpiWorld g_world;

// Whether a launcher started this process as a rank: mpirun (Open MPI),
// or srun and MPICH's launchers through PMI/PMIx.
bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

#ifndef WW_HAVE_MPI
// The job's size as the launcher says it (0: it does not say): what a
// build without MPI reports when a launcher started it as a rank.
int launcher_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}
#endif

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

}  // namespace

const MpiWorld& mpi_world() { return g_world; }

MpiShare mpi_share(uint64_t n) {
  const uint64_t r = uint64_t(g_world.rank), size = uint64_t(g_world.size);
  const uint64_t base = n / size, extra = n % size;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

#ifdef WW_HAVE_MPI

MpiScope::MpiScope(int* argc, char*** argv) {
  if (!launched()) return;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    status_ = err("MPI_Init failed");
    return;
  }
  started_ = true;
  g_world.initialized = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
  MPI_Comm local;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
    MPI_Comm_rank(local, &g_world.local_rank);
    MPI_Comm_size(local, &g_world.local_size);
    MPI_Comm_free(&local);
  }
  // A rank that fails must end the job, not leave the others waiting in a
  // collective; errors come back as codes, and the CLI reports them.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void MpiScope::abort(int code) const {
  if (!started_) return;
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

MpiScope::~MpiScope() {
  if (!started_) return;
  // mpirun ends the job once a rank exits with a non-zero code (a trap):
  // every rank's output must be out before any rank leaves.
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}

uint64_t mpi_sum(uint64_t v) {
  if (!g_world.active()) return v;
  uint64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

uint64_t mpi_max(uint64_t v) {
  if (!g_world.active()) return v;
  uint64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void mpi_sum_each(std::vector<uint64_t>& v) {
  if (!g_world.active() || v.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

Status mpi_write_ordered(const std::string& path, std::string_view bytes) {
  uint64_t mine = bytes.size(), offset = 0;
  MPI_Exscan(&mine, &offset, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (g_world.rank == 0) offset = 0;  // MPI_Exscan leaves rank 0's undefined
  // One temporary name for all, from rank 0's process id.
  int64_t pid = int64_t(::getpid());
  MPI_Bcast(&pid, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const std::string tmp = path + ".tmp-mpi-" + std::to_string(pid);
  if (g_world.rank == 0) MPI_File_delete(tmp.c_str(), MPI_INFO_NULL);  // a leftover would keep its tail
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_WORLD, tmp.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
    return err("cannot create " + tmp + " on every rank");
  // Pieces below 2^31 bytes: MPI counts are ints.
  uint64_t failed = 0;
  for (uint64_t done = 0; done < mine && !failed;) {
    const int piece = int(std::min<uint64_t>(mine - done, uint64_t(1) << 30));
    MPI_Status st;
    if (MPI_File_write_at(fh, MPI_Offset(offset + done), bytes.data() + done, piece, MPI_BYTE, &st) != MPI_SUCCESS)
      failed = 1;
    done += uint64_t(piece);
  }
  MPI_File_close(&fh);
  if (mpi_max(failed)) {
    if (g_world.rank == 0) std::remove(tmp.c_str());
    return err("cannot write " + path + " (a rank's write failed)");
  }
  uint64_t renamed = 0;
  if (g_world.rank == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
    renamed = uint64_t(errno);
    std::remove(tmp.c_str());
  }
  if (uint64_t e = mpi_max(renamed)) return err("cannot write " + path + ": " + std::strerror(int(e)));
  return Status::Ok();
}

void mpi_print_ordered(std::string_view text, FILE* f) {
  if (!g_world.active()) {
    std::fwrite(text.data(), 1, text.size(), f);
    return;
  }
  // Rank 0 writes everything: mpirun forwards each rank's own stdout on
  // its own, in no order across ranks. The other ranks' texts come in
  // pieces, one held at a time.
  constexpr uint64_t kPiece = uint64_t(1) << 26;
  const int tag = f == stdout ? 11 : 12;
  if (g_world.rank != 0) {
    uint64_t n = text.size();
    MPI_Send(&n, 1, MPI_UINT64_T, 0, tag, MPI_COMM_WORLD);
    for (uint64_t at = 0; at < n; at += kPiece)
      MPI_Send(text.data() + at, int(std::min(kPiece, n - at)), MPI_CHAR, 0, tag, MPI_COMM_WORLD);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), f);
  std::string piece;
  for (int r = 1; r < g_world.size; ++r) {
    uint64_t n = 0;
    MPI_Recv(&n, 1, MPI_UINT64_T, r, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (uint64_t at = 0; at < n; at += kPiece) {
      piece.resize(size_t(std::min(kPiece, n - at)));
      MPI_Recv(piece.data(), int(piece.size()), MPI_CHAR, r, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::fwrite(piece.data(), 1, piece.size(), f);
    }
  }
  std::fflush(f);
}

void mpi_max_to_root(uint32_t* words, uint64_t n) {
  if (!g_world.active()) return;
  // In pieces: MPI counts are ints.
  constexpr uint64_t kPiece = uint64_t(1) << 28;
  for (uint64_t at = 0; at < n; at += kPiece) {
    const int count = int(std::min(kPiece, n - at));
    if (g_world.rank == 0) MPI_Reduce(MPI_IN_PLACE, words + at, count, MPI_UINT32_T, MPI_MAX, 0, MPI_COMM_WORLD);
    else MPI_Reduce(words + at, nullptr, count, MPI_UINT32_T, MPI_MAX, 0, MPI_COMM_WORLD);
  }
}

std::vector<std::string> mpi_gather(const std::string& line) {
  if (!g_world.active()) return {line};
  const int mine = int(line.size());
  std::vector<int> sizes(size_t(g_world.size)), offsets(size_t(g_world.size));
  MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < g_world.size; ++r) {
    offsets[size_t(r)] = total;
    total += sizes[size_t(r)];
  }
  std::string all(size_t(g_world.rank == 0 ? total : 0), '\0');
  MPI_Gatherv(line.data(), mine, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (g_world.rank == 0)
    for (int r = 0; r < g_world.size; ++r)
      out.push_back(all.substr(size_t(offsets[size_t(r)]), size_t(sizes[size_t(r)])));
  return out;
}

#else  // no MPI support built

MpiScope::MpiScope(int*, char***) {
  if (launched() && launcher_size() > 1)
    status_ = err("this wasmwarp was built without MPI support, so mpirun starts " + std::to_string(launcher_size()) +
                  " separate runs: build it with Open MPI (libopenmpi-dev), or run it without mpirun");
}

MpiScope::~MpiScope() = default;
void MpiScope::abort(int) const {}

uint64_t mpi_sum(uint64_t v) { return v; }
uint64_t mpi_max(uint64_t v) { return v; }
void mpi_sum_each(std::vector<uint64_t>&) {}
void mpi_print_ordered(std::string_view text, FILE* f) { std::fwrite(text.data(), 1, text.size(), f); }
std::vector<std::string> mpi_gather(const std::string& line) { return {line}; }
void mpi_max_to_root(uint32_t*, uint64_t) {}
Status mpi_write_ordered(const std::string&, std::string_view) {
  return err("mpi_write_ordered without MPI support");  // never reached: the world is one process
}

#endif

}  // namespace ww::cli
