// A module file as the commands read it: the binary format, or the text
// format (.wat), converted to binary with wabt's parser when this build has
// it, then loaded through the API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "wasmwarp/wasmwarp.h"

namespace ww::cli {

// The module's binary bytes; text is recognised by its content (a first
// token "(" or a comment), not by the file name. Errors name the file.
Result<std::vector<uint8_t>> read_module_bytes(const std::string& path);

// read_module_bytes, then the API's Module; errors name the file.
// `read_ms` gets the time the file (and its conversion) took.
Result<wasmwarp::Module> load_module(const std::string& path, const wasmwarp::ModuleOptions& options = {},
                                     double* read_ms = nullptr);

}  // namespace ww::cli
