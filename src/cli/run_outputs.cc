// --output files: one row per instance as CSV, JSON or NumPy, from a
// batch's results.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <thread>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/run_outputs.h"
#include "cli/value_format.h"
#include "common/parallel.h"

namespace ww::cli {

const char* npy_descr(ValType t) {
  switch (t) {
    case ValType::I32: return "'<i4'";
    case ValType::I64: return "'<i8'";
    case ValType::F32: return "'<f4'";
    case ValType::F64: return "'<f8'";
    case ValType::V128: return "'|V16'";  // its 16 bytes as in memory
    default: return nullptr;
  }
}

namespace {

// Rows are formatted on every core, kRowsPerBlock to a job, and written in
// order; at most one block per core is held at a time. One thread would
// take longer to build 10M JSON rows (a JSON object per row) than the
// batch takes to run.
constexpr uint64_t kRowsPerBlock = 1 << 16;

template <class Format>  // format(first, end, std::string& into)
Status write_in_blocks(uint64_t from, uint64_t n, const ByteSink& out, Format&& format) {
  const size_t cores = usable_cores();
  std::vector<std::string> blocks(cores);
  for (uint64_t base = from; base < n; base += kRowsPerBlock * cores) {
    const size_t jobs = size_t(std::min<uint64_t>(cores, (n - base + kRowsPerBlock - 1) / kRowsPerBlock));
    parallel_for(jobs, [&](size_t j) {
      const uint64_t first = base + j * kRowsPerBlock;
      blocks[j].clear();
      format(first, std::min(n, first + kRowsPerBlock), blocks[j]);
    });
    for (size_t j = 0; j < jobs; ++j) WW_TRY(out(blocks[j]));
  }
  return Status::Ok();
}

template <class T>
void append_int(std::string& s, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

// A JSON string literal: the escapes nlohmann::json's dump() makes, so
// rows read as that library writes them; other bytes pass through.
void append_json_string(std::string& s, std::string_view v) {
  s += '"';
  for (char c : v) {
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\b': s += "\\b"; break;
      case '\f': s += "\\f"; break;
      case '\n': s += "\\n"; break;
      case '\r': s += "\\r"; break;
      case '\t': s += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
          s += u;
        } else {
          s += c;
        }
    }
  }
  s += '"';
}

// A result as CSV or JSON shows it: integers in decimal, the rest as
// format_value's exact text.
void append_value(std::string& s, const Value& v, bool json) {
  if (v.type == ValType::I32) return append_int(s, int32_t(uint32_t(v.bits)));
  if (v.type == ValType::I64) return append_int(s, int64_t(v.bits));
  if (json) append_json_string(s, format_value(v));
  else s += csv_escape(format_value(v));
}

std::string result_name(const ResultColumns& r, size_t k) {
  return k < r.names.size() ? r.names[k] : "result" + std::to_string(k);
}

}  // namespace

Status ResultWriter::begin() {
  const auto& rt = r_.types;
  const size_t nr = rt.size();
  if (fmt_ == OutFormat::Csv) {
    std::string head = "instance";
    for (size_t k = 0; k < nr; ++k) head += "," + result_name(r_, k);
    return out_(head + ",trap\n");
  }
  if (fmt_ == OutFormat::Json) return out_("[\n");
  bool same = std::all_of(rt.begin(), rt.end(), [&](ValType t) { return t == rt[0]; });
  std::string descr;
  std::vector<uint64_t> shape{total()};
  if (same) {
    descr = npy_descr(rt[0]);
    if (nr > 1) shape.push_back(nr);
  } else {
    descr = "[";
    for (size_t k = 0; k < nr; ++k)
      descr += "('" + result_name(r_, k) + "', " + npy_descr(rt[k]) + ")" + (k + 1 < nr ? ", " : "");
    descr += "]";
  }
  return out_(npy_header(descr, false, shape));
}

Status ResultWriter::rows(uint64_t first, uint64_t end) {
  const ResultColumns& r = r_;
  const uint64_t n = total(), base = numbers_.index_base;
  const auto& rt = r.types;
  const size_t nr = rt.size();
  auto value = [&](uint64_t i, size_t k) {
    return Value{rt[k], r.bits(i, k), r.results_hi ? r.results_hi[i * nr + k] : 0};
  };
  if (fmt_ == OutFormat::Csv) {
    return write_in_blocks(first, end, out_, [&](uint64_t from, uint64_t to, std::string& s) {
      for (uint64_t i = from; i < to; ++i) {
        append_int(s, base + i);
        const uint8_t t = r.traps[i];
        for (size_t k = 0; k < nr; ++k) {
          s += ',';
          if (t == 0) append_value(s, value(i, k), false);
        }
        s += ',';
        if (t != 0) s += csv_escape(m_.trap_message(t, r.trap_function[i]));
        s += '\n';
      }
    });
  }
  if (fmt_ == OutFormat::Json) {
    return write_in_blocks(first, end, out_, [&](uint64_t from, uint64_t to, std::string& s) {
      for (uint64_t i = from; i < to; ++i) {
        s += "  {\"instance\":";
        append_int(s, base + i);
        const uint8_t t = r.traps[i];
        if (t == 0) {
          // Integers as JSON numbers; floats and refs as exact text (JSON
          // has no NaN, inf or -0 that survives every reader).
          s += ",\"results\":[";
          for (size_t k = 0; k < nr; ++k) {
            if (k) s += ',';
            append_value(s, value(i, k), true);
          }
          s += "],\"trap\":null";
        } else {
          s += ",\"results\":null,\"trap\":";
          append_json_string(s, m_.trap_message(t, r.trap_function[i]));
          // Traps raised by the instance's code say where.
          if (t != wasmwarp::kTrapTimeout && r.trap_offset[i] != wasmwarp::kNoTrapOffset) {
            s += ",\"trap_function\":";
            append_json_string(s, m_.function_name(r.trap_function[i]));
            s += ",\"trap_offset\":";
            append_int(s, r.trap_offset[i]);
          }
        }
        s += base + i + 1 < n ? "},\n" : "}\n";
      }
    });
  }
  return write_in_blocks(first, end, out_, [&](uint64_t from, uint64_t to, std::string& s) {
    for (uint64_t i = from; i < to; ++i) {
      const bool trapped = r.traps[i] != 0;
      for (size_t k = 0; k < nr; ++k) {
        const uint64_t b = trapped ? 0 : r.bits(i, k);
        const size_t w = (rt[k] == ValType::I32 || rt[k] == ValType::F32) ? 4 : 8;
        s.append(reinterpret_cast<const char*>(&b), w);  // little-endian hosts
        if (rt[k] == ValType::V128) {
          const uint64_t hi = trapped || !r.results_hi ? 0 : r.results_hi[i * nr + k];
          s.append(reinterpret_cast<const char*>(&hi), 8);
        }
      }
    }
  });
}

ByteSink sink_to(AtomicFile& f) {
  return [&f](std::string_view b) { return f.write(b); };
}

Status ResultWriter::end() { return fmt_ == OutFormat::Json ? out_("]\n") : Status::Ok(); }

Status ResultWriter::finish(AtomicFile* trap_file) {
  WW_TRY(end());
  if (fmt_ == OutFormat::Npy && trap_file) {
    WW_TRY(trap_file->write(npy_header("'|u1'", false, {r_.instances})));
    WW_TRY(trap_file->write(r_.traps, r_.instances));
  }
  return Status::Ok();
}

Status write_results(const wasmwarp::CallResult& r, const wasmwarp::Module& m, OutFormat fmt, AtomicFile& out,
                     AtomicFile* trap_file) {
  ResultWriter w(r.columns(), m, fmt, out);
  WW_TRY(w.begin());
  WW_TRY(w.rows(0, r.instances()));
  return w.finish(trap_file);
}

OutputStream::OutputStream(const wasmwarp::Module& m, OutFormat fmt, AtomicFile* out, std::vector<AtomicFile*> mem_out,
                           std::vector<uint64_t> mem_len)
    : m_(m), fmt_(fmt), out_(out), mem_out_(std::move(mem_out)), mem_len_(std::move(mem_len)), thread_([this] {
        write_loop();
      }) {}

OutputStream::~OutputStream() { stop(); }

void OutputStream::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OutputStream::ready(const ResultColumns& r, uint64_t upto) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!r_) r_ = std::make_unique<ResultColumns>(r);
    ready_ = std::max(ready_, upto);
  }
  cv_.notify_all();
}

Result<ResultWriter*> OutputStream::rows_writer(const ResultColumns& r) {
  if (!rows_) {
    rows_ = std::make_unique<ResultWriter>(r, m_, fmt_, *out_);
    WW_TRY(rows_->begin());
  }
  return rows_.get();
}

Status OutputStream::write_upto(const ResultColumns& r, uint64_t upto) {
  if (upto <= written_) return Status::Ok();
  if (out_) {
    WW_ASSIGN_OR_RETURN(ResultWriter * w, rows_writer(r));
    WW_TRY(w->rows(written_, upto));
  }
  for (size_t k = 0; k < mem_out_.size(); ++k)
    WW_TRY(mem_out_[k]->write(r.memory_out[k] + written_ * mem_len_[k], (upto - written_) * mem_len_[k]));
  written_ = upto;
  return Status::Ok();
}

void OutputStream::write_loop() {
  // Rows are written with what the batch leaves of the host: a CPU batch
  // on every core would lose a visible part of its rate to this thread
  // (hash-wasm's sha256, bench/hashwasm/run-cpu.sh); a GPU batch leaves the
  // cores idle anyway. What is left after the batch, finish() writes at
  // the caller's priority.
  (void)setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10);
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return done_ || ready_ > written_; });
    if (done_) return;  // finish() writes the rest
    const ResultColumns* r = r_.get();
    const uint64_t upto = ready_;
    lk.unlock();
    // After a failed write the rest is not written; finish() reports it.
    if (status_.ok()) status_ = write_upto(*r, upto);
    else written_ = upto;
    lk.lock();
  }
}

Status OutputStream::finish(const wasmwarp::CallResult& r, AtomicFile* trap_file) {
  stop();
  WW_TRY(status_);
  const ResultColumns rows = r.columns();
  WW_TRY(write_upto(rows, rows.instances));
  if (!out_) return Status::Ok();
  WW_ASSIGN_OR_RETURN(ResultWriter * w, rows_writer(rows));
  return w->finish(trap_file);
}

}  // namespace ww::cli
