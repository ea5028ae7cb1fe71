// The chain benchmark's API side (bench/chain/run.sh): init, STEPS steps and
// a read-out on N instances through the public C++ API, three ways:
//   chain      Engine::chain: the state stays where it runs (one GPU launch)
//   per-call   the same with one GPU launch per call (GPU only)
//   resident   Engine::instances, then one Instances::call per step: the
//              state stays where it runs, a call (a launch) per step;
//              SEPARATE steps are timed
//   separate   one Engine::call per step without residency: the state
//              (24 bytes at state_ptr) goes out after each call and back in
//              before the next; SEPARATE steps are run and timed, and the
//              chain's own check runs that many steps too, so both must
//              give the same bits.
// Prints "name seconds" lines, then "check ok" or "check FAILED ...".
//   usage: chain_api MODULE.wasm cpu|gpu N STEPS SEPARATE
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wasmwarp/wasmwarp.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kDt = 0.01;
constexpr uint64_t kStateBytes = 24;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<wasmwarp::Call> chain_of(uint64_t steps) {
  return {{"init", {wasmwarp::Arg::index()}, 1}, {"step", {wasmwarp::Arg::f64(kDt)}, steps}, {"result", {}, 1}};
}

bool failed(const wasmwarp::Expected<wasmwarp::CallResult>& r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "chain_api: %s: %s\n", what, r.error().message.c_str());
    return true;
  }
  if (r->trap_count()) {
    std::fprintf(stderr, "chain_api: %s: %llu instance(s) trapped\n", what, (unsigned long long)r->trap_count());
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: chain_api MODULE.wasm cpu|gpu N STEPS SEPARATE\n");
    return 2;
  }
  auto m = wasmwarp::Module::from_file(argv[1]);
  if (!m) {
    std::fprintf(stderr, "chain_api: %s\n", m.error().message.c_str());
    return 2;
  }
  const bool gpu = std::string(argv[2]) == "gpu";
  const uint64_t n = std::strtoull(argv[3], nullptr, 10), steps = std::strtoull(argv[4], nullptr, 10),
                 separate = std::strtoull(argv[5], nullptr, 10);
  wasmwarp::Engine engine(
      {.backend = gpu ? wasmwarp::Backend::Gpu : wasmwarp::Backend::Cpu, .tier = wasmwarp::Tier::Compiled});
  // Compiles (or loads) the code for the run below.
  if (failed(engine.chain(*m, 1, chain_of(1)), "warm-up")) return 1;

  auto t = Clock::now();
  auto chained = engine.chain(*m, n, chain_of(steps));
  const double chain_s = since(t);
  if (failed(chained, "chain")) return 1;
  std::printf("chain %.6f\n", chain_s);
  if (gpu) {
    wasmwarp::CallOptions o;
    o.gpu_launch_per_call = true;
    t = Clock::now();
    auto per_call = engine.chain(*m, n, chain_of(steps), o);
    const double per_call_s = since(t);
    if (failed(per_call, "per-call chain")) return 1;
    std::printf("per-call %.6f\n", per_call_s);
    for (uint64_t i = 0; i < n; ++i)
      if (per_call->bits(i) != chained->bits(i)) {
        std::printf("check FAILED: per-call launches differ at instance %llu\n", (unsigned long long)i);
        return 1;
      }
  }

  // Resident instances, a call per step: the state stays where it runs,
  // each step is a call (and a launch) of its own.
  {
    auto inst = engine.instances(*m, n);
    if (!inst) {
      std::fprintf(stderr, "chain_api: instances: %s\n", inst.error().message.c_str());
      return 1;
    }
    if (failed(inst->call("init", {wasmwarp::Arg::index()}), "resident init")) return 1;
    t = Clock::now();
    for (uint64_t k = 0; k < separate; ++k)
      if (failed(inst->call("step", {wasmwarp::Arg::f64(kDt)}), "resident step")) return 1;
    const double resident_step_s = separate ? since(t) / double(separate) : 0;
    auto got = inst->call("result", {});
    if (failed(got, "resident result")) return 1;
    std::printf("resident-per-step %.6f\n", resident_step_s);
    auto check = engine.chain(*m, n, chain_of(separate));
    if (failed(check, "check chain")) return 1;
    for (uint64_t i = 0; i < n; ++i)
      if (check->bits(i) != got->bits(i)) {
        std::printf("check FAILED: resident calls differ from the chain at instance %llu\n", (unsigned long long)i);
        return 1;
      }
  }

  // Without residency: each step a call of its own on fresh instances,
  // the state carried through the host.
  wasmwarp::CallOptions out;
  out.memory_out = {{0, kStateBytes}};
  auto addr = engine.call(*m, "state_ptr", 1, {});
  if (failed(addr, "state_ptr")) return 1;
  const uint64_t state_at = uint32_t(addr->i32(0));
  out.memory_out[0].address = state_at;
  t = Clock::now();
  auto r = engine.call(*m, "init", n, {wasmwarp::Arg::index()}, out);
  if (failed(r, "init")) return 1;
  std::vector<uint8_t> state(r->memory_out(0).begin(), r->memory_out(0).end());
  const double init_s = since(t);
  t = Clock::now();
  for (uint64_t k = 0; k < separate; ++k) {
    wasmwarp::CallOptions io = out;
    io.memory_in = {{state_at, kStateBytes, state}};
    r = engine.call(*m, "step", n, {wasmwarp::Arg::f64(kDt)}, io);
    if (failed(r, "step")) return 1;
    state.assign(r->memory_out(0).begin(), r->memory_out(0).end());
  }
  const double per_step_s = separate ? since(t) / double(separate) : 0;
  wasmwarp::CallOptions in;
  in.memory_in = {{state_at, kStateBytes, state}};
  auto last = engine.call(*m, "result", n, {}, in);
  if (failed(last, "result")) return 1;
  std::printf("separate-init %.6f\nseparate-per-step %.6f\n", init_s, per_step_s);

  // The same number of steps as one chain must give the same bits.
  auto check = engine.chain(*m, n, chain_of(separate));
  if (failed(check, "check chain")) return 1;
  for (uint64_t i = 0; i < n; ++i)
    if (check->bits(i) != last->bits(i)) {
      std::printf("check FAILED: separate calls differ from the chain at instance %llu\n", (unsigned long long)i);
      return 1;
    }
  std::printf("check ok\n");
  return 0;
}
