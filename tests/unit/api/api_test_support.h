// What the public API's tests share. Like the tests, this includes nothing
// of src/.
#pragma once

#include "wasmwarp/wasmwarp.h"

// An engine on `b` with two CPU workers (the development VM's cores).
inline wasmwarp::Engine engine_on(wasmwarp::Backend b) {
  wasmwarp::EngineOptions o;
  o.backend = b;
  o.threads = 2;
  return wasmwarp::Engine(o);
}

inline wasmwarp::Engine cpu() { return engine_on(wasmwarp::Backend::Cpu); }
