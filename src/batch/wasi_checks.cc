#include "batch/wasi_checks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/text.h"

namespace ww::batch {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The two instances whose paths are checked: their folders are the likely
// mistakes (one missing folder; a pattern with {i} in its folder part), and
// checking every instance's would cost a batch of millions a pass over the
// file system.
std::string path_for(const std::string& pattern, uint64_t index) {
  return replace_all(pattern, "{i}", std::to_string(index));
}

Status check_output(const char* option, const std::string& pattern, uint64_t first, uint64_t n) {
  if (pattern.empty()) return Status::Ok();
  if (n > 1 && pattern.find("{i}") == std::string::npos)
    return err(std::string(option) + " '" + pattern + "': a batch's instances would all write this one file; put {i} " +
               "(the instance's index) in it");
  for (uint64_t i : {first, first + n - 1}) {
    const std::string path = path_for(pattern, i);
    const std::string dir = folder_of(path);
    if (!is_dir(dir))
      return err(std::string(option) + " '" + pattern + "': " + dir +
                 (::access(dir.c_str(), F_OK) == 0 ? " is not a folder" : " does not exist") + " (instance " +
                 std::to_string(i) + " writes " + path + ")");
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      return err(std::string(option) + " '" + pattern + "': cannot write in " + dir + ": " + std::strerror(errno));
    if (is_dir(path)) return err(std::string(option) + " '" + pattern + "': " + path + " is a folder");
  }
  return Status::Ok();
}

Status check_input(const std::string& pattern, uint64_t first, uint64_t n) {
  if (pattern.empty()) return Status::Ok();
  for (uint64_t i : {first, first + n - 1}) {
    const std::string path = path_for(pattern, i);
    if (::access(path.c_str(), R_OK) != 0)
      return err("--stdin '" + pattern + "': cannot read " + path + ": " + std::strerror(errno));
    if (is_dir(path)) return err("--stdin '" + pattern + "': " + path + " is a folder");
  }
  return Status::Ok();
}

Status check_preopen(const wasi::Preopen& p, uint64_t first) {
  if (!p.writable) {
    if (!is_dir(p.host)) return err("--dir " + p.host + ": no such folder");
    if (::access(p.host.c_str(), R_OK | X_OK) != 0)
      return err("--dir " + p.host + ": cannot read it: " + std::strerror(errno));
    return Status::Ok();
  }
  // Made when missing, with its parents: the nearest one that exists must
  // take new folders.
  std::string path = path_for(p.host, first);
  if (is_dir(path)) {
    if (::access(path.c_str(), W_OK | X_OK) != 0)
      return err("--dir-rw " + p.host + ": cannot write in " + path + ": " + std::strerror(errno));
    return Status::Ok();
  }
  std::string parent = path;
  struct stat st {};
  bool found = false;
  while (!(found = ::stat(parent.c_str(), &st) == 0)) {
    const std::string up = folder_of(parent);
    if (up == parent) break;
    parent = up;
  }
  if (!found || !S_ISDIR(st.st_mode)) return err("--dir-rw " + p.host + ": " + parent + " is not a folder");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    return err("--dir-rw " + p.host + ": cannot make " + path + " in " + parent + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace

Status check_wasi_paths(const WasiBatch& w, uint64_t first, uint64_t n) {
  if (n == 0) return Status::Ok();
  WW_TRY(check_output("--stdout", w.stdout_pattern, first, n));
  WW_TRY(check_output("--stderr", w.stderr_pattern, first, n));
  WW_TRY(check_input(w.stdin_pattern, first, n));
  for (const wasi::Preopen& p : w.config.preopens) WW_TRY(check_preopen(p, first));
  return Status::Ok();
}

}  // namespace ww::batch
