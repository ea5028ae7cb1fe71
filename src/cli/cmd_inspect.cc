// `wasmwarp validate`, `inspect` and `disasm`: commands that look at a
// module without running it.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/module_source.h"
#include "wasmwarp/wasmwarp.h"

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

}  // namespace

int cmd_validate(int argc, char** argv) {
  std::string path;
  if (int rc = parse_module_arg("validate", "Check that a module is valid WebAssembly 2.0.", argc, argv, path); rc >= 0)
    return rc;
  auto bytes = read_module_bytes(path);
  if (!bytes.ok()) {
    print_error(bytes.error().message);
    return kExitUsage;
  }
  if (auto e = wasmwarp::validate(std::move(*bytes))) {
    print_error(path + ": " + e->message);
    return kExitUsage;
  }
  std::printf("valid\n");
  return kExitOk;
}

int cmd_inspect(int argc, char** argv) {
  std::string path;
  if (int rc = parse_module_arg("inspect", "Describe a module: imports, exports, functions, sizes.", argc, argv, path);
      rc >= 0)
    return rc;
  auto m = load_module(path);
  if (!m.ok()) {
    print_error(m.error().message);
    return kExitUsage;
  }
  const std::string o = m->describe(path);
  std::fwrite(o.data(), 1, o.size(), stdout);
  return kExitOk;
}

int cmd_disasm(int argc, char** argv) {
  std::string path;
  if (int rc = parse_module_arg("disasm", "Print a module's register bytecode.", argc, argv, path); rc >= 0) return rc;
  auto m = load_module(path);
  if (!m.ok()) {
    print_error(m.error().message);
    return kExitUsage;
  }
  const std::string text = m->disassemble();
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace ww::cli
