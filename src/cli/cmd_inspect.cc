// `wasmwarp validate`, `inspect` and `disasm`: commands that look at a
// module without running it.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "bytecode/disasm.h"
#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "wasi/wasi.h"
#include "cli/module_source.h"
#include "decode/decoder.h"
#include "validate/validator.h"
#include "runtime/runtime.h"

namespace ww::cli {
namespace {

// Parses "[--help] MODULE.wasm"; returns -1 to continue, else an exit code.
int parse_module_arg(const char* cmd, const char* what, int argc, char** argv, std::string& path) {
  CLI::App app(what, std::string("wasmwarp ") + cmd);
  app.add_option("module", path, "the .wasm file")->required();
  std::vector<std::string> a{std::string("wasmwarp ") + cmd};
  for (int i = 0; i < argc; ++i) a.push_back(argv[i]);
  std::vector<char*> p;
  for (auto& s : a) p.push_back(s.data());
  try {
    app.parse(int(p.size()), p.data());
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    print_error(std::string(cmd) + ": " + e.what());
    return kExitUsage;
  }
  return -1;
}

std::string with_path(const std::string& path, const Error& e) {
  std::string m = e.to_string();
  return m.find(path) == std::string::npos ? path + ": " + m : m;
}

std::string func_list(const Module& m, const std::vector<uint32_t>& fs) {
  std::string s;
  for (size_t i = 0; i < fs.size(); ++i) s += (i ? ", " : "") + m.func_display_name(fs[i]);
  return s;
}

std::string limits_str(const Limits& l) {
  return "min " + std::to_string(l.min) + (l.max ? ", max " + std::to_string(*l.max) : "");
}

// Names are arbitrary UTF-8, NUL and control characters included: shown
// escaped so the listing stays one line per entry and is never cut short.
std::string printable(const std::string& name) {
  std::string o;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
    } else {
      o += char(c);
    }
  }
  return o;
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  std::string path;
  if (int rc = parse_module_arg("validate", "Check that a module is valid WebAssembly 2.0.", argc, argv, path); rc >= 0)
    return rc;
  auto bytes = read_file_bytes(path);
  if (!bytes.ok()) {
    print_error(with_path(path, bytes.error()));
    return kExitUsage;
  }
  if (bytes->empty()) {
    print_error(path + " is empty");
    return kExitUsage;
  }
  auto mod = decode_module(std::move(*bytes));
  if (!mod.ok()) {
    print_error(with_path(path, mod.error()));
    return kExitUsage;
  }
  Status s = validate_module(*mod);
  if (!s.ok()) {
    print_error(with_path(path, s.error()));
    return kExitUsage;
  }
  std::printf("valid\n");
  return kExitOk;
}

int cmd_inspect(int argc, char** argv) {
  std::string path;
  if (int rc = parse_module_arg("inspect", "Describe a module: imports, exports, functions, sizes.", argc, argv, path); rc >= 0)
    return rc;
  auto cm = compile_module_file(path);
  if (!cm.ok()) {
    print_error(with_path(path, cm.error()));
    return kExitUsage;
  }
  const Module& m = (*cm)->module;
  const TranslatedModule& tm = (*cm)->code;
  std::string o;
  o += "module: " + path + " (" + std::to_string(m.bytes.size()) + " bytes)\n";
  o += "imports: " + std::to_string(m.imports.size()) + "\n";
  for (const Import& imp : m.imports) {
    o += "  " + printable(imp.module) + "." + printable(imp.field) + ": " + extern_kind_name(imp.kind);
    switch (imp.kind) {
      case ExternKind::Func: o += " " + functype_to_string(m.types[imp.func_type]); break;
      case ExternKind::Table: o += std::string(" ") + valtype_name(imp.table.elem) + " " + limits_str(imp.table.limits); break;
      case ExternKind::Memory: o += " " + limits_str(imp.memory.limits) + " pages"; break;
      case ExternKind::Global: o += std::string(imp.global.mut ? " mut " : " ") + valtype_name(imp.global.type); break;
    }
    if (imp.module == wasi::kModuleName && !wasi::implemented(imp.field)) o += "  (not implemented: returns ENOSYS)";
    o += "\n";
  }
  o += "exports: " + std::to_string(m.exports.size()) + "\n";
  for (const Export& e : m.exports) {
    o += "  " + printable(e.name) + ": " + extern_kind_name(e.kind) + " " + std::to_string(e.index);
    if (e.kind == ExternKind::Func) o += " " + functype_to_string(m.func_type(e.index));
    o += "\n";
  }
  o += "memories: " + std::to_string(m.num_memories()) + ", tables: " + std::to_string(m.num_tables()) +
       ", globals: " + std::to_string(m.num_globals()) + "\n";
  o += "functions: " + std::to_string(m.funcs.size()) + " defined, " +
       std::to_string(m.num_imported_funcs) + " imported\n";
  for (const FunctionManifest& f : tm.manifests) {
    o += "  func " + std::to_string(f.func_index) + " " + m.func_display_name(f.func_index) + ": " +
         functype_to_string(m.types[f.type_index]) + "  locals " + std::to_string(f.num_locals) +
         "  max stack " + std::to_string(f.max_stack) + "  frame slots " + std::to_string(f.frame_slots);
    o += "  callees [" + func_list(m, f.callees) + "]";
    if (f.calls_indirect) o += "  calls indirect";
    o += "\n";
  }
  const auto& groups = tm.call_graph.recursive_groups;
  o += "recursive groups: " + (groups.empty() ? std::string("none") : std::to_string(groups.size())) + "\n";
  for (const auto& g : groups) o += "  [" + func_list(m, g) + "]\n";
  size_t bc = tm.bytecode.size_bytes();
  char ratio[32] = "n/a";
  if (m.code_section_size) std::snprintf(ratio, sizeof ratio, "%.2f", double(bc) / m.code_section_size);
  o += "bytecode: " + std::to_string(bc) + " bytes, code section: " + std::to_string(m.code_section_size) +
       " bytes, ratio " + ratio + "\n";
  char times[160];
  std::snprintf(times, sizeof times, "times: decode %.3f ms, validate %.3f ms, translate %.3f ms\n",
                (*cm)->decode_ms, (*cm)->validate_ms, (*cm)->translate_ms);
  o += times;
  std::fwrite(o.data(), 1, o.size(), stdout);
  return kExitOk;
}

int cmd_disasm(int argc, char** argv) {
  std::string path;
  if (int rc = parse_module_arg("disasm", "Print a module's register bytecode.", argc, argv, path); rc >= 0)
    return rc;
  auto cm = compile_module_file(path);
  if (!cm.ok()) {
    print_error(with_path(path, cm.error()));
    return kExitUsage;
  }
  std::string text = disassemble_module((*cm)->code.bytecode, (*cm)->module);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace ww::cli
