// The compile pipeline (decode -> validate -> translate) and reading module
// files with one-line errors a user can act on.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "decode/decoder.h"
#include "translate/translator.h"
#include "validate/validator.h"
#include "wasmwarp/runtime.h"

namespace ww {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<std::shared_ptr<const CompiledModule>> compile_module(std::vector<uint8_t> bytes,
                                                             const CompileOptions& opts) {
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

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  // stat first: fopen succeeds on a directory on Linux and the read fails
  // later with the less helpful EISDIR.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(kNoOffset, "cannot open " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return make_error(kNoOffset, path + " is a directory");

  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return make_error(kNoOffset, "cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  // Read in chunks rather than trusting st_size: pipes and /proc files
  // report 0 and still have contents.
  if (S_ISREG(st.st_mode) && st.st_size > 0) bytes.reserve(size_t(st.st_size));
  uint8_t buf[1 << 16];
  for (;;) {
    size_t n = std::fread(buf, 1, sizeof buf, f);
    bytes.insert(bytes.end(), buf, buf + n);
    if (n < sizeof buf) break;
  }
  bool failed = std::ferror(f) != 0;
  int err = errno;
  std::fclose(f);
  if (failed) return make_error(kNoOffset, "cannot read " + path + ": " + std::strerror(err));
  return bytes;
}

Result<std::shared_ptr<const CompiledModule>> compile_file(const std::string& path,
                                                           const CompileOptions& opts) {
  WW_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file_bytes(path));
  if (bytes.empty()) return make_error(kNoOffset, path + " is empty");
  return compile_module(std::move(bytes), opts);
}

}  // namespace ww
