// Command semantics follow the spec interpreter's script runner (run.ml):
// an action runs on the last module or a named one, a module that fails to
// load leaves no current module, and failure texts match as prefixes.
#include "runner.h"

#include "decode/decoder.h"
#include "validate/validator.h"
#include "value_text.h"

#include <bit>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ww::spectest {
namespace {

using json = nlohmann::json;

// A script that does not say what it must (a missing field, a value that is
// not a number): it fails the one command, never the process.
struct ScriptError {
  std::string message;
  bool malformed = true;  // false: well formed, but names a module that cannot run
};
[[noreturn]] void bad(std::string m) { throw ScriptError{std::move(m)}; }
[[noreturn]] void unrunnable(std::string m) { throw ScriptError{std::move(m), false}; }

const json& field(const json& obj, const char* name) {
  if (!obj.is_object()) bad(std::string("expected an object holding \"") + name + "\"");
  auto it = obj.find(name);
  if (it == obj.end()) bad(std::string("missing \"") + name + "\"");
  return *it;
}

std::string str_field(const json& obj, const char* name) {
  const json& v = field(obj, name);
  if (!v.is_string()) bad(std::string("\"") + name + "\" is not a string");
  return v.get<std::string>();
}

std::optional<std::string> opt_str(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) bad(std::string("\"") + name + "\" is not a string");
  return it->get<std::string>();
}

const json& array_field(const json& obj, const char* name) {
  const json& v = field(obj, name);
  if (!v.is_array()) bad(std::string("\"") + name + "\" is not an array");
  return v;
}

uint64_t parse_bits(const std::string& s, uint64_t max) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > max) bad("bad value \"" + s + "\"");
  return v;
}

ValType parse_type(const std::string& t) {
  if (t == "i32") return ValType::I32;
  if (t == "i64") return ValType::I64;
  if (t == "f32") return ValType::F32;
  if (t == "f64") return ValType::F64;
  if (t == "funcref") return ValType::FuncRef;
  if (t == "externref") return ValType::ExternRef;
  if (t == "v128") return ValType::V128;
  bad("unsupported value type \"" + t + "\"");
}

uint64_t max_bits(ValType t) { return t == ValType::I32 || t == ValType::F32 ? 0xFFFFFFFFull : ~0ull; }

// A v128's lane shape: "i8" .. "f64", as bits per lane.
uint32_t lane_bits(const json& v) {
  const std::string t = str_field(v, "lane_type");
  if (t == "i8") return 8;
  if (t == "i16") return 16;
  if (t == "i32" || t == "f32") return 32;
  if (t == "i64" || t == "f64") return 64;
  bad("unknown lane_type \"" + t + "\"");
}

// Lane `k` (of `bits` bits) of a v128 as lo/hi words, set to `x`.
void put_lane(Value& v, uint32_t bits, size_t k, uint64_t x) {
  const size_t per_word = 64 / bits, shift = (k % per_word) * bits;
  uint64_t& w = k < per_word ? v.bits : v.hi;
  const uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1) << shift;
  w = (w & ~mask) | ((x << shift) & mask);
}

uint64_t get_lane(const Value& v, uint32_t bits, size_t k) {
  const size_t per_word = 64 / bits, shift = (k % per_word) * bits;
  const uint64_t w = k < per_word ? v.bits : v.hi;
  return bits == 64 ? w : (w >> shift) & ((1ull << bits) - 1);
}

Value parse_arg(const json& v) {
  Value out;
  out.type = parse_type(str_field(v, "type"));
  if (out.type == ValType::V128) {
    const uint32_t bits = lane_bits(v);
    const json& lanes = array_field(v, "value");
    if (lanes.size() != 128 / bits) bad("a v128 of " + std::to_string(lanes.size()) + " lanes");
    for (size_t k = 0; k < lanes.size(); ++k) {
      if (!lanes[k].is_string()) bad("a v128 lane is not a string");
      put_lane(out, bits, k, parse_bits(lanes[k].get<std::string>(), bits == 64 ? ~0ull : (1ull << bits) - 1));
    }
    return out;
  }
  std::string s = str_field(v, "value");
  if (is_ref(out.type)) {
    if (s == "null") return Value::null(out.type);
    // A script can only name host references; it has no way to name a
    // function of ours.
    if (out.type == ValType::FuncRef) bad("funcref argument \"" + s + "\" is not null");
    out.bits = parse_bits(s, ~0ull - 1) + 1;
    return out;
  }
  out.bits = parse_bits(s, max_bits(out.type));
  return out;
}

struct Expect {
  enum class Match { Bits, CanonicalNan, ArithmeticNan, NonNullRef };
  ValType type = ValType::I32;
  Match match = Match::Bits;
  uint64_t bits = 0;
  // A v128: one expectation per lane of lane_bits bits (f32/f64 lanes may
  // expect NaN classes).
  uint32_t lane_bits = 0;
  std::vector<Expect> lanes;
};

Expect parse_scalar_expect(ValType type, const std::string& s);

Expect parse_expect(const json& v) {
  Expect e;
  e.type = parse_type(str_field(v, "type"));
  if (e.type == ValType::V128) {
    e.lane_bits = lane_bits(v);
    const std::string lt = str_field(v, "lane_type");
    const ValType lane_type = lt == "f32"   ? ValType::F32
                              : lt == "f64" ? ValType::F64
                              : lt == "i64" ? ValType::I64
                                            : ValType::I32;
    const json& lanes = array_field(v, "value");
    if (lanes.size() != 128 / e.lane_bits) bad("a v128 of " + std::to_string(lanes.size()) + " lanes");
    for (const json& l : lanes) {
      if (!l.is_string()) bad("a v128 lane is not a string");
      Expect le = parse_scalar_expect(lane_type, l.get<std::string>());
      if (e.lane_bits < 32) le.bits &= (1ull << e.lane_bits) - 1;
      e.lanes.push_back(le);
    }
    return e;
  }
  return parse_scalar_expect(e.type, str_field(v, "value"));
}

Expect parse_scalar_expect(ValType type, const std::string& s) {
  Expect e;
  e.type = type;
  if (e.type == ValType::F32 || e.type == ValType::F64) {
    if (s == "nan:canonical") {
      e.match = Expect::Match::CanonicalNan;
      return e;
    }
    if (s == "nan:arithmetic") {
      e.match = Expect::Match::ArithmeticNan;
      return e;
    }
  }
  if (is_ref(e.type)) {
    if (s == "null") return e;
    if (e.type == ValType::FuncRef) {
      // The script cannot know our function addresses; any non-null is right.
      e.match = Expect::Match::NonNullRef;
      return e;
    }
    e.bits = parse_bits(s, ~0ull - 1) + 1;
    return e;
  }
  e.bits = parse_bits(s, max_bits(e.type));
  return e;
}

bool matches(const Expect& e, const Value& v) {
  if (v.type != e.type) return false;
  if (e.type == ValType::V128) {
    for (size_t k = 0; k < e.lanes.size(); ++k)
      if (!matches(e.lanes[k], Value{e.lanes[k].type, get_lane(v, e.lane_bits, k)})) return false;
    return true;
  }
  const bool f32 = e.type == ValType::F32;
  // Canonical NaN: only the top payload bit set; arithmetic: at least it.
  const uint64_t abs_mask = f32 ? 0x7FFFFFFFull : 0x7FFFFFFFFFFFFFFFull;
  const uint64_t canon = f32 ? 0x7FC00000ull : 0x7FF8000000000000ull;
  switch (e.match) {
    case Expect::Match::Bits: return v.bits == e.bits;
    case Expect::Match::CanonicalNan: return (v.bits & abs_mask) == canon;
    case Expect::Match::ArithmeticNan: return (v.bits & canon) == canon;
    case Expect::Match::NonNullRef: return v.bits != 0;
  }
  return false;
}

std::string show(const Expect& e) {
  if (e.type == ValType::V128) {
    std::string s = "v128:[";
    for (size_t k = 0; k < e.lanes.size(); ++k) s += (k ? " " : "") + show(e.lanes[k]);
    return s + "]";
  }
  switch (e.match) {
    case Expect::Match::Bits: return show_bits(e.type, e.bits);
    case Expect::Match::CanonicalNan: return std::string(valtype_name(e.type)) + ":nan:canonical";
    case Expect::Match::ArithmeticNan: return std::string(valtype_name(e.type)) + ":nan:arithmetic";
    case Expect::Match::NonNullRef: return std::string(valtype_name(e.type)) + ":non-null";
  }
  return "?";
}

template <class T, class F>
std::string show_list(const std::vector<T>& xs, F f) {
  std::string s = "(";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + f(xs[i]);
  return s + ")";
}

bool has_prefix(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// A trap message matches when the expected text is its prefix, or when the
// expected text is the message plus the operand the reference interpreter
// names ("uninitialized element 2"): wasmwarp's trap table has one fixed
// message per trap, without operands.
bool trap_matches(const std::string& message, const std::string& expected) {
  if (has_prefix(message, expected)) return true;
  if (!has_prefix(expected, message + " ") || expected.size() == message.size() + 1) return false;
  return expected.find_first_not_of("0123456789", message.size() + 1) == std::string::npos;
}

struct ModuleSlot {
  bool ok = false;
  uint32_t instance = 0;
  std::string why;  // when !ok: what went wrong loading it
};

class Script {
 public:
  Script(Backend& be, const ExpectedFailures& xf, const RunOptions& opts, FileReport& rep, std::string dir)
      : be_(be), xf_(xf), opts_(opts), rep_(rep), dir_(std::move(dir)) {}

  void run(const json& cmd) {
    std::string kind = "?";
    uint32_t line = 0;
    try {
      kind = str_field(cmd, "type");
      const json& l = field(cmd, "line");
      if (!l.is_number_unsigned()) bad("\"line\" is not a line number");
      line = l.get<uint32_t>();
      if (opts_.current_line) *opts_.current_line = line;
      dispatch(kind, line, cmd);
    } catch (const ScriptError& e) {
      fail(kind, line, (e.malformed ? "bad command: " : "") + e.message);
    } catch (const std::exception& e) {
      fail(kind, line, std::string("error: ") + e.what());
    }
  }

 private:
  void dispatch(const std::string& kind, uint32_t line, const json& cmd) {
    if (opts_.validate_only) {
      if (kind == "module") return cmd_module_valid(kind, line, cmd);
      if (kind == "assert_invalid" || kind == "assert_malformed") return cmd_assert_rejected(kind, line, cmd);
      static const char* const kRuns[] = {"register",
                                          "action",
                                          "assert_return",
                                          "assert_trap",
                                          "assert_exhaustion",
                                          "assert_unlinkable",
                                          "assert_uninstantiable"};
      for (const char* k : kRuns)
        if (kind == k) return skip(kind, "validate-only run");
      bad("unknown command type \"" + kind + "\"");
    }
    if (kind == "module") return cmd_module(kind, line, cmd);
    if (kind == "register") return cmd_register(kind, line, cmd);
    if (kind == "action") return cmd_action(kind, line, cmd);
    if (kind == "assert_return") return cmd_assert_return(kind, line, cmd);
    if (kind == "assert_trap" || kind == "assert_exhaustion") {
      if (cmd.contains("filename")) return cmd_module_fails(kind, line, cmd, true);
      return cmd_assert_trap(kind, line, cmd);
    }
    if (kind == "assert_invalid" || kind == "assert_malformed") return cmd_assert_rejected(kind, line, cmd);
    if (kind == "assert_unlinkable") return cmd_module_fails(kind, line, cmd, false);
    if (kind == "assert_uninstantiable") return cmd_module_fails(kind, line, cmd, true);
    bad("unknown command type \"" + kind + "\"");
  }

  // ---- outcomes ----

  void pass(const std::string& kind, uint32_t line) {
    rep_.kinds[kind].passed++;
    rep_.lines_seen.insert(line);
    if (const std::string* reason = xf_.find(rep_.file, line)) {
      std::string m =
          "unexpected pass: " + rep_.file + ":" + std::to_string(line) + " " + kind + " (listed as: " + *reason + ")";
      std::printf("%s\n", m.c_str());
      rep_.unexpected.push_back(std::move(m));
    }
  }

  void fail(const std::string& kind, uint32_t line, const std::string& msg) {
    rep_.kinds[kind].failed++;
    rep_.lines_seen.insert(line);
    std::string where = rep_.file + ":" + std::to_string(line) + ": " + kind + ": " + msg;
    if (const std::string* reason = xf_.find(rep_.file, line)) {
      rep_.expected_failures++;
      if (opts_.verbose) std::printf("XFAIL %s [%s]\n", where.c_str(), reason->c_str());
      return;
    }
    std::printf("FAIL %s\n", where.c_str());
    rep_.unexpected.push_back(std::move(where));
  }

  void skip(const std::string& kind, const std::string& reason) {
    rep_.kinds[kind].skipped++;
    rep_.skip_reasons[reason]++;
  }

  // ---- helpers ----

  struct Loaded {
    std::shared_ptr<const CompiledModule> module;
    std::string error;  // read or compile error
    bool read_failed = false;
    bool valid = false;  // decoded and validated (compiled too, unless validate_only)
  };

  Loaded load(const json& cmd) {
    Loaded out;
    std::string name = str_field(cmd, "filename");
    if (name.find('/') != std::string::npos) bad("module file \"" + name + "\" is not a plain name");
    auto bytes = read_file_bytes(dir_ + "/" + name);
    if (!bytes.ok()) {
      out.read_failed = true;
      out.error = bytes.error().to_string();
      return out;
    }
    if (opts_.validate_only) {
      auto m = decode_module(std::move(*bytes));
      Status s = m.ok() ? validate_module(*m) : Status(m.error());
      if (!s.ok()) out.error = s.error().message;
      out.valid = s.ok();
      return out;
    }
    auto m = compile_module(std::move(*bytes));
    if (!m.ok()) {
      out.error = m.error().message;
      return out;
    }
    out.module = std::move(*m);
    out.valid = true;
    return out;
  }

  // The module an action or register names, or the last one loaded.
  const ModuleSlot& target(const std::optional<std::string>& name) {
    if (name) {
      auto it = named_.find(*name);
      if (it == named_.end()) bad("no module named " + *name);
      if (!it->second.ok) unrunnable("module " + *name + " failed to load: " + it->second.why);
      return it->second;
    }
    if (!current_) bad("no module loaded");
    if (!current_->ok) unrunnable("the current module failed to load: " + current_->why);
    return *current_;
  }

  ActionOutcome action(const json& cmd) {
    const json& a = field(cmd, "action");
    std::string type = str_field(a, "type");
    const ModuleSlot& m = target(opt_str(a, "module"));
    std::string fname = str_field(a, "field");
    if (type == "invoke") {
      std::vector<Value> args;
      for (const json& v : array_field(a, "args")) args.push_back(parse_arg(v));
      return be_.invoke(m.instance, fname, args);
    }
    if (type == "get") return be_.get(m.instance, fname);
    bad("unknown action type \"" + type + "\"");
  }

  // ---- commands ----

  // --validate-only: a module command passes when the module is valid.
  void cmd_module_valid(const std::string& kind, uint32_t line, const json& cmd) {
    std::string module_type = opt_str(cmd, "module_type").value_or("binary");
    if (module_type == "text") return skip(kind, "text-format module (no text parser)");
    Loaded l = load(cmd);
    if (l.valid) return pass(kind, line);
    fail(kind, line, "module rejected: " + l.error);
  }

  void cmd_module(const std::string& kind, uint32_t line, const json& cmd) {
    auto name = opt_str(cmd, "name");
    ModuleSlot slot;
    slot.why = "bad module command";
    // Whatever happens next, the previous module stops being current: a
    // later action must not silently run on it.
    current_ = slot;
    Loaded l = load(cmd);
    if (!l.module) {
      slot.why = l.error;
    } else {
      InstantiateOutcome o = be_.instantiate(l.module);
      if (o.kind == InstantiateOutcome::Kind::Ok) {
        slot.ok = true;
        slot.instance = o.instance;
      } else {
        slot.why = (o.kind == InstantiateOutcome::Kind::Trap ? "instantiation trapped: " : "unlinkable: ") + o.message;
      }
    }
    current_ = slot;
    if (name) named_[*name] = slot;
    if (slot.ok) pass(kind, line);
    else fail(kind, line, slot.why);
  }

  void cmd_register(const std::string& kind, uint32_t line, const json& cmd) {
    std::string as = str_field(cmd, "as");
    const ModuleSlot& m = target(opt_str(cmd, "name"));
    be_.register_instance(m.instance, as);
    pass(kind, line);
  }

  // Commands a backend ran somewhere else than it runs the rest (the GPU
  // backend's CPU re-runs) are tallied under their own kind, so that they
  // never count as that backend's passes.
  std::string kind_of(const std::string& kind, const ActionOutcome& o) {
    if (o.ran_on_cpu.empty()) return kind;
    rep_.ran_on_cpu[o.ran_on_cpu]++;
    return kind + " (ran on CPU)";
  }

  void cmd_action(const std::string& cmd_kind, uint32_t line, const json& cmd) {
    ActionOutcome o = action(cmd);
    const std::string kind = kind_of(cmd_kind, o);
    if (o.kind == ActionOutcome::Kind::Ok) return pass(kind, line);
    fail(kind, line, (o.kind == ActionOutcome::Kind::Trap ? "trapped: " : "") + o.message);
  }

  // The results must match "expected", or, for a relaxed instruction
  // (3.0), one of the alternatives "either" lists for its one result.
  void cmd_assert_return(const std::string& cmd_kind, uint32_t line, const json& cmd) {
    const bool either = !cmd.contains("expected") && cmd.contains("either");
    std::vector<Expect> expected;
    for (const json& v : array_field(cmd, either ? "either" : "expected")) expected.push_back(parse_expect(v));
    ActionOutcome o = action(cmd);
    const std::string kind = kind_of(cmd_kind, o);
    if (o.kind == ActionOutcome::Kind::Trap) return fail(kind, line, "trapped: " + o.message);
    if (o.kind == ActionOutcome::Kind::Error) return fail(kind, line, o.message);
    bool ok = false;
    if (either) {
      for (size_t i = 0; !ok && i < expected.size(); ++i)
        ok = o.results.size() == 1 && matches(expected[i], o.results[0]);
    } else {
      ok = o.results.size() == expected.size();
      for (size_t i = 0; ok && i < expected.size(); ++i) ok = matches(expected[i], o.results[i]);
    }
    if (ok) return pass(kind, line);
    fail(kind, line,
         std::string(either ? "expected one of " : "expected ") +
             show_list(expected, [](const Expect& e) { return show(e); }) + ", got " +
             show_list(o.results, [](const Value& v) { return show_bits(v.type, v.bits, v.hi); }));
  }

  void cmd_assert_trap(const std::string& cmd_kind, uint32_t line, const json& cmd) {
    std::string text = str_field(cmd, "text");
    ActionOutcome o = action(cmd);
    const std::string kind = kind_of(cmd_kind, o);
    if (o.kind == ActionOutcome::Kind::Error) return fail(kind, line, o.message);
    if (o.kind == ActionOutcome::Kind::Ok)
      return fail(kind, line, "expected trap \"" + text + "\", returned " + show_list(o.results, [](const Value& v) {
                                return show_bits(v.type, v.bits, v.hi);
                              }));
    if (trap_matches(o.message, text)) return pass(kind, line);
    fail(kind, line, "expected trap \"" + text + "\", got \"" + o.message + "\"");
  }

  void cmd_assert_rejected(const std::string& kind, uint32_t line, const json& cmd) {
    std::string module_type = opt_str(cmd, "module_type").value_or("binary");
    if (module_type == "text") return skip(kind, "text-format module (no text parser)");
    if (module_type != "binary") bad("unknown module_type \"" + module_type + "\"");
    std::string text = str_field(cmd, "text");
    Loaded l = load(cmd);
    if (l.read_failed) return fail(kind, line, l.error);
    if (l.valid) return fail(kind, line, "module was accepted, expected \"" + text + "\"");
    pass(kind, line);
    if (!has_prefix(l.error, text)) {
      rep_.wording_differs++;
      if (opts_.verbose)
        std::printf("WORDING %s:%u: %s: expected \"%s\", got \"%s\"\n", rep_.file.c_str(), line, kind.c_str(),
                    text.c_str(), l.error.c_str());
    }
  }

  // assert_unlinkable (want_trap false) and assert_uninstantiable or
  // assert_trap on a module (want_trap true).
  void cmd_module_fails(const std::string& kind, uint32_t line, const json& cmd, bool want_trap) {
    std::string text = str_field(cmd, "text");
    Loaded l = load(cmd);
    if (!l.module) return fail(kind, line, "module did not compile: " + l.error);
    InstantiateOutcome o = be_.instantiate(l.module);
    if (o.kind == InstantiateOutcome::Kind::Ok)
      return fail(kind, line, "module instantiated, expected \"" + text + "\"");
    const bool trapped = o.kind == InstantiateOutcome::Kind::Trap;
    if (trapped != want_trap)
      return fail(kind, line,
                  std::string(trapped ? "instantiation trapped" : "module was unlinkable") + " with \"" + o.message +
                      "\", expected \"" + text + "\"");
    if (has_prefix(o.message, text)) return pass(kind, line);
    fail(kind, line, "expected \"" + text + "\", got \"" + o.message + "\"");
  }

  Backend& be_;
  const ExpectedFailures& xf_;
  const RunOptions& opts_;
  FileReport& rep_;
  std::string dir_;
  std::optional<ModuleSlot> current_;
  std::map<std::string, ModuleSlot> named_;
};

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dirname_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

const std::string* ExpectedFailures::find(const std::string& file, uint32_t line) const {
  auto f = entries.find(file);
  if (f == entries.end()) return nullptr;
  auto l = f->second.find(line);
  return l == f->second.end() ? nullptr : &l->second;
}

bool parse_expected_failures(const std::string& path, ExpectedFailures& out, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot open expected-failures file " + path;
    return false;
  }
  std::string text;
  for (uint32_t n = 1; std::getline(in, text); ++n) {
    size_t b = text.find_first_not_of(" \t\r");
    if (b == std::string::npos || text[b] == '#') continue;
    size_t e = text.find_first_of(" \t", b);
    std::string where = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    std::string reason;
    if (e != std::string::npos) {
      size_t rb = text.find_first_not_of(" \t", e);
      size_t re = text.find_last_not_of(" \t\r");
      if (rb != std::string::npos) reason = text.substr(rb, re - rb + 1);
    }
    size_t colon = where.rfind(':');
    uint32_t line = 0;
    const char* lb = where.data() + (colon == std::string::npos ? 0 : colon + 1);
    const char* le = where.data() + where.size();
    auto [p, ec] = std::from_chars(lb, le, line);
    std::string where_msg = path + ":" + std::to_string(n) + ": ";
    if (colon == std::string::npos || colon == 0 || ec != std::errc() || p != le || line == 0) {
      error = where_msg + "expected FILE.wast:LINE, got \"" + where + "\"";
      return false;
    }
    if (reason.empty()) {
      error = where_msg + "entry " + where + " has no reason";
      return false;
    }
    std::string file = where.substr(0, colon);
    if (!out.entries[file].emplace(line, reason).second) {
      error = where_msg + "duplicate entry " + where;
      return false;
    }
  }
  return true;
}

FileReport run_script(const std::string& json_path, Backend& backend, const ExpectedFailures& xfail,
                      const RunOptions& opts) {
  FileReport rep;
  rep.file = basename_of(json_path);
  if (rep.file.size() > 5 && rep.file.ends_with(".json")) rep.file = rep.file.substr(0, rep.file.size() - 5) + ".wast";

  auto script_error = [&](const std::string& why) {
    rep.script_error = true;
    rep.kinds["script"].failed++;
    std::string m = json_path + ": " + why;
    std::printf("ERROR %s\n", m.c_str());
    rep.unexpected.push_back(std::move(m));
    return rep;
  };

  std::ifstream in(json_path, std::ios::binary);
  if (!in) return script_error("cannot open");
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return script_error("not valid JSON");
  if (!doc.is_object()) return script_error("not a wast2json script (no top-level object)");
  auto src = doc.find("source_filename");
  if (src != doc.end() && src->is_string()) rep.file = basename_of(src->get<std::string>());
  auto cmds = doc.find("commands");
  if (cmds == doc.end() || !cmds->is_array()) return script_error("no \"commands\" array");

  backend.reset();
  Script script(backend, xfail, opts, rep, dirname_of(json_path));
  for (const json& cmd : *cmds) script.run(cmd);
  rep.tiers = backend.tier_report();
  return rep;
}

std::string report_to_json(const FileReport& r) {
  json j;
  j["file"] = r.file;
  json kinds = json::object();
  for (const auto& [k, t] : r.kinds) kinds[k] = {t.passed, t.failed, t.skipped};
  j["kinds"] = kinds;
  j["unexpected"] = r.unexpected;
  j["expected_failures"] = r.expected_failures;
  j["wording_differs"] = r.wording_differs;
  j["lines_seen"] = r.lines_seen;
  j["skip_reasons"] = r.skip_reasons;
  j["script_error"] = r.script_error;
  j["ran_on_cpu"] = r.ran_on_cpu;
  j["tiers"] = r.tiers;
  return j.dump();
}

bool report_from_json(const std::string& text, FileReport& out) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  try {
    out.file = j.at("file").get<std::string>();
    for (const auto& [k, t] : j.at("kinds").items())
      out.kinds[k] = {t.at(0).get<uint64_t>(), t.at(1).get<uint64_t>(), t.at(2).get<uint64_t>()};
    out.unexpected = j.at("unexpected").get<std::vector<std::string>>();
    out.expected_failures = j.at("expected_failures").get<uint64_t>();
    out.wording_differs = j.at("wording_differs").get<uint64_t>();
    out.lines_seen = j.at("lines_seen").get<std::set<uint32_t>>();
    out.skip_reasons = j.at("skip_reasons").get<std::map<std::string, uint64_t>>();
    out.script_error = j.at("script_error").get<bool>();
    out.ran_on_cpu = j.at("ran_on_cpu").get<std::map<std::string, uint64_t>>();
    out.tiers = j.at("tiers").get<std::map<std::string, uint64_t>>();
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

}  // namespace ww::spectest
