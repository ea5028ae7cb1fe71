// What the public API's tests share. Like the tests, this includes nothing
// of src/.
#pragma once

#include "wasmwarp/wasmwarp.h"

// Options for `b` and tier `t` with two CPU workers (the development VM's
// cores), and an engine of them.
inline wasmwarp::EngineOptions options_on(wasmwarp::Backend b, wasmwarp::Tier t = wasmwarp::Tier::Auto) {
  wasmwarp::EngineOptions o;
  o.backend = b;
  o.tier = t;
  o.threads = 2;
  return o;
}
inline wasmwarp::Engine engine_on(wasmwarp::Backend b, wasmwarp::Tier t = wasmwarp::Tier::Auto) {
  return wasmwarp::Engine(options_on(b, t));
}

inline wasmwarp::Engine cpu() { return engine_on(wasmwarp::Backend::Cpu); }
