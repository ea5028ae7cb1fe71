#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "wasmwarp/wasmwarp.h"

namespace ww::cli {
namespace {

// Everything the handler touches is lock-free and preallocated: a signal
// can arrive in the middle of malloc or of a registration.
constexpr int kMaxTemp = 64;
constexpr size_t kMaxPath = 4096;
char g_temp_paths[kMaxTemp][kMaxPath];
std::atomic<bool> g_temp_used[kMaxTemp];
std::atomic<bool> g_cancel{false};
std::atomic<int> g_signal{0};
std::atomic<int> g_scopes{0};

void remove_temp_files() {
  for (int k = 0; k < kMaxTemp; ++k)
    if (g_temp_used[k].load()) unlink(g_temp_paths[k]);
}

void on_signal(int sig) {
  int expected = 0;
  if (g_scopes.load() > 0 && g_signal.compare_exchange_strong(expected, sig)) {
    g_cancel.store(true);
    static const char kMsg[] = "\nwasmwarp: stopping (signal again to quit at once)\n";
    ssize_t ignored = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    (void)ignored;
    return;
  }
  remove_temp_files();
  // A host compiler (the compiled tier's, or a background compile the
  // batch no longer waits for) would outlive the process.
  wasmwarp::kill_compilers_from_signal_handler();
  // The default action gives the parent the usual "killed by signal" status.
  signal(sig, SIG_DFL);
  raise(sig);
}

struct sigaction g_old[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

InterruptScope::InterruptScope() {
  g_cancel.store(false);
  g_signal.store(0);
  if (g_scopes.fetch_add(1) > 0) return;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int k = 0; k < 3; ++k) {
    sigaction(kSignals[k], &sa, &g_old[k]);
    // A signal ignored at start (nohup, a shell's background job) stays so.
    if (g_old[k].sa_handler == SIG_IGN) sigaction(kSignals[k], &g_old[k], nullptr);
  }
}

InterruptScope::~InterruptScope() {
  if (g_scopes.fetch_sub(1) > 1) return;
  for (int k = 0; k < 3; ++k) sigaction(kSignals[k], &g_old[k], nullptr);
}

const std::atomic<bool>* InterruptScope::cancel() const { return &g_cancel; }
int InterruptScope::signal_number() const { return g_signal.load(); }

int register_temp_file(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  for (int k = 0; k < kMaxTemp; ++k) {
    if (g_temp_used[k].load()) continue;
    std::memcpy(g_temp_paths[k], path.c_str(), path.size() + 1);
    // Marked used only once the path is complete: the handler never reads
    // a half-written name.
    bool expected = false;
    if (g_temp_used[k].compare_exchange_strong(expected, true)) return k;
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot >= 0 && slot < kMaxTemp) g_temp_used[slot].store(false);
}

}  // namespace ww::cli
