// Ctrl-C and SIGTERM during `wasmwarp run`: the first signal asks the batch
// to stop (finished instances are written, the rest marked "not finished:
// interrupted"); a second one exits at once. Either way no temporary output
// file (*.tmp-XXXXXX) is left behind: AtomicFile registers its temporary
// name here while it is open, and the handler unlinks what is registered.
#pragma once

#include <atomic>
#include <string>

namespace ww::cli {

// Installs the handlers for the life of the object; cancel() is the flag
// the batch watches, signal_number() the first signal that arrived (0 if
// none).
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  const std::atomic<bool>* cancel() const;
  int signal_number() const;
};

// Temporary files removed if the process dies by SIGINT, SIGTERM or SIGHUP
// (SIGKILL cannot be caught: a later run cannot tell such files from another
// process's, so they stay). Returns a slot for unregister_temp_file, or -1
// when the table is full (the file is then simply not removed on a signal).
int register_temp_file(const std::string& path);
void unregister_temp_file(int slot);

}  // namespace ww::cli
