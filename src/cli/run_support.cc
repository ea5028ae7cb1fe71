// The progress line of `wasmwarp run`, and the intrinsics' inputs and
// outputs (--image, --state, --texture), and the checks of output paths
// written after a batch.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cli/image_files.h"
#include "cli/run_support.h"
#include "cli/value_format.h"

namespace ww::cli {

namespace {
Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

std::string human_rate(double per_s) {
  char buf[32];
  if (per_s >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM/s", per_s / 1e6);
  else if (per_s >= 1e3) std::snprintf(buf, sizeof buf, "%.1fk/s", per_s / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f/s", per_s);
  return buf;
}
}  // namespace

Result<wasmwarp::Backend> parse_backend(const std::string& s) {
  if (s == "auto") return wasmwarp::Backend::Auto;
  if (s == "cpu") return wasmwarp::Backend::Cpu;
  if (s == "gpu") return wasmwarp::Backend::Gpu;
  return err("--backend must be auto, cpu or gpu, not '" + s + "'");
}

Result<wasmwarp::Tier> parse_tier(const std::string& s) {
  if (s == "auto") return wasmwarp::Tier::Auto;
  if (s == "interp") return wasmwarp::Tier::Interpreter;
  if (s == "compiled") return wasmwarp::Tier::Compiled;
  return err("--tier must be interp, compiled or auto, not '" + s + "'");
}

Status parse_gpus(const std::string& text, wasmwarp::EngineOptions::Gpu& o) {
  o.devices.clear();
  o.max_devices = 0;
  if (text.empty() || text == "all") return Status::Ok();
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 4 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  const Error bad =
      err("--gpus '" + text + "': give all, a count (2: the first two GPUs) or GPU numbers (0,2,5; one alone as 3,)");
  if (text.find(',') == std::string::npos) {
    if (!digits(text)) return bad;
    o.max_devices = unsigned(std::stoul(text));
    if (o.max_devices == 0) return err("--gpus 0: at least one GPU (or --backend cpu)");
    return Status::Ok();
  }
  for (size_t at = 0; at < text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    if (!digits(item)) return bad;
    o.devices.push_back(std::stoi(item));
    at = comma + 1;
  }
  return Status::Ok();
}

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), tty_(isatty(2) == 1) {}

void ProgressLine::update(uint64_t done, uint64_t total, double seconds) {
  if (!enabled_ || seconds < 1.0) return;
  if (seconds - last_ < (tty_ ? 0.5 : 10.0)) return;
  last_ = seconds;
  double rate = seconds > 0 ? double(done) / seconds : 0;
  std::string left =
      rate > 0 && done < total ? std::to_string(uint64_t(std::ceil(double(total - done) / rate))) + " s left" : "";
  std::fprintf(stderr, "%sprogress: %llu/%llu instances, %s, %.1f s%s%s%s", tty_ ? "\r" : "",
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), human_rate(rate).c_str(),
               seconds, left.empty() ? "" : ", ", left.c_str(), tty_ ? "   " : "\n");
  shown_ = true;
}

void ProgressLine::finish() {
  if (shown_ && tty_) std::fputs("\n", stderr);
  shown_ = false;
}

Status setup_intrinsics(const RunSpec& spec, wasmwarp::GpuIntrinsics& g) {
  if (!spec.image.empty()) {
    size_t eq = spec.image.find('=');
    if (eq == std::string::npos || eq + 1 == spec.image.size())
      return err("--image '" + spec.image + "': expected WIDTHxHEIGHT=out.png");
    auto size = parse_image_size(spec.image.substr(0, eq));
    if (!size.ok()) return err("--image: " + size.error().message);
    g.image_width = size->first;
    g.image_height = size->second;
    // Fail on an unwritable path before running, like --output.
    std::string path = spec.image.substr(eq + 1);
    FILE* f = std::fopen(path.c_str(), "ab");
    if (!f) return err("cannot write " + path);
    std::fclose(f);
  }
  if (!spec.state_in.empty()) {
    WW_ASSIGN_OR_RETURN(g.state, read_state_file(spec.state_in));
    if (spec.state_size && spec.state_size != g.state.size())
      return err("--state " + std::to_string(spec.state_size) + " but " + spec.state_in + " holds " +
                 std::to_string(g.state.size()) + " values");
  } else if (spec.state_size) {
    if (spec.state_size > (uint64_t(1) << 31)) return err("--state must be below 2^31 entries");
    g.state.assign(spec.state_size, 0);
  }
  if (!spec.state_out.empty() && g.state.empty())
    return err("--state-out needs a state buffer (--state N or --state-in FILE)");
  for (const std::string& t : spec.textures) {
    size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == t.size())
      return err("--texture '" + t + "': expected UNIT=image.png");
    auto unit = parse_u64(t.substr(0, eq));
    if (!unit.ok()) return err("--texture '" + t + "': bad unit");
    WW_ASSIGN_OR_RETURN(Image img, read_png(t.substr(eq + 1)));
    g.textures.push_back({uint32_t(std::min<uint64_t>(*unit, 1u << 30)), std::move(img)});
  }
  if (spec.texture_filter == "bilinear") g.bilinear = true;
  else if (spec.texture_filter != "nearest")
    return err("--texture-filter must be nearest or bilinear, not '" + spec.texture_filter + "'");
  return Status::Ok();
}

Status check_output_paths(const RunSpec& spec) {
  // Written when the batch ends: a path that cannot be written fails now,
  // not after the batch has run.
  for (const auto& [option, path] : {std::pair<const char*, const std::string&>{"--stats", spec.stats},
                                     std::pair<const char*, const std::string&>{"--state-out", spec.state_out}}) {
    if (path.empty()) continue;
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return err(std::string(option) + " " + path + ": no such folder " + dir);
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      return err(std::string(option) + " " + path + ": cannot write in " + dir + ": " + std::strerror(errno));
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return err(std::string(option) + " " + path + ": is a folder");
  }
  return Status::Ok();
}

Status write_intrinsics_outputs(const RunSpec& spec, const wasmwarp::CallResult& r) {
  if (!spec.image.empty() && r.image()) WW_TRY(write_png(spec.image.substr(spec.image.find('=') + 1), *r.image()));
  if (!spec.state_out.empty()) WW_TRY(write_state_file(spec.state_out, r.state()));
  return Status::Ok();
}

}  // namespace ww::cli
