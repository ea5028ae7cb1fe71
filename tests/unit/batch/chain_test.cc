// Chained calls (BatchSpec::then): an init, a step repeated k times and a
// read-out on the same instances give what the same calls give one after
// another on one instance, on every backend and tier, in one launch per
// wave or one per call; a trap stops its instance for the rest of the
// chain; fuel is per call. The CPU cases run everywhere (CI); the GPU ones
// where a GPU is present.
#include <gtest/gtest.h>

#include "batch/batch.h"
#include "exec/gpu/gpu_backend.h"
#include "runtime/runtime.h"
#include "walker_module.h"

namespace ww::batch {
namespace {

using test::kStepFunc;
const std::vector<uint8_t>& kModule = test::kWalker;

struct Way {
  Backend backend;
  Tier tier;
  bool launch_per_call;
};

std::string name_of(const Way& w) {
  return std::string(backend_name(w.backend)) + "/" + tier_name(w.tier) + (w.launch_per_call ? "/per-call" : "");
}

// init(i), then step(2) k times, then result(): (i + 2k, k), except that
// an instance whose g is 3 when a step starts traps there.
BatchSpec chain_spec(uint64_t n, uint64_t k, const Way& way) {
  auto cm = compile_module(kModule);
  EXPECT_TRUE(cm.ok());
  BatchSpec s;
  s.module = *cm;
  s.export_name = "init";
  s.instances = n;
  s.args.resize(1);
  s.args[0].kind = ArgSource::Index;
  BatchSpec::ThenCall step{"step", k, std::vector<ArgSource>(1)};
  step.args[0].value = Value::i64(2);
  s.then = {step, BatchSpec::ThenCall{"result", 1, {}}};
  s.backend = way.backend;
  s.tier = way.tier;
  s.gpu.launch_per_call = way.launch_per_call;
  s.threads = 2;
  s.cache.dir = WW_BINARY_DIR "/test-code-cache";
  return s;
}

void expect_chain_results(const BatchResult& r, uint64_t n, uint64_t k, const std::string& way) {
  ASSERT_EQ(r.type.results.size(), 2u) << way;
  for (uint64_t i = 0; i < n; ++i) {
    SCOPED_TRACE(way + ", instance " + std::to_string(i));
    if (i == 1 || i == 3) {
      EXPECT_EQ(r.traps[i], uint8_t(TrapCode::IntegerDivideByZero));
      EXPECT_EQ(r.trap_func[i], kStepFunc);
      continue;
    }
    ASSERT_EQ(r.traps[i], 0);
    EXPECT_EQ(r.result_bits(i, 0), i + 2 * k);
    EXPECT_EQ(r.result_bits(i, 1), k);
  }
}

std::vector<Way> ways() {
  std::vector<Way> w = {{Backend::Cpu, Tier::Interp, false}, {Backend::Cpu, Tier::Compiled, false}};
  if (gpu::probe_device().available)
    for (Tier t : {Tier::Interp, Tier::Compiled})
      for (bool per_call : {false, true}) w.push_back({Backend::Gpu, t, per_call});
  return w;
}

TEST(Chain, InitStepsResultOnEveryBackendAndTier) {
  const uint64_t n = 1000, k = 100;
  for (const Way& way : ways()) {
    auto r = run(chain_spec(n, k, way));
    ASSERT_TRUE(r.ok()) << name_of(way) << ": " << r.error().message;
    EXPECT_EQ(r->backend, way.backend) << name_of(way);
    ASSERT_FALSE(r->segments.empty());
    EXPECT_EQ(r->segments.back().tier, way.tier) << name_of(way) << ": " << r->compile.fallback;
    expect_chain_results(*r, n, k, name_of(way));
  }
}

// Each call of a chain has the fuel of a call of its own: three spins of
// 50 back-edges run with fuel 80, and not with fuel 40.
TEST(Chain, FuelIsPerCall) {
  for (const Way& way : ways()) {
    for (uint64_t fuel : {80u, 40u}) {
      BatchSpec s = chain_spec(64, 1, way);
      s.then.clear();
      BatchSpec::ThenCall spin{"spin", 3, std::vector<ArgSource>(1)};
      spin.args[0].value = Value::i32(50);
      s.then = {spin};
      s.fuel = fuel;
      auto r = run(s);
      ASSERT_TRUE(r.ok()) << name_of(way) << ": " << r.error().message;
      for (uint64_t i = 0; i < 64; ++i)
        ASSERT_EQ(r->traps[i], fuel == 80 ? 0 : uint8_t(TrapCode::FuelExhausted)) << name_of(way) << " fuel " << fuel;
    }
  }
}

TEST(Chain, BadChainsAreErrors) {
  const Way cpu{Backend::Cpu, Tier::Interp, false};
  BatchSpec s = chain_spec(4, 1, cpu);
  s.then[0].export_name = "nope";
  auto r = run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown export 'nope'"), std::string::npos) << r.error().message;

  s = chain_spec(4, 1, cpu);
  s.then[0].repeat = 0;
  r = run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("repeated 0 times"), std::string::npos) << r.error().message;

  s = chain_spec(4, 1, cpu);
  s.then[0].args.clear();
  r = run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("takes 1 argument(s)"), std::string::npos) << r.error().message;

  s = chain_spec(4, 1, cpu);
  const std::vector<uint64_t> ones(4, 1);
  s.then[0].args[0].kind = ArgSource::Column;
  s.then[0].args[0].column = ones;
  r = run(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("constants or @index"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ww::batch
