// One WASI batch input's argv and stdio, for the CPU workers and the GPU's
// host calls alike.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "common/text.h"
#include "wasi/wasi.h"

namespace ww::batch {

// One WASI input's argv and stdio: "@index" anywhere in ARGS and "{i}" in
// the patterns stand for the instance's index; files named by patterns are
// open while the input runs.
class WasiInput {
 public:
  WasiInput(const WasiBatch& w, uint64_t i, std::string* out, std::string* err) {
    const std::string index = std::to_string(i);
    std::vector<std::string> argv{w.argv0};
    for (const std::string& a : w.args) argv.push_back(replace_all(a, "@index", index));
    wasi::Stdio stdio;
    stdio.index = i;
    stdio.cap = w.output_cap;
    stdio.out = w.stdout_pattern.empty() ? out : nullptr;
    stdio.err = w.stderr_pattern.empty() ? err : nullptr;
    if (!w.stdin_pattern.empty()) stdio.in = open_file(w.stdin_pattern, index, O_RDONLY, "stdin");
    if (!w.stdout_pattern.empty())
      stdio.out_fd = open_file(w.stdout_pattern, index, O_WRONLY | O_CREAT | O_TRUNC, "stdout");
    if (!w.stderr_pattern.empty())
      stdio.err_fd = open_file(w.stderr_pattern, index, O_WRONLY | O_CREAT | O_TRUNC, "stderr");
    stdio_ = stdio;
    argv_ = std::move(argv);
  }
  ~WasiInput() {
    for (int fd : fds_) ::close(fd);
  }
  void start(wasi::Context& cx, uint64_t seed) { cx.start_input(std::move(argv_), stdio_, seed); }

 private:
  int open_file(const std::string& pattern, const std::string& index, int flags, const char* what) {
    const std::string path = replace_all(pattern, "{i}", index);
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    // Fails the batch: every instance would fail alike.
    if (fd < 0)
      throw std::runtime_error(std::string("cannot open ") + what + " file " + path + ": " + std::strerror(errno));
    fds_.push_back(fd);
    return fd;
  }
  wasi::Stdio stdio_;
  std::vector<std::string> argv_;
  std::vector<int> fds_;
};

}  // namespace ww::batch
