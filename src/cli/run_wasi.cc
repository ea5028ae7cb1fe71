#include "cli/run_wasi.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/text.h"

namespace ww::cli {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

Result<wasmwarp::WasiOptions::Dir> parse_dir(const std::string& text, bool writable) {
  const char* opt = writable ? "--dir-rw" : "--dir";
  const size_t sep = text.find("::");
  wasmwarp::WasiOptions::Dir d{text.substr(0, sep), sep == std::string::npos ? text : text.substr(sep + 2), writable};
  if (d.host.empty() || d.guest.empty()) return err(std::string(opt) + " '" + text + "': expected HOST[::GUEST]");
  if (sep == std::string::npos && writable) {
    // out/{i} is "out" to the program.
    d.guest = replace_all(d.guest, "{i}", "");
    while (d.guest.size() > 1 && d.guest.back() == '/') d.guest.pop_back();
  }
  return d;
}

}  // namespace

Result<std::vector<wasmwarp::WasiOptions::Dir>> dirs_of(const RunSpec& spec) {
  std::vector<wasmwarp::WasiOptions::Dir> dirs;
  for (const std::string& d : spec.dirs) {
    WW_ASSIGN_OR_RETURN(wasmwarp::WasiOptions::Dir dir, parse_dir(d, false));
    dirs.push_back(std::move(dir));
  }
  for (const std::string& d : spec.dirs_rw) {
    WW_ASSIGN_OR_RETURN(wasmwarp::WasiOptions::Dir dir, parse_dir(d, true));
    // Instances writing the same files would clobber each other.
    if (spec.instances > 1 && dir.host.find("{i}") == std::string::npos)
      return err("--dir-rw '" + d + "': a batch's writable directory needs {i} in its host path (one per instance)");
    dirs.push_back(std::move(dir));
  }
  return dirs;
}

Result<wasmwarp::WasiOptions> wasi_options_of(const RunSpec& spec) {
  wasmwarp::WasiOptions w;
  w.program = spec.module_path;
  w.args = spec.args;
  for (const std::string& e : spec.env)
    if (e.find('=') == std::string::npos || e[0] == '=') return err("--env '" + e + "': expected NAME=VALUE");
  w.env = spec.env;
  WW_ASSIGN_OR_RETURN(w.dirs, dirs_of(spec));
  w.stdout_pattern = spec.stdout_pattern;
  w.stderr_pattern = spec.stderr_pattern;
  w.stdin_pattern = spec.stdin_pattern;
  if (spec.output_cap) w.output_cap = *spec.output_cap;
  if (spec.seed) {
    w.seed = *spec.seed;
  } else if (getentropy(&w.seed, sizeof w.seed) != 0) {
    return err(std::string("cannot seed random_get: ") + std::strerror(errno));
  }
  return w;
}

}  // namespace ww::cli
