// The auto tier's compiles that a batch stopped waiting for (batch.h's
// compiles_running and exit_stopping_compiles are their public side).
#pragma once

#include <future>
#include <memory>

#include "batch/batch.h"
#include "compiled/tier_up.h"

namespace ww::batch {

// Keeps `compile` (a future of std::async whose task retires what it
// compiled) until it ends; the process's normal end waits for it.
void keep_compiling(std::future<void> compile);

// Tier-up whose compile threads are kept so (the auto tier of a single
// WASI run, a small CPU batch, a large module).
Result<std::shared_ptr<compiled::TieredCode>> start_kept_tier_up(const compiled::Request& req);

// What tier-up did so far, for a batch's or a run's report.
CompileReport::TierUp tier_up_report(const compiled::TieredCode& code);

}  // namespace ww::batch
