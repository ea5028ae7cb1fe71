// The compile pipeline (decode -> validate -> translate) and reading module
// files with one-line errors a user can act on.
#include <chrono>

#include "common/file_read.h"
#include "decode/decoder.h"
#include "runtime/runtime.h"
#include "translate/translator.h"
#include "validate/validator.h"

namespace ww {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<std::shared_ptr<const CompiledModule>> compile_module(std::vector<uint8_t> bytes, const CompileOptions& opts) {
  auto cm = std::make_shared<CompiledModule>();
  auto t = std::chrono::steady_clock::now();
  WW_ASSIGN_OR_RETURN(cm->module, decode_module(std::move(bytes), opts.decode));
  cm->decode_ms = ms_since(t);

  t = std::chrono::steady_clock::now();
  WW_TRY(validate_module(cm->module));
  cm->validate_ms = ms_since(t);

  t = std::chrono::steady_clock::now();
  WW_ASSIGN_OR_RETURN(cm->code, translate_module(cm->module, opts.translate));
  cm->translate_ms = ms_since(t);

  if (opts.deny_recursion) WW_TRY(check_no_recursion(cm->module, cm->code.call_graph));
  return std::shared_ptr<const CompiledModule>(std::move(cm));
}

Result<std::shared_ptr<const CompiledModule>> compile_file(const std::string& path, const CompileOptions& opts) {
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file_bytes(path));
  if (bytes.empty()) return make_error(kNoOffset, path + " is empty");
  return compile_module(std::move(bytes), opts);
}

}  // namespace ww
