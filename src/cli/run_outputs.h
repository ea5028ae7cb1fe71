// --output files of `wasmwarp run`: one row per instance.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "batch/batch.h"
#include "cli/io_formats.h"

namespace ww::cli {

enum class OutFormat { None, Csv, Json, Npy };

// numpy's descr of a result type, or null for types .npy cannot hold.
const char* npy_descr(ValType t);

// --output rows of a batch's result, written in order: the header, rows
// [first, end) as often as asked (each range after the one before), then
// the end (for .npy with --allow-traps, `trap_file` gets the trap codes).
// Rows are formatted on every core.
// What the writers read of a batch's result: its columns' buffers, which
// stay where they are when the result is moved (the batch engine's own
// object is moved out when it returns).
struct ResultRows {
  std::vector<ValType> types;
  std::vector<std::string> names;  // empty: result0, result1, ...
  uint64_t n = 0;
  const uint64_t* results = nullptr;  // n x types.size()
  const uint8_t* traps = nullptr;
  const uint32_t *trap_func = nullptr, *trap_pc = nullptr;
  std::vector<const uint8_t*> mem_out;
  static ResultRows of(const batch::BatchResult& r);
};

class ResultWriter {
 public:
  ResultWriter(ResultRows r, const Module& m, OutFormat fmt, AtomicFile& out)
      : r_(std::move(r)), m_(m), fmt_(fmt), out_(out) {}
  [[nodiscard]] Status begin();
  [[nodiscard]] Status rows(uint64_t first, uint64_t end);
  [[nodiscard]] Status finish(AtomicFile* trap_file);

 private:
  const ResultRows r_;
  const Module& m_;
  OutFormat fmt_;
  AtomicFile& out_;
};

// Writes every instance's results (or its trap) to `out`; for .npy with
// --allow-traps, `trap_file` gets the trap codes.
Status write_results(const batch::BatchResult& r, const Module& m, OutFormat fmt, AtomicFile& out,
                     AtomicFile* trap_file);

// Writes --output rows and --mem-out records while a batch runs, on a
// thread of its own, as the batch engine reports them final
// (BatchSpec::on_ready): a batch of many waves has its outputs written
// while later waves run, and what is left when it ends is the last part.
// Files are only written, never committed, here.
class OutputStream {
 public:
  // `out` is null without --output (fmt is then unused); mem_out[k] gets
  // mem_len[k] bytes per instance.
  OutputStream(const Module& m, OutFormat fmt, AtomicFile* out, std::vector<AtomicFile*> mem_out,
               std::vector<uint64_t> mem_len);
  ~OutputStream();
  // BatchSpec::on_ready.
  void ready(const batch::BatchResult& r, uint64_t upto);
  // After the batch: the rest of the rows, the end of the files (the trap
  // codes into `trap_file`), and the first error of any write.
  [[nodiscard]] Status finish(const batch::BatchResult& r, AtomicFile* trap_file);

 private:
  void write_loop();
  // Ends the writing thread (what it had not written stays for finish()).
  void stop();
  Status write_upto(const ResultRows& r, uint64_t upto);
  // The --output writer, its header written at the first use.
  Result<ResultWriter*> rows_writer(const ResultRows& r);

  const Module& m_;
  const OutFormat fmt_;
  AtomicFile* const out_;
  const std::vector<AtomicFile*> mem_out_;
  const std::vector<uint64_t> mem_len_;
  std::unique_ptr<ResultWriter> rows_;
  uint64_t written_ = 0;  // the writing thread's, then finish()'s
  Status status_ = Status::Ok();
  std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<ResultRows> r_;  // taken at the first ready()
  uint64_t ready_ = 0;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace ww::cli
