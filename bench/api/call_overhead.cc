// The cost of one call of the public C++ API (wasmwarp::Engine::call) on
// 1, 1K and 1M instances of a trivial export, beside the same calls from
// Python (call_overhead.py): what an embedder pays per call, and per
// instance, around the instances' own work.
//   usage: call_overhead MODULE.wasm [cpu|gpu] [REPS]
// Prints "instances seconds_per_call" rows, the median of REPS calls.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "wasmwarp/wasmwarp.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: call_overhead MODULE.wasm [cpu|gpu] [REPS]\n");
    return 2;
  }
  auto m = wasmwarp::Module::from_file(argv[1]);
  if (!m) {
    std::fprintf(stderr, "call_overhead: %s\n", m.error().message.c_str());
    return 1;
  }
  wasmwarp::EngineOptions o;
  o.backend = argc > 2 && std::string(argv[2]) == "gpu" ? wasmwarp::Backend::Gpu : wasmwarp::Backend::Cpu;
  o.tier = wasmwarp::Tier::Interpreter;
  const wasmwarp::Engine engine(o);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  for (uint64_t n : {uint64_t(1), uint64_t(1000), uint64_t(1000000)}) {
    std::vector<int32_t> x(n);
    for (uint64_t i = 0; i < n; ++i) x[i] = int32_t(i);
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      auto res = engine.call(*m, "inc", n, {wasmwarp::Arg::column(std::span<const int32_t>(x))});
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!res || res->i32(n - 1) != int32_t(n)) {
        std::fprintf(stderr, "call_overhead: wrong answer or %s\n", res ? "" : res.error().message.c_str());
        return 1;
      }
      times.push_back(s);
    }
    std::sort(times.begin(), times.end());
    std::printf("%llu %.6f\n", (unsigned long long)n, times[times.size() / 2]);
  }
  return 0;
}
