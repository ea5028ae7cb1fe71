#include "cli/module_source.h"

#include <chrono>
#include <cstring>

#include "common/file_read.h"
#include "common/text.h"

#if WW_HAVE_WABT
#include <wabt/binary-writer.h>
#include <wabt/error-formatter.h>
#include <wabt/feature.h>
#include <wabt/resolve-names.h>
#include <wabt/stream.h>
#include <wabt/validator.h>
#include <wabt/wast-lexer.h>
#include <wabt/wast-parser.h>
#endif

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

#if WW_HAVE_WABT
// wabt's first error, as "LINE:COL: message".
std::string first_error(const wabt::Errors& errors) {
  if (errors.empty()) return "invalid text format";
  const wabt::Error& e = errors.front();
  return std::to_string(e.loc.line) + ":" + std::to_string(e.loc.first_column) + ": " + e.message;
}

Result<std::vector<uint8_t>> wat_to_wasm(const std::string& path, const std::vector<uint8_t>& text) {
  wabt::Errors errors;
  auto lexer = wabt::WastLexer::CreateBufferLexer(path, text.data(), text.size(), &errors);
  wabt::Features features;
  features.EnableAll();
  wabt::WastParseOptions parse_options(features);
  std::unique_ptr<wabt::Module> module;
  if (wabt::Failed(wabt::ParseWatModule(lexer.get(), &module, &errors, &parse_options)) ||
      wabt::Failed(wabt::ResolveNamesModule(module.get(), &errors)))
    return err(path + ":" + first_error(errors));
  wabt::MemoryStream stream;
  wabt::WriteBinaryOptions options(features, /*canonicalize_lebs=*/true, /*relocatable=*/false,
                                   /*write_debug_names=*/true);
  if (wabt::Failed(wabt::WriteBinaryModule(&stream, module.get(), options)))
    return err(path + ": cannot encode the module");
  return std::move(stream.output_buffer().data);
}
#endif

}  // namespace

Result<std::vector<uint8_t>> read_module_bytes(const std::string& path) {
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file_bytes(path));
  if (bytes.empty()) return err(path + " is empty");
  static const uint8_t kMagic[4] = {0, 'a', 's', 'm'};
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), kMagic, 4) == 0) return bytes;
  if (!looks_like_wat(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())))
    return bytes;  // the decoder says what is wrong
#if WW_HAVE_WABT
  return wat_to_wasm(path, bytes);
#else
  return err(path + " is in the text format, which this build cannot read: convert it with `wat2wasm " + path +
             "` (Debian package wabt)");
#endif
}

Result<wasmwarp::Module> load_module(const std::string& path, const wasmwarp::ModuleOptions& options, double* read_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_module_bytes(path));
  if (read_ms) *read_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto m = wasmwarp::Module::from_bytes(std::move(bytes), options);
  if (!m) return err(path + ": " + m.error().message);
  return std::move(*m);
}

}  // namespace ww::cli
