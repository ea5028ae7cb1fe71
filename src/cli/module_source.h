// A module file as the commands read it: the binary format, or the text
// format (.wat), converted to binary with wabt's parser when this build has
// it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "runtime/runtime.h"

namespace ww::cli {

// The module's binary bytes; text is recognised by its content (a first
// token "(" or a comment), not by the file name. Errors name the file.
Result<std::vector<uint8_t>> read_module_bytes(const std::string& path);
// read_module_bytes, then compile_module.
Result<std::shared_ptr<const CompiledModule>> compile_module_file(const std::string& path,
                                                                  const CompileOptions& opts = {});

}  // namespace ww::cli
