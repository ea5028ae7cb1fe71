// Module: loading (binary or text), its imports and exports, and the
// listings the command line shows (describe, disassemble).
#include <chrono>
#include <cstdio>

#include "api/internal.h"
#include "bytecode/disasm.h"
#include "common/text.h"
#include "decode/decoder.h"
#include "runtime/unknown_imports.h"
#include "validate/validator.h"
#include "wasi/wasi.h"

namespace wasmwarp {
namespace {
using namespace api;

ExternKind public_kind(ww::ExternKind k) {
  switch (k) {
    case ww::ExternKind::Func: return ExternKind::Function;
    case ww::ExternKind::Table: return ExternKind::Table;
    case ww::ExternKind::Memory: return ExternKind::Memory;
    case ww::ExternKind::Global: return ExternKind::Global;
  }
  return ExternKind::Function;
}

// "PATH: message", unless the message names the file already.
std::string with_path(const std::string& path, const ww::Error& e) {
  std::string m = e.to_string();
  return path.empty() || m.find(path) != std::string::npos ? m : path + ": " + m;
}

Expected<Module> from_compiled(ww::Result<std::shared_ptr<const ww::CompiledModule>> r, const std::string& path,
                               double read_ms) {
  if (!r.ok()) return Error{with_path(path, r.error())};
  auto impl = std::make_shared<Module::Impl>();
  impl->cm = *r;
  const ww::Module& m = impl->cm->module;
  for (const ww::Export& e : m.exports) {
    Export x{e.name, public_kind(e.kind), {}};
    if (e.kind == ww::ExternKind::Func) x.type = public_type(m.func_type(e.index));
    impl->exports.push_back(std::move(x));
  }
  for (const ww::Import& i : m.imports) {
    Import x{i.module, i.field, public_kind(i.kind), {}};
    if (i.kind == ww::ExternKind::Func) x.type = public_type(m.types[i.func_type]);
    impl->imports.push_back(std::move(x));
  }
  impl->times = {read_ms, impl->cm->decode_ms, impl->cm->validate_ms, impl->cm->translate_ms};
  return Module::Impl::make(std::move(impl));
}

ww::CompileOptions compile_options(const ModuleOptions& o) {
  ww::CompileOptions c;
  c.deny_recursion = o.deny_recursion;
  return c;
}

std::string func_list(const ww::Module& m, const std::vector<uint32_t>& fs) {
  std::string s;
  for (size_t i = 0; i < fs.size(); ++i) s += (i ? ", " : "") + m.func_display_name(fs[i]);
  return s;
}

std::string limits_str(const ww::Limits& l) {
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

std::string import_line(const ww::Module& m, const ww::Import& imp) {
  using ww::ExternKind;
  std::string o = "  " + printable(imp.module) + "." + printable(imp.field) + ": " + ww::extern_kind_name(imp.kind);
  switch (imp.kind) {
    case ExternKind::Func: o += " " + ww::functype_to_string(m.types[imp.func_type]); break;
    case ExternKind::Table:
      o += std::string(" ") + ww::valtype_name(imp.table.elem) + " " + limits_str(imp.table.limits);
      break;
    case ExternKind::Memory: o += " " + limits_str(imp.memory.limits) + " pages"; break;
    case ExternKind::Global:
      o += std::string(imp.global.mut ? " mut " : " ") + ww::valtype_name(imp.global.type);
      break;
  }
  if (imp.module == ww::wasi::kModuleName && !ww::wasi::implemented(imp.field))
    o += "  (not implemented: returns ENOSYS)";
  return o + "\n";
}

}  // namespace

namespace {

// A binary module file; the text format is refused with what to do.
ww::Result<std::vector<uint8_t>> read_binary(const std::string& path) {
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ww::read_file_bytes(path));
  if (bytes.empty()) return ww::make_error(ww::kNoOffset, path + " is empty");
  if (ww::looks_like_wat(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())))
    return ww::make_error(ww::kNoOffset, path + " is in the text format: convert it with `wat2wasm " + path +
                                             "` (Debian package wabt), or load it with the wasmwarp command");
  return bytes;
}

}  // namespace

Expected<Module> Module::from_file(const std::string& path, const ModuleOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto bytes = read_binary(path);
  if (!bytes.ok()) return Error{with_path(path, bytes.error())};
  const double read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return from_compiled(ww::compile_module(std::move(*bytes), compile_options(options)), path, read_ms);
}

Expected<Module> Module::from_bytes(std::vector<uint8_t> wasm, const ModuleOptions& options) {
  return from_compiled(ww::compile_module(std::move(wasm), compile_options(options)), "", 0);
}

const std::vector<Export>& Module::exports() const { return impl_->exports; }
const std::vector<Import>& Module::imports() const { return impl_->imports; }

Expected<FunctionType> Module::function_type(const std::string& export_name) const {
  auto t = ww::batch::export_function_type(impl_->cm->module, export_name);
  if (!t.ok()) return Error{t.error().message};
  return public_type(*t);
}

bool Module::is_wasi_command() const { return ww::wasi::imports_wasi(impl_->cm->module); }
uint32_t Module::memory_count() const { return impl_->cm->module.num_memories(); }
std::string Module::function_name(uint32_t index) const { return impl_->cm->module.func_display_name(index); }
std::string Module::trap_message(uint8_t code, uint32_t function) const {
  return ww::trap_text(impl_->cm->module, ww::TrapCode(code), function);
}
const ModuleTimes& Module::times() const { return impl_->times; }

std::string Module::describe(const std::string& label) const {
  const ww::Module& m = impl_->cm->module;
  const ww::TranslatedModule& tm = impl_->cm->code;
  std::string o;
  o += "module: " + label + " (" + std::to_string(m.bytes.size()) + " bytes)\n";
  o += "imports: " + std::to_string(m.imports.size()) + "\n";
  for (const ww::Import& imp : m.imports) o += import_line(m, imp);
  o += "exports: " + std::to_string(m.exports.size()) + "\n";
  for (const ww::Export& e : m.exports) {
    o += "  " + printable(e.name) + ": " + ww::extern_kind_name(e.kind) + " " + std::to_string(e.index);
    if (e.kind == ww::ExternKind::Func) o += " " + ww::functype_to_string(m.func_type(e.index));
    o += "\n";
  }
  o += "memories: " + std::to_string(m.num_memories()) + ", tables: " + std::to_string(m.num_tables()) +
       ", globals: " + std::to_string(m.num_globals()) + "\n";
  o += "functions: " + std::to_string(m.funcs.size()) + " defined, " + std::to_string(m.num_imported_funcs) +
       " imported\n";
  for (const ww::FunctionManifest& f : tm.manifests) {
    o += "  func " + std::to_string(f.func_index) + " " + m.func_display_name(f.func_index) + ": " +
         ww::functype_to_string(m.types[f.type_index]) + "  locals " + std::to_string(f.num_locals) + "  max stack " +
         std::to_string(f.max_stack) + "  frame slots " + std::to_string(f.frame_slots);
    o += "  callees [" + func_list(m, f.callees) + "]";
    if (f.calls_indirect) o += "  calls indirect";
    o += "\n";
  }
  const auto& groups = tm.call_graph.recursive_groups;
  o += "recursive groups: " + (groups.empty() ? std::string("none") : std::to_string(groups.size())) + "\n";
  for (const auto& g : groups) o += "  [" + func_list(m, g) + "]\n";
  const size_t bc = tm.bytecode.size_bytes();
  char ratio[32] = "n/a";
  if (m.code_section_size) std::snprintf(ratio, sizeof ratio, "%.2f", double(bc) / m.code_section_size);
  o += "bytecode: " + std::to_string(bc) + " bytes, code section: " + std::to_string(m.code_section_size) +
       " bytes, ratio " + ratio + "\n";
  char times[160];
  std::snprintf(times, sizeof times, "times: decode %.3f ms, validate %.3f ms, translate %.3f ms\n",
                impl_->cm->decode_ms, impl_->cm->validate_ms, impl_->cm->translate_ms);
  return o + times;
}

std::string Module::disassemble() const { return ww::disassemble_module(impl_->cm->code.bytecode, impl_->cm->module); }

std::optional<Error> validate(std::vector<uint8_t> wasm) {
  auto mod = ww::decode_module(std::move(wasm));
  if (!mod.ok()) return Error{mod.error().to_string()};
  if (ww::Status s = ww::validate_module(*mod); !s.ok()) return Error{s.error().to_string()};
  return std::nullopt;
}

}  // namespace wasmwarp
