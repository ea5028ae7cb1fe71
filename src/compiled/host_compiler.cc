#include "compiled/host_compiler.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>

#include "common/parallel.h"
#include "common/text.h"

extern char** environ;

namespace ww::compiled {
namespace {

Error err(std::string m) { return make_error(kNoOffset, std::move(m)); }

// The compilers running now and their scratch directories, for a process
// that ends without waiting for them (stop_host_compilers).
struct Running {
  std::mutex mu;
  std::set<pid_t> pids;
  std::set<std::string> dirs;
  bool stopped = false;  // stop_host_compilers ran: nothing more starts
};
Running& running() {
  static Running* r = new Running;  // never destroyed: a compile may outlive main()
  return *r;
}

// The running compilers' process groups (each compiler leads its own, so
// that the processes it starts are in it), for a signal handler: atomics
// only, no lock, no allocation. A slot holds a group's id or 0; a
// compiler that finds no free slot is still stopped by
// stop_host_compilers (from /proc), only not from a signal handler.
constexpr size_t kGroupSlots = 256;
std::atomic<pid_t> g_groups[kGroupSlots];

void note_group(pid_t pid) {
  for (std::atomic<pid_t>& g : g_groups) {
    pid_t free = 0;
    if (g.compare_exchange_strong(free, pid)) return;
  }
}

void forget_group(pid_t pid) {
  for (std::atomic<pid_t>& g : g_groups) {
    pid_t mine = pid;
    if (g.compare_exchange_strong(mine, 0)) return;
  }
}

// A scratch directory removed with everything in it. Its name carries the
// process id, so a directory that a killed wasmwarp left behind is known
// by its dead owner and removed by the next compile.
class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    const std::string root = t && *t ? t : "/tmp";
    remove_stale(root);
    std::string tmpl = root + "/wasmwarp-cc-" + std::to_string(::getpid()) + "-XXXXXX";
    std::lock_guard<std::mutex> g(running().mu);
    if (!running().stopped && ::mkdtemp(tmpl.data())) {
      path_ = tmpl;
      running().dirs.insert(path_);
    }
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::lock_guard<std::mutex> g(running().mu);
    if (running().dirs.erase(path_)) remove_tree(path_);
  }
  bool ok() const { return !path_.empty(); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  static void remove_tree(const std::string& dir) {
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) ::unlink((dir + "/" + e->d_name).c_str());
      ::closedir(d);
    }
    ::rmdir(dir.c_str());
  }

 private:
  static void remove_stale(const std::string& root) {
    DIR* d = ::opendir(root.c_str());
    if (!d) return;
    const std::string prefix = "wasmwarp-cc-";
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(prefix, 0) != 0) continue;
      pid_t pid = pid_t(std::strtol(name.c_str() + prefix.size(), nullptr, 10));
      if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) remove_tree(root + "/" + name);
    }
    ::closedir(d);
  }

  std::string path_;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs argv with stdout and stderr into `log_path`; the exit status or a
// description of how it failed.
Status run_process(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  // A process group of its own: kill_host_compilers_from_signal ends the
  // compiler and what it started (cc1plus, as) with one kill each.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = 0;
  {
    // Under the lock, so that stop_host_compilers sees every compiler that
    // started, and none starts after it.
    std::lock_guard<std::mutex> g(running().mu);
    rc = running().stopped ? ECANCELED : ::posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
    if (rc == 0) {
      running().pids.insert(pid);
      note_group(pid);
    }
  }
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    if (rc == ENOENT) return err("host C++ compiler '" + argv[0] + "' not found");
    return err("cannot run host C++ compiler '" + argv[0] + "': " + std::strerror(rc));
  }
  int status = 0;
  int waited = 0;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  const int wait_errno = errno;
  {
    std::lock_guard<std::mutex> g(running().mu);
    running().pids.erase(pid);
    forget_group(pid);
  }
  if (waited < 0) return err(std::string("waiting for the host C++ compiler: ") + std::strerror(wait_errno));
  if (WIFSIGNALED(status)) return err("host C++ compiler was killed (signal " + std::to_string(WTERMSIG(status)) + ")");
  if (WEXITSTATUS(status) == 127) return err("host C++ compiler '" + argv[0] + "' not found");
  if (WEXITSTATUS(status) != 0) {
    std::string line = first_error_line(read_text(log_path));
    return err("host C++ compiler failed: " + (line.empty() ? "(no output)" : line));
  }
  return Status::Ok();
}

}  // namespace

namespace {

// `name` as execvp would find it: itself when it has a slash, else the
// first executable match along $PATH; "" when there is none.
std::string resolve_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

}  // namespace

Result<HostCompiler> find_host_compiler() {
  // Asked once per process: `--version` of the same compiler is stable.
  static std::mutex mu;
  static std::string cached_path;
  static Result<HostCompiler> cached = err("unset");
  const char* env = std::getenv("CXX");
#ifdef WW_HOST_CXX
  std::string path = env && *env ? env : WW_HOST_CXX;
#else
  std::string path = env && *env ? env : "c++";
#endif
  std::lock_guard<std::mutex> g(mu);
  if (cached_path == path) return cached;
  cached_path = path;
  std::string file = resolve_in_path(path);
  struct stat st;
  char* real = file.empty() ? nullptr : realpath(file.c_str(), nullptr);
  if (!real || stat(real, &st) != 0 || !(st.st_mode & S_IXUSR)) {
    std::free(real);
    return cached = err("host C++ compiler '" + path +
                        "' not found (set CXX to a C++ compiler, or use the interpreter tier)");
  }
  HostCompiler hc;
  hc.path = path;
  hc.identity = std::string(real) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                std::to_string(st.st_mtim.tv_nsec);
  std::free(real);
  return cached = hc;
}

namespace {

// The instructions beyond x86-64's baseline that this CPU has and that
// generated code may use: BMI's rotates and shifts that leave the flags
// alone make hash-wasm's sha256 faster per thread
// (bench/hashwasm/run-cpu.sh shows it). Not AVX-512: -march=native made it
// much slower on the same machine.
std::vector<std::string> cpu_feature_flags() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool lzcnt = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 5));
  if (lzcnt && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
      __builtin_cpu_supports("popcnt"))
    return {"-mavx2", "-mbmi", "-mbmi2", "-mlzcnt", "-mpopcnt"};
#endif
  return {};
}

}  // namespace

const std::vector<std::string>& host_compile_flags() {
  // -fno-math-errno changes no result (wasm has no errno) but lets sqrt be
  // one instruction; -w: generated code is not the user's to warn about.
  // No -mfma: with -ffp-contract=off it would change nothing anyway.
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> f = {"-std=c++20",
                                  "-O2",
                                  "-fPIC",
                                  "-ffp-contract=off",
                                  "-fno-math-errno",
                                  "-fvisibility=hidden",
                                  "-fno-if-conversion",
                                  "-fno-if-conversion2",
                                  "-w"};
    for (std::string& m : cpu_feature_flags()) f.push_back(std::move(m));
    return f;
  }();
  return flags;
}

const std::string& host_compile_flags_key() {
  static const std::string key = [] {
    std::string k;
    for (const std::string& f : host_compile_flags()) k += f + " ";
    return k;
  }();
  return key;
}

Result<std::vector<uint8_t>> compile_shared_object(const HostCompiler& cc, const std::vector<std::string>& sources,
                                                   bool quick) {
  if (sources.empty()) return err("nothing to compile");
  TempDir dir;
  if (!dir.ok()) return err(std::string("cannot create a temporary directory: ") + std::strerror(errno));
  const std::string so = dir.file("module.so");
  std::vector<std::string> units(sources.size()), objects(sources.size()), logs(sources.size());
  std::vector<Status> status(sources.size(), Status::Ok());
  for (size_t i = 0; i < sources.size(); ++i) {
    units[i] = dir.file("unit" + std::to_string(i) + ".cc");
    std::ofstream f(units[i], std::ios::binary);
    f << sources[i];
    if (!f.flush()) return err("cannot write " + units[i] + ": " + std::strerror(errno));
    objects[i] = dir.file("unit" + std::to_string(i) + ".o");
    logs[i] = dir.file("unit" + std::to_string(i) + ".log");
  }
  // One process per unit, as many at a time as there are cores.
  parallel_for(sources.size(), [&](size_t i) {
    std::vector<std::string> argv{cc.path};
    for (const std::string& f : host_compile_flags()) argv.push_back(quick && f == "-O2" ? "-O1" : f);
    for (const std::string& a :
         {std::string("-c"), std::string("-o"), objects[i], std::string("-x"), std::string("c++"), units[i]})
      argv.push_back(a);
    status[i] = run_process(argv, logs[i]);
  });
  for (const Status& s : status) WW_TRY(s);
  std::vector<std::string> link{cc.path, "-shared", "-o", so};
  for (const std::string& o : objects) link.push_back(o);
  const std::string link_log = dir.file("link.log");
  WW_TRY(run_process(link, link_log));
  std::string bytes = read_text(so);
  if (bytes.empty()) return err("host C++ compiler produced no shared object");
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

namespace {

// Every process below `root` (g++ runs cc1plus and as as its children),
// from /proc: the compiler's driver passes no signal on to them.
std::vector<pid_t> descendants(pid_t root) {
  std::vector<std::pair<pid_t, pid_t>> parent_of;  // (pid, ppid)
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      const pid_t pid = pid_t(std::strtol(e->d_name, nullptr, 10));
      if (pid <= 0) continue;
      std::ifstream f("/proc/" + std::string(e->d_name) + "/stat");
      std::string line;
      std::getline(f, line);
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 1));
      std::string state;
      long ppid = 0;
      if (rest >> state >> ppid) parent_of.push_back({pid, pid_t(ppid)});
    }
    ::closedir(d);
  }
  std::vector<pid_t> out{root};
  for (size_t k = 0; k < out.size(); ++k)
    for (const auto& [pid, ppid] : parent_of)
      if (ppid == out[k]) out.push_back(pid);
  return out;
}

}  // namespace

void stop_host_compilers() {
  Running& r = running();
  std::lock_guard<std::mutex> g(r.mu);
  r.stopped = true;
  // Found before any is killed: a child whose parent died first would
  // belong to init, out of sight.
  std::vector<pid_t> doomed;
  for (pid_t pid : r.pids)
    for (pid_t p : descendants(pid)) doomed.push_back(p);
  for (pid_t p : doomed) ::kill(p, SIGKILL);
  for (pid_t pid : r.pids) ::kill(-pid, SIGKILL);
  for (const std::string& dir : r.dirs) TempDir::remove_tree(dir);
  r.dirs.clear();
}

void kill_host_compilers_from_signal() {
  for (std::atomic<pid_t>& g : g_groups)
    if (const pid_t pid = g.load(); pid > 0) ::kill(-pid, SIGKILL);
}

StopCompilersOnCancel::StopCompilersOnCancel(const std::atomic<bool>* cancel) {
  if (!cancel) return;
  watch_ = std::thread([this, cancel] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!done_) {
      if (cancel->load()) {
        stop_host_compilers();
        stopped_ = true;
        return;
      }
      cv_.wait_for(lk, std::chrono::milliseconds(50));
    }
  });
}

StopCompilersOnCancel::~StopCompilersOnCancel() {
  if (!watch_.joinable()) return;
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
  }
  cv_.notify_all();
  watch_.join();
  if (stopped_) {
    std::lock_guard<std::mutex> g(running().mu);
    running().stopped = false;
  }
}

}  // namespace ww::compiled
