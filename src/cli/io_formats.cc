#include "cli/io_formats.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "cli/interrupt.h"
#include "cli/value_format.h"
#include "common/file_read.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

}  // namespace

Result<Column<uint8_t>> read_all(const std::string& path) { return read_whole_file(path); }

namespace {

// Reads the value of `key` in numpy's header dict literal.
std::string_view dict_value(std::string_view h, std::string_view key) {
  for (const char* q : {"'", "\""}) {
    std::string k = std::string(q) + std::string(key) + q;
    size_t p = h.find(k);
    if (p == std::string_view::npos) continue;
    p = h.find(':', p + k.size());
    if (p == std::string_view::npos) return {};
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    size_t e = p;
    if (p < h.size() && h[p] == '(') {
      e = h.find(')', p);
      return e == std::string_view::npos ? std::string_view{} : h.substr(p, e - p + 1);
    }
    if (p < h.size() && (h[p] == '\'' || h[p] == '"')) {
      e = h.find(h[p], p + 1);
      return e == std::string_view::npos ? std::string_view{} : h.substr(p, e - p + 1);
    }
    while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
    return h.substr(p, e - p);
  }
  return {};
}

}  // namespace

std::string file_extension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot + 1);
  for (char& c : e) c = char(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

Result<NpyArray> parse_npy(std::span<const uint8_t> b, const std::string& name) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0) return err(name + " is not a .npy file (bad magic)");
  uint8_t major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = b[8] | (size_t(b[9]) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return err(name + ": truncated .npy header");
    hlen = b[8] | (size_t(b[9]) << 8) | (size_t(b[10]) << 16) | (size_t(b[11]) << 24);
    hstart = 12;
  } else {
    return err(name + ": unsupported .npy version " + std::to_string(major));
  }
  if (hstart + hlen > b.size()) return err(name + ": truncated .npy header");
  std::string_view h(reinterpret_cast<const char*>(b.data()) + hstart, hlen);
  NpyArray a;
  std::string_view descr = dict_value(h, "descr");
  if (descr.size() < 4 || (descr[0] != '\'' && descr[0] != '"'))
    return err(name + ": unsupported .npy dtype " + std::string(descr) + " (need a plain numeric dtype)");
  descr = descr.substr(1, descr.size() - 2);
  char order = descr[0];
  a.kind = descr[1];
  std::string size_txt(descr.substr(2));
  a.item_size = uint32_t(std::atoi(size_txt.c_str()));
  a.dtype = std::string(descr.substr(1));
  bool size_ok = a.item_size == 1 || a.item_size == 2 || a.item_size == 4 || a.item_size == 8;
  if ((a.kind != 'i' && a.kind != 'u' && a.kind != 'f') || !size_ok || (a.kind == 'f' && a.item_size < 4) ||
      size_txt != std::to_string(a.item_size))
    return err(name + ": unsupported .npy dtype '" + std::string(descr) +
               "' (supported: i1 i2 i4 i8 u1 u2 u4 u8 f4 f8)");
  if (order == '>' || (order != '<' && order != '|' && order != '='))
    return err(name + ": big-endian .npy data is not supported ('" + std::string(descr) + "')");
  if (order == '|' && a.item_size != 1) return err(name + ": bad .npy dtype '" + std::string(descr) + "'");
  std::string_view fo = dict_value(h, "fortran_order");
  if (fo != "False" && fo != "True") return err(name + ": bad .npy header (fortran_order)");
  a.fortran_order = fo == "True";
  std::string_view shape = dict_value(h, "shape");
  if (shape.size() < 2 || shape.front() != '(') return err(name + ": bad .npy header (shape)");
  std::string_view inner = shape.substr(1, shape.size() - 2);
  while (!inner.empty()) {
    while (!inner.empty() && (inner[0] == ' ' || inner[0] == ',')) inner.remove_prefix(1);
    if (inner.empty()) break;
    size_t e = inner.find(',');
    std::string_view tok = inner.substr(0, e);
    while (!tok.empty() && tok.back() == ' ') tok.remove_suffix(1);
    if (!tok.empty() && tok.back() == 'L') tok.remove_suffix(1);  // Python 2 longs
    auto n = parse_u64(tok);
    if (!n.ok()) return err(name + ": bad .npy header (shape " + std::string(shape) + ")");
    a.shape.push_back(*n);
    inner = e == std::string_view::npos ? std::string_view{} : inner.substr(e);
  }
  if (a.shape.empty() || a.shape.size() > 2)
    return err(name + ": .npy array has " + std::to_string(a.shape.size()) + " dimensions (need 1 or 2)");
  uint64_t count = a.rows() * a.cols();
  if (a.cols() != 0 && count / a.cols() != a.rows()) return err(name + ": .npy shape overflows");
  size_t data_start = hstart + hlen;
  uint64_t need = count * a.item_size;
  if (b.size() - data_start < need)
    return err(name + ": truncated .npy data (" + std::to_string(b.size() - data_start) + " bytes, shape needs " +
               std::to_string(need) + ")");
  a.data.assign(b.begin() + data_start, b.begin() + data_start + need);
  return a;
}

std::string npy_header(const std::string& descr, bool fortran_order, const std::vector<uint64_t>& shape) {
  std::string dict = "{'descr': " + descr + ", 'fortran_order': " + (fortran_order ? "True" : "False") + ", 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  dict += "), }";
  // numpy pads the header with spaces and a newline to a multiple of 64.
  size_t pre = 10;
  bool v2 = dict.size() + 1 + pre > 65535;
  if (v2) pre = 12;
  size_t total = pre + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(v2 ? 2 : 1);
  out += char(0);
  size_t hl = dict.size();
  out += char(hl & 0xFF);
  out += char((hl >> 8) & 0xFF);
  if (v2) {
    out += char((hl >> 16) & 0xFF);
    out += char((hl >> 24) & 0xFF);
  }
  return out + dict;
}

Result<std::vector<std::vector<std::string>>> parse_csv(std::string_view t, const std::string& name) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, in_quotes = false, any = false;
  size_t line = 1;
  auto end_row = [&] {
    row.push_back(std::move(cell));
    cell.clear();
    bool blank = row.size() == 1 && row[0].empty() && !quoted;
    if (!blank) rows.push_back(std::move(row));
    row.clear();
    quoted = any = false;
  };
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < t.size() && t[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"' && cell.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
      quoted = false;
    } else if (c == '\n') {
      end_row();
      ++line;
    } else if (c == '\r' && i + 1 < t.size() && t[i + 1] == '\n') {
      // dropped: CRLF files
    } else {
      cell += c;
      any = true;
    }
  }
  (void)any;
  if (in_quotes) return err(name + ": unterminated quoted cell at line " + std::to_string(line));
  if (!cell.empty() || !row.empty() || quoted) end_row();
  return rows;
}

std::string csv_escape(std::string_view cell) {
  if (cell.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(cell);
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

bool looks_numeric(const std::string& cell) {
  return parse_value(cell, ValType::I64).ok() || parse_value(cell, ValType::F64).ok();
}

// An integer read from a file, checked against the parameter type.
Result<Value> int_to_param(bool is_signed, uint64_t raw, ValType type, const std::string& where) {
  int64_t s = int64_t(raw);
  switch (type) {
    case ValType::I32:
      if (is_signed ? (s < INT32_MIN || s > int64_t(UINT32_MAX)) : raw > UINT32_MAX)
        return err(where + ": value " + (is_signed ? std::to_string(s) : std::to_string(raw)) + " does not fit i32");
      return Value{ValType::I32, raw & 0xFFFFFFFFu};
    case ValType::I64: return Value::i64(int64_t(raw));
    case ValType::F32: {
      float f = is_signed ? float(s) : float(raw);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return Value::f32_bits(b);
    }
    case ValType::F64: {
      double d = is_signed ? double(s) : double(raw);
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return Value::f64_bits(b);
    }
    default: return err(where + ": cannot feed a " + valtype_name(type) + " parameter from a numeric file");
  }
}

}  // namespace

Result<std::vector<uint64_t>> load_column(const std::string& path, uint32_t col, ValType type, uint64_t rows) {
  WW_ASSIGN_OR_RETURN(auto bytes, read_all(path));
  if (bytes.empty()) return err(path + " is empty");
  std::string ext = file_extension(path);
  std::vector<uint64_t> out;
  out.reserve(rows);
  auto too_short = [&](uint64_t have) {
    return err(path + " has " + std::to_string(have) + " rows, but " + std::to_string(rows) +
               " instances need one each");
  };
  if (ext == "npy") {
    WW_ASSIGN_OR_RETURN(NpyArray a, parse_npy(bytes, path));
    if (col >= a.cols())
      return err(path + " has " + std::to_string(a.cols()) + " column(s); column " + std::to_string(col) +
                 " does not exist");
    if (a.rows() < rows) return too_short(a.rows());
    if (a.kind == 'f' && (type == ValType::I32 || type == ValType::I64))
      return err(path + ": float dtype " + a.dtype + " cannot feed an " + valtype_name(type) + " parameter");
    for (uint64_t r = 0; r < rows; ++r) {
      uint64_t idx = a.fortran_order ? col * a.rows() + r : r * a.cols() + col;
      const uint8_t* p = a.data.data() + idx * a.item_size;
      uint64_t raw = 0;
      std::memcpy(&raw, p, a.item_size);  // little-endian host
      if (a.kind == 'f') {
        if (a.item_size == 4) {
          float f;
          std::memcpy(&f, p, 4);
          if (type == ValType::F32) {
            out.push_back(uint32_t(raw));
          } else if (type == ValType::F64) {
            double d = f;
            uint64_t b;
            std::memcpy(&b, &d, 8);
            out.push_back(b);
          } else {
            return err(path + ": cannot feed a " + std::string(valtype_name(type)) + " parameter");
          }
        } else {
          double d;
          std::memcpy(&d, p, 8);
          if (type == ValType::F64) {
            out.push_back(raw);
          } else if (type == ValType::F32) {
            float f = float(d);
            uint32_t b;
            std::memcpy(&b, &f, 4);
            out.push_back(b);
          } else {
            return err(path + ": cannot feed a " + std::string(valtype_name(type)) + " parameter");
          }
        }
        continue;
      }
      bool is_signed = a.kind == 'i';
      if (is_signed && a.item_size < 8) {
        // Sign-extend narrower signed items.
        unsigned shift = 64 - a.item_size * 8;
        raw = uint64_t(int64_t(raw << shift) >> shift);
      }
      WW_ASSIGN_OR_RETURN(Value v, int_to_param(is_signed, raw, type, path + " row " + std::to_string(r)));
      out.push_back(v.bits);
    }
    return out;
  }
  if (ext == "csv") {
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    WW_ASSIGN_OR_RETURN(auto table, parse_csv(text, path));
    size_t first = 0;
    if (!table.empty()) {
      bool header = true;
      for (auto& c : table[0]) header &= !looks_numeric(trim(c));
      if (header) first = 1;
    }
    uint64_t have = table.size() - first;
    if (have < rows) return too_short(have);
    for (uint64_t r = 0; r < rows; ++r) {
      const auto& row = table[first + r];
      size_t line = first + r + 1;
      if (col >= row.size())
        return err(path + " line " + std::to_string(line) + " has " + std::to_string(row.size()) + " cell(s); column " +
                   std::to_string(col) + " does not exist");
      auto v = parse_value(trim(row[col]), type);
      if (!v.ok()) return err(path + " line " + std::to_string(line) + ": " + v.error().message);
      out.push_back(v->bits);
    }
    return out;
  }
  // Raw little-endian: one element per instance, its type the parameter's.
  if (col != 0) return err(path + " is a raw array (one column); column " + std::to_string(col) + " does not exist");
  size_t w = (type == ValType::I32 || type == ValType::F32)   ? 4
             : (type == ValType::I64 || type == ValType::F64) ? 8
                                                              : 0;
  if (w == 0) return err(path + ": cannot feed a " + std::string(valtype_name(type)) + " parameter from a raw file");
  if (bytes.size() % w != 0)
    return err(path + " is " + std::to_string(bytes.size()) + " bytes, not a whole number of " + valtype_name(type) +
               " elements");
  if (bytes.size() / w < rows) return too_short(bytes.size() / w);
  for (uint64_t r = 0; r < rows; ++r) {
    uint64_t raw = 0;
    std::memcpy(&raw, bytes.data() + r * w, w);
    out.push_back(raw);
  }
  return out;
}

AtomicFile::~AtomicFile() { discard(); }

Status AtomicFile::open(const std::string& path) {
  discard();
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return err("cannot write " + path + ": it is a directory");
  tmp_ = path + ".tmp-XXXXXX";
  int fd = mkstemp(tmp_.data());
  if (fd < 0) {
    int e = errno;
    tmp_.clear();
    return err("cannot write " + path + ": " + std::strerror(e));
  }
  temp_slot_ = register_temp_file(tmp_);
  // mkstemp makes 0600 files; outputs should get the usual umask-based mode.
  mode_t um = umask(0);
  umask(um);
  fchmod(fd, 0666 & ~um);
  f_ = fdopen(fd, "wb");
  if (!f_) {
    ::close(fd);
    unlink(tmp_.c_str());
    tmp_.clear();
    unregister_temp_file(temp_slot_);
    temp_slot_ = -1;
    return err("cannot write " + path);
  }
  path_ = path;
  return Status::Ok();
}

Status AtomicFile::write(const void* data, size_t n) {
  if (n && std::fwrite(data, 1, n, f_) != n) return err("cannot write " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

Status AtomicFile::commit() {
  if (!f_) return err("internal: commit of a closed file");
  bool bad = std::fflush(f_) != 0 || std::ferror(f_);
  int e = errno;
  bad |= std::fclose(f_) != 0;
  f_ = nullptr;
  if (bad) {
    discard();
    return err("cannot write " + path_ + ": " + std::strerror(e));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    e = errno;
    discard();
    return err("cannot rename onto " + path_ + ": " + std::strerror(e));
  }
  tmp_.clear();
  unregister_temp_file(temp_slot_);
  temp_slot_ = -1;
  return Status::Ok();
}

void AtomicFile::discard() {
  if (f_) {
    std::fclose(f_);
    f_ = nullptr;
  }
  if (!tmp_.empty()) {
    unlink(tmp_.c_str());
    tmp_.clear();
  }
  unregister_temp_file(temp_slot_);
  temp_slot_ = -1;
}

}  // namespace ww::cli
