// Unknown imports through the public API (EngineOptions::unknown_imports):
// a function import nothing provides traps when called, with a message
// naming it (CallResult::trap_message, Module::trap_message), or returns
// zeros, on every backend and tier; instances that never call it run as
// they would without; without the option the call fails as before. This
// file includes nothing of src/.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "api_test_support.h"
#include "wasmwarp/wasmwarp.h"

namespace {

/* wat2wasm of:
(module
  (import "env" "foo" (func $foo (param i32) (result i32)))
  (import "env" "scale" (func $scale (param f64) (result f64)))
  ;; Odd instances call env.foo; even ones never do.
  (func (export "run") (param i32) (result i32)
    (if (result i32) (i32.and (local.get 0) (i32.const 1))
      (then (call $foo (local.get 0)))
      (else (i32.add (local.get 0) (i32.const 1)))))
  (func (export "scaled") (param f64) (result f64) (call $scale (local.get 0))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0b, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60,
    0x01, 0x7c, 0x01, 0x7c, 0x02, 0x17, 0x02, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x66, 0x6f, 0x6f, 0x00, 0x00,
    0x03, 0x65, 0x6e, 0x76, 0x05, 0x73, 0x63, 0x61, 0x6c, 0x65, 0x00, 0x01, 0x03, 0x03, 0x02, 0x00, 0x01,
    0x07, 0x10, 0x02, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x02, 0x06, 0x73, 0x63, 0x61, 0x6c, 0x65, 0x64, 0x00,
    0x03, 0x0a, 0x1d, 0x02, 0x14, 0x00, 0x20, 0x00, 0x41, 0x01, 0x71, 0x04, 0x7f, 0x20, 0x00, 0x10, 0x00,
    0x05, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x10, 0x01, 0x0b,
};

wasmwarp::EngineOptions options(wasmwarp::Backend b, wasmwarp::Tier t, wasmwarp::UnknownImports how) {
  wasmwarp::EngineOptions o = options_on(b, t);
  o.unknown_imports = how;
  return o;
}

// The report says the call ran on `t` (compiled code did not fall back).
void expect_tier(const wasmwarp::CallResult& r, wasmwarp::Tier t) {
  ASSERT_FALSE(r.report().segments.empty());
  EXPECT_EQ(r.report().segments.back().tier, t) << r.report().compile.fallback;
}

TEST(ApiUnknownImports, TrapNamesTheImportOnEveryBackendAndTier) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t n = 100;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
      SCOPED_TRACE(std::string(wasmwarp::backend_name(b)) + "/" + wasmwarp::tier_name(t));
      wasmwarp::Engine e(options(b, t, wasmwarp::UnknownImports::Trap));
      auto r = e.call(*m, "run", n, {wasmwarp::Arg::index()});
      if (b == wasmwarp::Backend::Gpu && !r.ok()) GTEST_SKIP() << "no GPU: " << r.error().message;
      ASSERT_TRUE(r.ok()) << r.error().message;
      expect_tier(*r, t);
      EXPECT_EQ(r->trap_count(), n / 2);
      for (uint64_t i = 0; i < n; ++i) {
        if (i % 2 == 0) {
          ASSERT_FALSE(r->trapped(i)) << i << ": " << r->trap_message(i);
          EXPECT_EQ(r->i32(i), int32_t(i) + 1) << i;
          continue;
        }
        EXPECT_EQ(r->trap_codes()[i], wasmwarp::kTrapUnknownImport) << i;
        EXPECT_EQ(r->trap_message(i), "unknown import called: env.foo") << i;
        EXPECT_EQ(r->trap_offset(i), wasmwarp::kNoTrapOffset) << i;
        EXPECT_EQ(m->trap_message(wasmwarp::kTrapUnknownImport, r->trap_function(i)), "unknown import called: env.foo");
        EXPECT_TRUE(r->finished(i)) << i;
      }
    }
}

TEST(ApiUnknownImports, DefaultReturnsZerosOnEveryBackendAndTier) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t n = 50;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
      SCOPED_TRACE(std::string(wasmwarp::backend_name(b)) + "/" + wasmwarp::tier_name(t));
      wasmwarp::Engine e(options(b, t, wasmwarp::UnknownImports::Default));
      auto r = e.call(*m, "run", n, {wasmwarp::Arg::index()});
      if (b == wasmwarp::Backend::Gpu && !r.ok()) GTEST_SKIP() << "no GPU: " << r.error().message;
      ASSERT_TRUE(r.ok()) << r.error().message;
      expect_tier(*r, t);
      EXPECT_EQ(r->trap_count(), 0u);
      for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(r->i32(i), i % 2 ? 0 : int32_t(i) + 1) << i;
      auto f = e.call(*m, "scaled", 3, {wasmwarp::Arg::f64(-2.5)});
      ASSERT_TRUE(f.ok()) << f.error().message;
      for (uint64_t i = 0; i < 3; ++i) {
        EXPECT_EQ(f->bits(i), 0u) << i;  // +0.0, not -0.0
        EXPECT_FALSE(std::signbit(f->f64(i))) << i;
      }
    }
}

TEST(ApiUnknownImports, AnErrorWithoutTheOption) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto r = cpu().call(*m, "run", 4, {wasmwarp::Arg::index()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "unsatisfied import env.foo (func)");
  auto i = cpu().instances(*m, 4);
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.error().message, "unsatisfied import env.foo (func)");
}

TEST(ApiUnknownImports, ModuleTrapMessages) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->trap_message(wasmwarp::kTrapUnknownImport, 0), "unknown import called: env.foo");
  EXPECT_EQ(m->trap_message(wasmwarp::kTrapUnknownImport, 1), "unknown import called: env.scale");
  EXPECT_EQ(wasmwarp::trap_message(wasmwarp::kTrapUnknownImport), "unknown import called");
  // Other traps' messages do not depend on the site.
  EXPECT_EQ(m->trap_message(7, 2), "integer divide by zero");
}

// Resident instances and chains: an instance that trapped keeps its trap,
// and its message, in later calls.
TEST(ApiUnknownImports, ResidentInstancesAndChains) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t n = 10;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
      SCOPED_TRACE(std::string(wasmwarp::backend_name(b)) + "/" + wasmwarp::tier_name(t));
      wasmwarp::Engine e(options(b, t, wasmwarp::UnknownImports::Trap));
      auto inst = e.instances(*m, n);
      if (b == wasmwarp::Backend::Gpu && !inst.ok()) GTEST_SKIP() << "no GPU: " << inst.error().message;
      ASSERT_TRUE(inst.ok()) << inst.error().message;
      for (int round = 0; round < 2; ++round) {
        auto r = inst->call("run", {wasmwarp::Arg::index()});
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->trap_message(3), "unknown import called: env.foo") << round;
        EXPECT_EQ(r->i32(4), 5) << round;
      }
      auto c = e.chain(*m, n, {{"run", {wasmwarp::Arg::index()}, 2}, {"scaled", {wasmwarp::Arg::f64(1)}, 1}});
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_EQ(c->trap_message(1), "unknown import called: env.foo");
      EXPECT_EQ(c->trap_message(2), "unknown import called: env.scale");
    }
}

}  // namespace
