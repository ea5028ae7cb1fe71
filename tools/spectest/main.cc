// ww-spectest: runs wast2json scripts, one child process per script, so that
// a crash or a hang in one script costs that script only and the totals of
// every other script still come out.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <execinfo.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend.h"
#include "parse_uint.h"
#include "runner.h"

namespace {

// Reads a child's pipe to its end, closes it and reaps the child.
std::string drain_and_wait(int fd, pid_t pid, int& status) {
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, size_t(n));
  }
  close(fd);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return text;
}

using namespace ww::spectest;

struct Options {
  std::string expected_failures;
  std::string backend = "cpu";
  RunOptions run;
  BackendOptions backend_opts;
  bool mixed = false;       // --tier mixed
  uint64_t mixed_seed = 1;  // --mixed-seed
  unsigned timeout_s = 600;
  bool fork = true;
  std::vector<std::string> files;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: ww-spectest [--expected-failures FILE] [--backend cpu|gpu] [--tier interp|compiled|mixed]\n"
               "                   [--cache-dir DIR] [--verbose]\n"
               "                   [--fuel N] [--timeout SECONDS] [--gpu-instances K] [--gpu-layout L] [--no-fork]\n"
               "                   [--validate-only]\n"
               "                   FILE.json...\n"
               "Runs WebAssembly spec test scripts converted by wast2json (wabt 1.0.32).\n"
               "  --expected-failures FILE  lines `FILE.wast:LINE  reason`; listed failures\n"
               "                            do not fail the run, listed passes do\n"
               "  --backend cpu|gpu         the engine that runs the invokes (gpu: every invoke\n"
               "                            of a module's own function runs as a GPU batch;\n"
               "                            exits 77 when no GPU is usable)\n"
               "  --tier interp|compiled|mixed\n"
               "                            compiled: every module is compiled (host compiler or\n"
               "                            NVRTC, through the cache) and its functions run\n"
               "                            compiled code; a module that cannot be compiled\n"
               "                            fails the run; mixed (CPU): each module's functions\n"
               "                            split between the tiers, about half compiled as one\n"
               "                            unit, calling each other both ways\n"
               "  --mixed-seed N            with --tier mixed: the split's seed (default 1)\n"
               "  --cache-dir DIR           the compiled-code cache (default as wasmwarp's)\n"
               "  --gpu-instances K         GPU instances per invoke, all given the same\n"
               "                            arguments and required to agree (default 64)\n"
               "  --gpu-layout L            interleaved (default), contiguous or sparse memory\n"
               "  --verbose                 also print expected failures and wording differences\n"
               "  --fuel N                  instructions per invoke before a trap (default 10^9)\n"
               "  --timeout SECONDS         wall-clock limit per script (default 600)\n"
               "  --no-fork                 run scripts in this process (for debuggers)\n"
               "  --validate-only           decode and validate modules only: `module` passes when\n"
               "                            the module is valid, assert_invalid/assert_malformed\n"
               "                            when it is rejected; everything that runs code is\n"
               "                            skipped\n");
}

// 0 on success, or the exit status for a usage error.
int parse_args(int argc, char** argv, Options& o) {
  // The whole suite needs under 10^7 per invoke; 10^9 stops a runaway loop
  // within seconds.
  o.backend_opts.fuel = 1'000'000'000ull;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ww-spectest: %s needs %s\n", a.c_str(), what);
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (a == "--expected-failures") {
      const char* v = value("a file");
      if (!v) return 2;
      o.expected_failures = v;
    } else if (a == "--backend") {
      const char* v = value("a backend name");
      if (!v) return 2;
      o.backend = v;
    } else if (a == "--tier") {
      const char* v = value("interp, compiled or mixed");
      if (!v) return 2;
      const std::string t = v;
      if (t != "interp" && t != "compiled" && t != "mixed") {
        std::fprintf(stderr, "ww-spectest: unknown tier \"%s\" (there are: interp, compiled, mixed)\n", v);
        return 2;
      }
      o.backend_opts.compiled = t != "interp";
      o.mixed = t == "mixed";
    } else if (a == "--mixed-seed") {
      const char* v = value("a number");
      if (!v) return 2;
      o.mixed_seed = std::strtoull(v, nullptr, 10);
      if (!o.mixed_seed) {
        std::fprintf(stderr, "ww-spectest: --mixed-seed takes a number above 0\n");
        return 2;
      }
    } else if (a == "--cache-dir") {
      const char* v = value("a folder");
      if (!v) return 2;
      o.backend_opts.cache.dir = v;
    } else if (a == "--verbose" || a == "-v") {
      o.run.verbose = true;
    } else if (a == "--validate-only") {
      o.run.validate_only = true;
    } else if (a == "--gpu-layout") {
      const char* v = value("a layout");
      if (!v) return 2;
      auto l = ww::parse_layout(v);
      if (!l || *l == ww::MemoryLayout::Auto) {
        std::fprintf(stderr, "ww-spectest: bad value for --gpu-layout: %s (interleaved, contiguous, sparse)\n", v);
        return 2;
      }
      o.backend_opts.gpu_layout = *l;
    } else if (a == "--gpu-instances") {
      const char* v = value("a number");
      uint64_t n = 0;
      if (!v) return 2;
      if (!parse_uint(v, n) || n == 0 || n > 1'000'000) {
        std::fprintf(stderr, "ww-spectest: bad value for %s: %s (1 to 1000000)\n", a.c_str(), v);
        return 2;
      }
      o.backend_opts.gpu_instances = uint32_t(n);
    } else if (a == "--fuel" || a == "--timeout") {
      const char* v = value("a number");
      uint64_t n = 0;
      if (!v) return 2;
      if (!parse_uint(v, n) || (a == "--timeout" && (n == 0 || n > 86400))) {
        std::fprintf(stderr, "ww-spectest: bad value for %s: %s\n", a.c_str(), v);
        return 2;
      }
      if (a == "--fuel") o.backend_opts.fuel = n;
      else o.timeout_s = unsigned(n);
    } else if (a == "--no-fork") {
      o.fork = false;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "ww-spectest: unknown option %s\n", a.c_str());
      usage(stderr);
      return 2;
    } else {
      o.files.push_back(a);
    }
  }
  if (o.files.empty()) {
    usage(stderr);
    return 2;
  }
  if (o.backend != "cpu" && o.backend != "gpu") {
    std::fprintf(stderr, "ww-spectest: unknown backend \"%s\" (there are: cpu, gpu)\n", o.backend.c_str());
    return 2;
  }
  if (o.mixed && o.backend != "cpu") {
    std::fprintf(stderr, "ww-spectest: --tier mixed runs on the CPU backend only\n");
    return 2;
  }
  o.backend_opts.mixed_seed = o.mixed ? o.mixed_seed : 0;
  return 0;
}

std::unique_ptr<Backend> make_backend(const Options& o) {
  return o.backend == "gpu" ? make_gpu_backend(o.backend_opts) : make_cpu_backend(o.backend_opts);
}

// The exit status that tells ctest a test was skipped (SKIP_RETURN_CODE).
constexpr int kExitSkip = 77;

// A crash in a script's child prints the child's stack to stderr (frames
// as binary(+offset), for addr2line on the unstripped build), then dies of
// the same signal, which the parent reports.
void print_stack_on_crash() {
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
    std::signal(sig, [](int s) {
      void* frames[64];
      const int n = backtrace(frames, 64);
      const char head[] = "ww-spectest: crashed; stack:\n";
      (void)!write(2, head, sizeof head - 1);
      backtrace_symbols_fd(frames, n, 2);
      std::signal(s, SIG_DFL);
      raise(s);
    });
}

// Asks whether a GPU is usable from a child process when the scripts run in
// children: CUDA initialized in a parent is unusable in its forked
// children.
bool probe_gpu(bool fork_first, std::string& why) {
  if (!fork_first) return gpu_available(why);
  std::fflush(stdout);
  std::fflush(stderr);
  int fds[2];
  if (pipe(fds) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    why = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    std::string reason;
    std::string msg = gpu_available(reason) ? "1" : "0" + reason;
    ssize_t n = write(fds[1], msg.data(), msg.size());
    _exit(n == ssize_t(msg.size()) ? 0 : 3);
  }
  close(fds[1]);
  int st = 0;
  std::string text = drain_and_wait(fds[0], pid, st);
  if (text.empty()) {
    why = "the process probing the GPU failed";
    return false;
  }
  if (text[0] == '1') return true;
  why = text.substr(1);
  return false;
}

std::string script_name(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string f = slash == std::string::npos ? path : path.substr(slash + 1);
  if (f.ends_with(".json")) f = f.substr(0, f.size() - 5) + ".wast";
  return f;
}

FileReport lost_script(const std::string& path, const std::string& why) {
  FileReport r;
  r.file = script_name(path);
  r.script_error = true;
  r.kinds["script"].failed = 1;
  std::string m = path + ": " + why;
  std::printf("ERROR %s\n", m.c_str());
  r.unexpected.push_back(std::move(m));
  return r;
}

FileReport run_in_child(const std::string& path, const Options& o, const ExpectedFailures& xf) {
  std::fflush(stdout);
  std::fflush(stderr);
  // The child publishes the line it is on here; shared so it survives a crash.
  static volatile uint32_t* line_slot = [] {
    void* p = mmap(nullptr, sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<volatile uint32_t*>(p);
  }();
  if (line_slot) *line_slot = 0;
  int fds[2];
  if (pipe(fds) != 0) return lost_script(path, std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return lost_script(path, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    // SIGALRM's default action ends the child; the parent sees the signal.
    alarm(o.timeout_s);
    print_stack_on_crash();
    auto backend = make_backend(o);
    RunOptions run = o.run;
    run.current_line = line_slot;
    std::string s = report_to_json(run_script(path, *backend, xf, run));
    std::fflush(stdout);
    const char* p = s.data();
    size_t left = s.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(3);
      p += n;
      left -= size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  int st = 0;
  std::string text = drain_and_wait(fds[0], pid, st);
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    std::string at = line_slot && *line_slot ? " in the command on line " + std::to_string(*line_slot) : std::string();
    if (sig == SIGALRM) return lost_script(path, "timed out after " + std::to_string(o.timeout_s) + " s" + at);
    return lost_script(path, std::string("crashed: ") + strsignal(sig) + at);
  }
  FileReport r;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !report_from_json(text, r))
    return lost_script(
        path, "the child running it exited with status " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1));
  return r;
}

std::string tally_line(const Tally& t) {
  return std::to_string(t.passed) + " passed, " + std::to_string(t.failed) + " failed, " + std::to_string(t.skipped) +
         " skipped";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = parse_args(argc, argv, o)) return rc;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (o.backend == "gpu") {
    std::string why;
    if (!probe_gpu(o.fork, why)) {
      std::fprintf(stderr, "wasmwarp: no usable GPU: %s\n", why.c_str());
      return kExitSkip;
    }
  }

  ExpectedFailures xf;
  if (!o.expected_failures.empty()) {
    std::string err;
    if (!parse_expected_failures(o.expected_failures, xf, err)) {
      std::fprintf(stderr, "ww-spectest: %s\n", err.c_str());
      return 2;
    }
  }

  std::map<std::string, Tally> kinds;
  std::map<std::string, uint64_t> skip_reasons;
  std::map<std::string, uint64_t> ran_on_cpu;
  std::map<std::string, uint64_t> tiers;
  std::vector<std::string> unexpected;
  uint64_t expected_failures = 0, wording = 0;
  std::unique_ptr<Backend> shared_backend;

  for (const std::string& path : o.files) {
    FileReport r;
    if (o.fork) {
      r = run_in_child(path, o, xf);
    } else {
      if (!shared_backend) shared_backend = make_backend(o);
      r = run_script(path, *shared_backend, xf, o.run);
    }
    Tally t;
    for (const auto& [k, kt] : r.kinds) {
      kinds[k] += kt;
      t += kt;
    }
    for (const auto& [why, n] : r.skip_reasons) skip_reasons[why] += n;
    for (const auto& [why, n] : r.ran_on_cpu) ran_on_cpu[why] += n;
    for (const auto& [what, n] : r.tiers) {
      tiers[what] += n;
      // Under --tier compiled, whatever did not run compiled code is a
      // failure of the compiled tier, not something to pass quietly.
      if (what.starts_with("module not compiled") || what.starts_with("invoke: interpreter") ||
          what.starts_with("invoke: GPU interpreter"))
        unexpected.push_back(r.file + ": " + what + " (" + std::to_string(n) + ")");
    }
    expected_failures += r.expected_failures;
    wording += r.wording_differs;
    unexpected.insert(unexpected.end(), r.unexpected.begin(), r.unexpected.end());
    // A listed line that no command of a completed script has is stale: the
    // list would otherwise hide nothing and rot.
    if (!r.script_error) {
      auto it = xf.entries.find(r.file);
      if (it != xf.entries.end()) {
        for (const auto& [line, reason] : it->second) {
          if (r.lines_seen.count(line)) continue;
          std::string m =
              "stale expected failure: " + r.file + ":" + std::to_string(line) + " matches no command that ran";
          std::printf("%s\n", m.c_str());
          unexpected.push_back(std::move(m));
        }
      }
    }
    std::string extra;
    if (r.expected_failures) extra = " (" + std::to_string(r.expected_failures) + " expected)";
    std::printf("%s: %s%s\n", r.file.c_str(), tally_line(t).c_str(), extra.c_str());
  }

  Tally total;
  std::printf("\n%-24s %8s %8s %8s\n", "command", "passed", "failed", "skipped");
  for (const auto& [k, t] : kinds) {
    std::printf("%-24s %8llu %8llu %8llu\n", k.c_str(), (unsigned long long)t.passed, (unsigned long long)t.failed,
                (unsigned long long)t.skipped);
    total += t;
  }
  for (const auto& [why, n] : skip_reasons) std::printf("skipped %llu: %s\n", (unsigned long long)n, why.c_str());
  if (o.backend == "gpu") {
    std::printf(
        "gpu backend: every invoke of a module's own function ran on the GPU as %u "
        "instances that had to agree; instantiation (start functions, segments), "
        "linking and `get` ran on the CPU store\n",
        o.backend_opts.gpu_instances);
    uint64_t n = 0;
    for (const auto& [why, c] : ran_on_cpu) n += c;
    Tally cpu_run;
    for (const auto& [k, t] : kinds)
      if (k.ends_with(" (ran on CPU)")) cpu_run += t;
    std::printf(
        "ran on CPU (not GPU-runnable): %llu invokes (%llu passed, %llu failed), "
        "not counted as GPU passes\n",
        (unsigned long long)n, (unsigned long long)cpu_run.passed, (unsigned long long)cpu_run.failed);
    for (const auto& [why, c] : ran_on_cpu) std::printf("  %llu: %s\n", (unsigned long long)c, why.c_str());
  }
  if (o.backend_opts.compiled) {
    std::printf("%s (what ran each invoke, and modules that could not be compiled):\n",
                o.mixed ? "mixed tiers" : "compiled tier");
    for (const auto& [what, n] : tiers) std::printf("  %llu: %s\n", (unsigned long long)n, what.c_str());
  }
  if (wording)
    std::printf(
        "%llu rejected modules (assert_invalid/assert_malformed) had different wording"
        "%s\n",
        (unsigned long long)wording, o.run.verbose ? "" : " (--verbose lists them)");
  if (expected_failures)
    std::printf("%llu of the failures are listed in %s\n", (unsigned long long)expected_failures,
                o.expected_failures.c_str());
  if (!unexpected.empty())
    std::printf("%zu unexpected results (unlisted failures, unexpected passes, errors)\n", unexpected.size());
  std::printf("%llu passed, %llu failed, %llu skipped\n", (unsigned long long)total.passed,
              (unsigned long long)total.failed, (unsigned long long)total.skipped);
  return unexpected.empty() ? 0 : 1;
}
