// A parameter sweep through wasmwarp's C++ API: calls EXPORT(p) of a
// module for p = 0 .. N-1, one instance per value, and prints each
// instance's result (or its trap), then a summary line.
//   usage: sweep MODULE.wasm EXPORT N [cpu|gpu]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "wasmwarp/wasmwarp.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sweep MODULE.wasm EXPORT N [cpu|gpu]\n");
    return 2;
  }
  auto module = wasmwarp::Module::from_file(argv[1]);
  if (!module) {
    std::fprintf(stderr, "sweep: %s\n", module.error().message.c_str());
    return 1;
  }
  const uint64_t n = std::strtoull(argv[3], nullptr, 10);
  wasmwarp::EngineOptions options;
  if (argc > 4) options.backend = std::string(argv[4]) == "gpu" ? wasmwarp::Backend::Gpu : wasmwarp::Backend::Cpu;
  auto r = wasmwarp::Engine(options).call(*module, argv[2], n, {wasmwarp::Arg::index()});
  if (!r) {
    std::fprintf(stderr, "sweep: %s\n", r.error().message.c_str());
    return 1;
  }
  for (uint64_t i = 0; i < r->instances(); ++i) {
    if (r->trapped(i)) {
      std::printf("%llu trap: %s\n", (unsigned long long)i, r->trap_message(i).c_str());
    } else if (!r->result_types().empty()) {
      const bool i32 = r->result_types()[0] == wasmwarp::ValueType::I32;
      std::printf("%llu %lld\n", (unsigned long long)i, i32 ? (long long)r->i32(i) : (long long)r->i64(i));
    }
  }
  std::printf("%llu instances, %llu trapped, on %s\n", (unsigned long long)r->instances(),
              (unsigned long long)r->trap_count(), r->device().c_str());
  return 0;
}
