// Entry point of the `wasmwarp` command line.
#pragma once

namespace ww::cli {

// Parses argv, runs the command, returns the process exit code: 0 success,
// 1 a trap, 2 a usage or input error.
int main(int argc, char** argv);

// The commands (cmd_*.cc); `args` excludes the program and command names.
int cmd_run(const char* prog, int argc, char** argv);
int cmd_compile(int argc, char** argv);
int cmd_validate(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_disasm(int argc, char** argv);

}  // namespace ww::cli
