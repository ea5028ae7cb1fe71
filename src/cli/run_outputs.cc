// --output files: one row per instance as CSV, JSON or NumPy, from a
// batch's results.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/run_outputs.h"
#include "cli/value_format.h"

namespace ww::cli {

const char* npy_descr(ValType t) {
  switch (t) {
    case ValType::I32: return "'<i4'";
    case ValType::I64: return "'<i8'";
    case ValType::F32: return "'<f4'";
    case ValType::F64: return "'<f8'";
    default: return nullptr;
  }
}

Status write_results(const batch::BatchResult& r, const Module& m, OutFormat fmt, AtomicFile& out,
                     AtomicFile* trap_file) {
  const uint64_t n = r.traps.size();
  const auto& rt = r.type.results;
  const size_t nr = rt.size();
  auto value = [&](uint64_t i, size_t k) { return Value{rt[k], r.results[i * nr + k]}; };
  if (fmt == OutFormat::Csv) {
    std::string line = "instance";
    for (size_t k = 0; k < nr; ++k) line += ",result" + std::to_string(k);
    line += ",trap\n";
    WW_TRY(out.write(line));
    for (uint64_t i = 0; i < n; ++i) {
      line = std::to_string(i);
      TrapCode t = TrapCode(r.traps[i]);
      for (size_t k = 0; k < nr; ++k) line += "," + (t == TrapCode::None ? csv_escape(format_value(value(i, k))) : "");
      line += ",";
      if (t != TrapCode::None) line += csv_escape(trap_message(t));
      line += "\n";
      WW_TRY(out.write(line));
    }
  } else if (fmt == OutFormat::Json) {
    WW_TRY(out.write("[\n"));
    for (uint64_t i = 0; i < n; ++i) {
      nlohmann::ordered_json o;
      o["instance"] = i;
      TrapCode t = TrapCode(r.traps[i]);
      auto arr = nlohmann::json::array();
      if (t == TrapCode::None) {
        // Integers as JSON numbers; floats and refs as exact text (JSON has
        // no NaN, inf or -0 that survives every reader).
        for (size_t k = 0; k < nr; ++k) {
          Value v = value(i, k);
          if (v.type == ValType::I32) arr.push_back(int32_t(uint32_t(v.bits)));
          else if (v.type == ValType::I64) arr.push_back(int64_t(v.bits));
          else arr.push_back(format_value(v));
        }
        o["results"] = std::move(arr);
        o["trap"] = nullptr;
      } else {
        o["results"] = nullptr;
        o["trap"] = trap_message(t);
        // Traps raised by the instance's code say where.
        if (t != TrapCode::Timeout && r.trap_pc[i] != gpu::kNoTrapPc) {
          o["trap_function"] = m.func_display_name(r.trap_func[i]);
          o["trap_offset"] = r.trap_pc[i];
        }
      }
      WW_TRY(out.write("  " + o.dump() + (i + 1 < n ? ",\n" : "\n")));
    }
    WW_TRY(out.write("]\n"));
  } else if (fmt == OutFormat::Npy) {
    bool same = std::all_of(rt.begin(), rt.end(), [&](ValType t) { return t == rt[0]; });
    std::string descr;
    std::vector<uint64_t> shape{n};
    if (same) {
      descr = npy_descr(rt[0]);
      if (nr > 1) shape.push_back(nr);
    } else {
      descr = "[";
      for (size_t k = 0; k < nr; ++k)
        descr += "('result" + std::to_string(k) + "', " + npy_descr(rt[k]) + ")" + (k + 1 < nr ? ", " : "");
      descr += "]";
    }
    WW_TRY(out.write(npy_header(descr, false, shape)));
    std::vector<uint8_t> row;
    for (uint64_t i = 0; i < n; ++i) {
      row.clear();
      bool trapped = r.traps[i] != 0;
      for (size_t k = 0; k < nr; ++k) {
        uint64_t b = trapped ? 0 : r.results[i * nr + k];
        size_t w = (rt[k] == ValType::I32 || rt[k] == ValType::F32) ? 4 : 8;
        const uint8_t* p = reinterpret_cast<const uint8_t*>(&b);
        row.insert(row.end(), p, p + w);
      }
      WW_TRY(out.write(row.data(), row.size()));
    }
    if (trap_file) {
      WW_TRY(trap_file->write(npy_header("'|u1'", false, {n})));
      WW_TRY(trap_file->write(r.traps.data(), r.traps.size()));
    }
  }
  return Status::Ok();
}

}  // namespace ww::cli
