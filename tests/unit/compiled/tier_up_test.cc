// Mixed tiers and tier-up on the CPU: a module's functions split between
// compiled code (a unit: Request::functions) and the interpreter, calling
// each other both ways, give the interpreter's results, traps included;
// tier-up compiles hot functions while the program runs, takes them up at
// their next call, records its units and loads them from the cache on the
// next start.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiled/compiled_tier.h"
#include "compiled/host_compiler.h"
#include "compiled/tier_up.h"
#include "runtime/runtime.h"
#include "scratch.h"
#include "store/store.h"

namespace ww {
namespace {

// mixed.wat (defined functions: 0 $even, 1 $odd, 2 $sq, 3 sum, 4 even,
// 5 calls, 6 $boom, 7 via):
//   (module
//     (type $ii (func (param i32) (result i32)))
//     (table 3 funcref)
//     (elem (i32.const 0) $even $odd $sq)
//     (global $calls (mut i32) (i32.const 0))
//     (memory 1)
//     (func $even (type $ii)
//       (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
//       (if (result i32) (i32.eqz (local.get 0))
//         (then (i32.const 1))
//         (else (call $odd (i32.sub (local.get 0) (i32.const 1))))))
//     (func $odd (type $ii)
//       (if (result i32) (i32.eqz (local.get 0))
//         (then (i32.const 0))
//         (else (call_indirect (type $ii) (i32.sub (local.get 0) (i32.const 1)) (i32.const 0)))))
//     (func $sq (type $ii) (i32.mul (local.get 0) (local.get 0)))
//     (func (export "sum") (param $n i32) (result i32) (local $i i32) (local $s i32)
//       (block $done
//         (loop $next
//           (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
//           (local.set $s (i32.add (local.get $s)
//             (call_indirect (type $ii) (local.get $i) (i32.const 2))))
//           (i32.store (i32.shl (i32.and (local.get $i) (i32.const 1023)) (i32.const 2)) (local.get $s))
//           (local.set $i (i32.add (local.get $i) (i32.const 1)))
//           (br $next)))
//       (i32.add (local.get $s) (i32.load (i32.const 8))))
//     (func (export "even") (param i32) (result i32) (call $even (local.get 0)))
//     (func (export "calls") (result i32) (global.get $calls))
//     (func $boom (param i32) (result i32) (i32.div_u (i32.const 1) (local.get 0)))
//     (func (export "via") (param i32) (result i32) (i32.add (call $boom (local.get 0)) (i32.const 1))))
const std::vector<uint8_t> kMixed = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01,
    0x7f, 0x03, 0x09, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x04, 0x04, 0x01, 0x70, 0x00, 0x03, 0x05,
    0x03, 0x01, 0x00, 0x01, 0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x07, 0x1c, 0x04, 0x03, 0x73, 0x75, 0x6d,
    0x00, 0x03, 0x04, 0x65, 0x76, 0x65, 0x6e, 0x00, 0x04, 0x05, 0x63, 0x61, 0x6c, 0x6c, 0x73, 0x00, 0x05, 0x03, 0x76,
    0x69, 0x61, 0x00, 0x07, 0x09, 0x09, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x03, 0x00, 0x01, 0x02, 0x0a, 0x94, 0x01, 0x08,
    0x19, 0x00, 0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x20, 0x00,
    0x41, 0x01, 0x6b, 0x10, 0x01, 0x0b, 0x0b, 0x15, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x00, 0x05, 0x20, 0x00,
    0x41, 0x01, 0x6b, 0x41, 0x00, 0x11, 0x00, 0x00, 0x0b, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x00, 0x6c, 0x0b, 0x3c,
    0x01, 0x02, 0x7f, 0x02, 0x40, 0x03, 0x40, 0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01, 0x20, 0x02, 0x20, 0x01, 0x41,
    0x02, 0x11, 0x00, 0x00, 0x6a, 0x21, 0x02, 0x20, 0x01, 0x41, 0xff, 0x07, 0x71, 0x41, 0x02, 0x74, 0x20, 0x02, 0x36,
    0x02, 0x00, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x02, 0x41, 0x08, 0x28, 0x02,
    0x00, 0x6a, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x10, 0x00, 0x0b, 0x04, 0x00, 0x23, 0x00, 0x0b, 0x07, 0x00, 0x41, 0x01,
    0x20, 0x00, 0x6e, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x10, 0x06, 0x41, 0x01, 0x6a, 0x0b,
};

std::shared_ptr<const CompiledModule> mixed_module() {
  auto cm = compile_module(kMixed);
  EXPECT_TRUE(cm.ok()) << cm.error().to_string();
  return cm.ok() ? *cm : nullptr;
}

// One call's outcome: its trap, or its result.
struct Outcome {
  TrapCode trap = TrapCode::None;
  uint64_t value = 0;
  bool operator==(const Outcome&) const = default;
};
void PrintTo(const Outcome& o, std::ostream* os) { *os << "{trap " << int(o.trap) << ", " << o.value << "}"; }

// The calls every split must answer as the interpreter does: recursion
// through a direct call and a table, a loop calling through a table and
// writing memory, a global written by one function and read by another,
// a trap under a caller, and recursion past the call depth.
std::vector<Outcome> run_calls(const std::shared_ptr<const CompiledModule>& cm,
                               std::shared_ptr<const NativeCode> native) {
  Store store;
  if (native) store.impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return native; };
  auto inst = store.instantiate(cm, {});
  EXPECT_EQ(inst.index(), 0u);
  if (inst.index() != 0) return {};
  const uint32_t id = std::get<0>(inst);
  std::vector<Outcome> out;
  auto call = [&](const char* name, std::vector<Value> args) {
    InvokeResult r = store.invoke(store.get_export(id, name)->addr, args);
    out.push_back({r.trap, r.ok() && !r.results.empty() ? r.results[0].bits : 0});
  };
  call("even", {Value::i32(10)});
  call("even", {Value::i32(7)});
  call("calls", {});
  call("sum", {Value::i32(3000)});
  call("via", {Value::i32(3)});
  call("via", {Value::i32(0)});
  call("even", {Value::i32(1000000)});  // past the call depth
  // How deep it got is the implementation's: calls that cross between the
  // tiers use the native stack too and may end sooner (cpu_native.cc).
  call("calls", {});
  return out;
}

std::vector<uint32_t> defs_where(bool (*pick)(uint32_t)) {
  std::vector<uint32_t> v;
  for (uint32_t d = 0; d < 8; ++d)
    if (pick(d)) v.push_back(d);
  return v;
}

TEST(MixedTiers, EverySplitGivesTheInterpretersResults) {
  if (!compiled::find_host_compiler().ok()) GTEST_SKIP() << "no host C++ compiler";
  auto cm = mixed_module();
  ASSERT_TRUE(cm);
  const std::vector<Outcome> want = run_calls(cm, nullptr);
  ASSERT_EQ(want.size(), 8u);
  EXPECT_EQ(want[0], (Outcome{TrapCode::None, 1}));
  EXPECT_EQ(want[5].trap, TrapCode::IntegerDivideByZero);
  EXPECT_EQ(want[6].trap, TrapCode::CallStackExhausted);

  std::vector<std::vector<uint32_t>> splits = {
      defs_where([](uint32_t d) { return d % 2 == 0; }),  // $even compiled, $odd interpreted
      defs_where([](uint32_t d) { return d % 2 == 1; }),
      {0},     // only $even: every call of the recursion crosses
      {3},     // only the loop, calling $sq through the table
      {6},     // only the trapping callee
      {0, 1},  // the recursion compiled, its callers interpreted
  };
  for (uint64_t seed = 1; seed <= 3; ++seed) splits.push_back(compiled::mixed_split(*cm, seed));
  const std::string cache = scratch_dir("mixed-tiers");
  for (const std::vector<uint32_t>& split : splits) {
    if (split.empty()) continue;
    std::string name;
    for (uint32_t d : split) name += " " + std::to_string(d);
    compiled::Request req;
    req.module = cm;
    req.functions = split;
    req.cache.dir = cache;
    auto native = compiled::compile_cpu(req, nullptr);
    ASSERT_TRUE(native.ok()) << native.error().message;
    Store probe;
    for (uint32_t d = 0; d < 8; ++d)
      EXPECT_EQ((*native)->has(probe.impl(), d), std::find(split.begin(), split.end(), d) != split.end())
          << "split" << name << ", function " << d;
    std::vector<Outcome> got = run_calls(cm, *native);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_GT(got.back().value, 1000u) << "split" << name << ": the recursion ended early";
    got.back() = want.back();
    EXPECT_EQ(got, want) << "split" << name;
  }
}

// Futures of tier-up's compile threads, waited for at the end of a test.
struct Kept {
  std::mutex mu;
  std::vector<std::future<void>> futures;
  std::function<void(std::future<void>)> keeper() {
    return [this](std::future<void> f) {
      std::lock_guard<std::mutex> g(mu);
      futures.push_back(std::move(f));
    };
  }
  void wait() {
    std::lock_guard<std::mutex> g(mu);
    for (auto& f : futures) f.wait();
  }
};

compiled::Request tier_request(const std::shared_ptr<const CompiledModule>& cm, const std::string& cache) {
  compiled::Request req;
  req.module = cm;
  req.cache.dir = cache;
  return req;
}

// Calls sum until `done` says so (at most a minute); every result must be
// the interpreter's.
template <class Done>
bool call_until(const std::shared_ptr<const CompiledModule>& cm, const std::shared_ptr<const NativeCode>& code,
                uint64_t want, Done&& done) {
  Store store;
  store.impl().native_for = [&](const std::shared_ptr<const CompiledModule>&) { return code; };
  auto inst = store.instantiate(cm, {});
  EXPECT_EQ(inst.index(), 0u);
  const uint32_t sum = store.get_export(std::get<0>(inst), "sum")->addr;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    InvokeResult r = store.invoke(sum, {Value::i32(3000)});
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r.results[0].bits != want) return false;
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(TierUp, HotFunctionsRunCompiledFromTheirNextCall) {
  if (!compiled::find_host_compiler().ok()) GTEST_SKIP() << "no host C++ compiler";
  auto cm = mixed_module();
  ASSERT_TRUE(cm);
  const uint64_t want = run_calls(cm, nullptr)[3].value;
  const std::string cache = scratch_dir("tier-up");
  Kept kept;
  {
    compiled::TierUpOptions o;
    o.threshold = 128;
    o.keep = kept.keeper();
    auto code = compiled::start_tier_up(tier_request(cm, cache), o);
    ASSERT_TRUE(code.ok()) << code.error().message;
    auto native = compiled::as_native(*code);
    Store probe;
    // Nothing compiled yet: the interpreter runs everything, and counts.
    EXPECT_FALSE(native->has(probe.impl(), 3));
    EXPECT_NE(native->profile(), nullptr);
    // sum's loop (3000 back-edges a call) and $sq (3000 calls through the
    // table) get hot in the first call; the calls go on while they compile.
    ASSERT_TRUE(
        call_until(cm, native, want, [&] { return native->has(probe.impl(), 3) && native->has(probe.impl(), 2); }))
        << compiled::tier_up_stats(**code).hot << " hot, " << compiled::tier_up_stats(**code).compiled << " compiled, "
        << compiled::tier_up_stats(**code).error;
    const compiled::TierUpStats s = compiled::tier_up_stats(**code);
    EXPECT_GE(s.hot, 2u);
    EXPECT_GE(s.compiled, 2u);
    EXPECT_GE(s.units, 1u);
    EXPECT_EQ(s.failed, 0u) << s.error;
    // Functions that never got hot stay interpreted.
    EXPECT_FALSE(native->has(probe.impl(), 7));
    // The results stay the interpreter's with compiled code running.
    EXPECT_EQ(run_calls(cm, native)[3].value, want);
  }
  kept.wait();

  // The next start loads the recorded units from the cache before anything
  // gets hot.
  Kept again;
  compiled::TierUpOptions o;
  o.threshold = 1u << 30;  // nothing gets hot
  o.keep = again.keeper();
  auto code = compiled::start_tier_up(tier_request(cm, cache), o);
  ASSERT_TRUE(code.ok());
  auto native = compiled::as_native(*code);
  Store probe;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!native->has(probe.impl(), 3) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(native->has(probe.impl(), 3));
  const compiled::TierUpStats s = compiled::tier_up_stats(**code);
  EXPECT_EQ(s.hot, 0u);
  EXPECT_GE(s.units, 1u);
  EXPECT_EQ(s.cache_hits, s.units);
  std::vector<Outcome> got = run_calls(cm, native), want_all = run_calls(cm, nullptr);
  got.back() = want_all.back();
  EXPECT_EQ(got, want_all);
  code->reset();
  native.reset();
  again.wait();
}

TEST(TierUp, UnitsCallEachOtherDirectly) {
  // Every function a unit of its own: the recursion, the table calls and
  // the trap cross between units (rt::CpuInst::direct) and between the
  // tiers while units arrive, and every round gives the interpreter's
  // results.
  if (!compiled::find_host_compiler().ok()) GTEST_SKIP() << "no host C++ compiler";
  auto cm = mixed_module();
  ASSERT_TRUE(cm);
  std::vector<Outcome> want = run_calls(cm, nullptr);
  Kept kept;
  {
    compiled::TierUpOptions o;
    o.threshold = 1;  // every call and back-edge reports
    o.unit_words = 1;
    o.keep = kept.keeper();
    auto code = compiled::start_tier_up(tier_request(cm, scratch_dir("tier-up-units")), o);
    ASSERT_TRUE(code.ok()) << code.error().message;
    auto native = compiled::as_native(*code);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    uint32_t compiled = 0;
    while (compiled < 8 && std::chrono::steady_clock::now() < until) {
      std::vector<Outcome> got = run_calls(cm, native);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_GT(got.back().value, 1000u);
      got.back() = want.back();
      ASSERT_EQ(got, want) << compiled << " functions compiled";
      compiled = compiled::tier_up_stats(**code).compiled;
    }
    const compiled::TierUpStats s = compiled::tier_up_stats(**code);
    EXPECT_EQ(s.compiled, 8u) << s.error;
    EXPECT_EQ(s.units, 8u);
    std::vector<Outcome> got = run_calls(cm, native);
    got.back() = want.back();
    EXPECT_EQ(got, want);
  }
  kept.wait();
}

TEST(TierUp, CodeBuiltForOneFuelSettingRunsOnlyThere) {
  if (!compiled::find_host_compiler().ok()) GTEST_SKIP() << "no host C++ compiler";
  auto cm = mixed_module();
  ASSERT_TRUE(cm);
  Kept kept;
  {
    compiled::TierUpOptions o;
    o.keep = kept.keeper();
    compiled::Request req = tier_request(cm, "");
    req.cache.enabled = false;
    req.metered = true;
    auto code = compiled::start_tier_up(req, o);
    ASSERT_TRUE(code.ok());
    auto native = compiled::as_native(*code);
    StoreLimits metered;
    metered.fuel = 1000;
    Store with_fuel(metered), without;
    EXPECT_NE(native->runnable(with_fuel.impl()), nullptr);
    EXPECT_EQ(native->runnable(without.impl()), nullptr);
  }
  kept.wait();
}

TEST(TierUp, WithoutAKeeperItRefusesToStart) {
  auto cm = mixed_module();
  ASSERT_TRUE(cm);
  auto code = compiled::start_tier_up(tier_request(cm, ""), compiled::TierUpOptions{});
  EXPECT_FALSE(code.ok());
}

}  // namespace
}  // namespace ww
