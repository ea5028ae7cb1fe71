// The auto tier's compiles that a batch stopped waiting for (batch.h's
// compiles_running and exit_stopping_compiles are their public side).
#pragma once

#include <future>

namespace ww::batch {

// Keeps `compile` (a future of std::async whose task retires what it
// compiled) until it ends; the process's normal end waits for it.
void keep_compiling(std::future<void> compile);

}  // namespace ww::batch
