// --output files of `wasmwarp run`: one row per instance.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "cli/io_formats.h"
#include "cli/values.h"

namespace ww::cli {

enum class OutFormat { None, Csv, Json, Npy };

// numpy's descr of a result type, or null for types .npy cannot hold.
const char* npy_descr(ValType t);

// --output rows of a batch's result, written in order: the header, rows
// [first, end) as often as asked (each range after the one before), then
// the end (for .npy with --allow-traps, `trap_file` gets the trap codes).
// Rows are formatted on every core.
using wasmwarp::ResultColumns;

// Where a writer's bytes go, in order: a file, or (an MPI rank's share)
// memory.
using ByteSink = std::function<Status(std::string_view)>;
ByteSink sink_to(AtomicFile& f);

// The rows' numbering: row i is instance index_base + i of a batch of
// `total` (0: the rows'), as when an MPI rank writes its share.
struct RowNumbers {
  uint64_t index_base = 0;
  uint64_t total = 0;
};

class ResultWriter {
 public:
  ResultWriter(ResultColumns r, const wasmwarp::Module& m, OutFormat fmt, ByteSink out, RowNumbers numbers = {})
      : r_(std::move(r)), m_(m), fmt_(fmt), out_(std::move(out)), numbers_(numbers) {}
  ResultWriter(ResultColumns r, const wasmwarp::Module& m, OutFormat fmt, AtomicFile& out)
      : ResultWriter(std::move(r), m, fmt, sink_to(out)) {}
  [[nodiscard]] Status begin();
  [[nodiscard]] Status rows(uint64_t first, uint64_t end);
  // The end of the rows (JSON's closing bracket).
  [[nodiscard]] Status end();
  // end(), then for .npy with --allow-traps the trap codes into `trap_file`.
  [[nodiscard]] Status finish(AtomicFile* trap_file);

 private:
  uint64_t total() const { return numbers_.total ? numbers_.total : r_.instances; }

  const ResultColumns r_;
  const wasmwarp::Module& m_;
  OutFormat fmt_;
  const ByteSink out_;
  const RowNumbers numbers_;
};

// Writes every instance's results (or its trap) to `out`; for .npy with
// --allow-traps, `trap_file` gets the trap codes.
Status write_results(const wasmwarp::CallResult& r, const wasmwarp::Module& m, OutFormat fmt, AtomicFile& out,
                     AtomicFile* trap_file);

// Writes --output rows and --mem-out records while a batch runs, on a
// thread of its own, as the batch engine reports them final
// (CallOptions::on_ready): a batch of many waves has its outputs written
// while later waves run, and what is left when it ends is the last part.
// Files are only written, never committed, here.
class OutputStream {
 public:
  // `out` is null without --output (fmt is then unused); mem_out[k] gets
  // mem_len[k] bytes per instance.
  OutputStream(const wasmwarp::Module& m, OutFormat fmt, AtomicFile* out, std::vector<AtomicFile*> mem_out,
               std::vector<uint64_t> mem_len);
  ~OutputStream();
  // CallOptions::on_ready.
  void ready(const ResultColumns& r, uint64_t upto);
  // After the batch: the rest of the rows, the end of the files (the trap
  // codes into `trap_file`), and the first error of any write.
  [[nodiscard]] Status finish(const wasmwarp::CallResult& r, AtomicFile* trap_file);

 private:
  void write_loop();
  // Ends the writing thread (what it had not written stays for finish()).
  void stop();
  Status write_upto(const ResultColumns& r, uint64_t upto);
  // The --output writer, its header written at the first use.
  Result<ResultWriter*> rows_writer(const ResultColumns& r);

  const wasmwarp::Module& m_;
  const OutFormat fmt_;
  AtomicFile* const out_;
  const std::vector<AtomicFile*> mem_out_;
  const std::vector<uint64_t> mem_len_;
  std::unique_ptr<ResultWriter> rows_;
  uint64_t written_ = 0;  // the writing thread's, then finish()'s
  Status status_ = Status::Ok();
  std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<ResultColumns> r_;  // taken at the first ready()
  uint64_t ready_ = 0;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace ww::cli
