// Host functions through the public API: a module's import served by a
// callback that sees the calling instance's index, on the CPU and the GPU
// (both tiers; instances leave their kernel for it and resume), with a
// false return trapping only its instance. This file includes nothing of
// src/.
#include <gtest/gtest.h>

#include <atomic>

#include "api_test_support.h"
#include "wasmwarp/wasmwarp.h"

namespace {

/* wat2wasm of:
(module
  (import "env" "mix" (func $mix (param i64 i32) (result i64)))
  (func (export "run") (param i64) (result i64)
    (call $mix (local.get 0) (i32.const 3))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x02, 0x60, 0x02, 0x7e, 0x7f,
    0x01, 0x7e, 0x60, 0x01, 0x7e, 0x01, 0x7e, 0x02, 0x0b, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x03,
    0x6d, 0x69, 0x78, 0x00, 0x00, 0x03, 0x02, 0x01, 0x01, 0x07, 0x07, 0x01, 0x03, 0x72, 0x75,
    0x6e, 0x00, 0x01, 0x0a, 0x0a, 0x01, 0x08, 0x00, 0x20, 0x00, 0x41, 0x03, 0x10, 0x00, 0x0b,
};

/* wat2wasm of the same with v128 around the call (two slots per value:
   the import's arguments and result must still reach the host as values):
(module
  (import "env" "mix" (func $mix (param i64 i32) (result i64)))
  (func (export "run") (param i64) (result i64)
    (i64x2.extract_lane 1
      (i64x2.replace_lane 1 (v128.const i64x2 7 7) (call $mix (local.get 0) (i32.const 3))))))
*/
const std::vector<uint8_t> kSimdModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x02, 0x60, 0x02, 0x7e, 0x7f, 0x01, 0x7e,
    0x60, 0x01, 0x7e, 0x01, 0x7e, 0x02, 0x0b, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x6d, 0x69, 0x78, 0x00,
    0x00, 0x03, 0x02, 0x01, 0x01, 0x07, 0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x01, 0x0a, 0x22, 0x01,
    0x20, 0x00, 0xfd, 0x0c, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x20, 0x00, 0x41, 0x03, 0x10, 0x00, 0xfd, 0x1e, 0x01, 0xfd, 0x1d, 0x01, 0x0b,
};

using wasmwarp::ValueType;

// mix(x, k) = x * k + the calling instance's index; x == 13 fails.
wasmwarp::HostFunction mix(std::atomic<uint64_t>& calls) {
  return {"env",
          "mix",
          {{ValueType::I64, ValueType::I32}, {ValueType::I64}},
          [&calls](uint64_t instance, std::span<const uint64_t> args, std::span<uint64_t> results) {
            ++calls;
            const int64_t x = int64_t(args[0]);
            if (x == 13) return false;
            results[0] = uint64_t(x * int64_t(uint32_t(args[1])) + int64_t(instance));
            return true;
          }};
}

// Also from a module with v128 (BytecodeModule::slot_width 2).
TEST(ApiHostFunctions, ServedOnEveryBackendAndTier) {
  const uint64_t n = 2000;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (const std::vector<uint8_t>* bytes : {&kModule, &kSimdModule})
      for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
        SCOPED_TRACE(bytes == &kModule ? "scalar module" : "v128 module");
        auto m = wasmwarp::Module::from_bytes(*bytes);
        ASSERT_TRUE(m.ok()) << m.error().message;
        std::atomic<uint64_t> calls{0};
        wasmwarp::EngineOptions o = options_on(b, t);
        o.host_functions = {mix(calls)};
        auto r = wasmwarp::Engine(o).call(*m, "run", n, {wasmwarp::Arg::index()});
        if (b == wasmwarp::Backend::Gpu && !r.ok()) GTEST_SKIP() << "no GPU: " << r.error().message;
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(calls.load(), n);
        for (uint64_t i = 0; i < n; ++i) {
          if (i == 13) {
            EXPECT_EQ(r->trap_message(i), "host function failed");
            continue;
          }
          ASSERT_FALSE(r->trapped(i)) << i << ": " << r->trap_message(i);
          ASSERT_EQ(r->i64(i), 4 * int64_t(i)) << i;
        }
      }
}

/* wat2wasm of:
(module
  (import "env" "take" (func $take (param v128) (result i32)))
  (func (export "run") (result i32) (call $take (v128.const i32x4 1 2 3 4))))
*/
const std::vector<uint8_t> kV128ImportModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x60, 0x01, 0x7b, 0x01, 0x7f, 0x60, 0x00, 0x01,
    0x7f, 0x02, 0x0c, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x74, 0x61, 0x6b, 0x65, 0x00, 0x00, 0x03, 0x02, 0x01, 0x01,
    0x07, 0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x01, 0x0a, 0x18, 0x01, 0x16, 0x00, 0xfd, 0x0c, 0x01, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x10, 0x00, 0x0b,
};

// A host function sees one word per value: one with v128 in its type is
// refused with a clear error, not called with half of each vector.
TEST(ApiHostFunctions, V128InTheirTypeIsRefused) {
  auto m = wasmwarp::Module::from_bytes(kV128ImportModule);
  ASSERT_TRUE(m.ok()) << m.error().message;
  wasmwarp::EngineOptions o = options_on(wasmwarp::Backend::Cpu);
  o.host_functions = {{"env",
                       "take",
                       {{ValueType::V128}, {ValueType::I32}},
                       [](uint64_t, std::span<const uint64_t>, std::span<uint64_t> results) {
                         results[0] = 1;
                         return true;
                       }}};
  auto r = wasmwarp::Engine(o).call(*m, "run", 4, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("host function env.take takes or returns v128"), std::string::npos)
      << r.error().message;
}

// Resident instances call them too, on every backend and tier, call after
// call; an instance whose host call failed keeps that trap.
TEST(ApiHostFunctions, ResidentInstances) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok());
  const uint64_t n = 100;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
      std::atomic<uint64_t> calls{0};
      wasmwarp::EngineOptions o = options_on(b, t);
      o.host_functions = {mix(calls)};
      auto inst = wasmwarp::Engine(o).instances(*m, n);
      if (b == wasmwarp::Backend::Gpu && !inst.ok()) GTEST_SKIP() << "no GPU: " << inst.error().message;
      ASSERT_TRUE(inst.ok()) << inst.error().message;
      auto r = inst->call("run", {wasmwarp::Arg::i64(2)});
      ASSERT_TRUE(r.ok()) << r.error().message;
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(r->i64(i), 6 + int64_t(i)) << i;
      EXPECT_EQ(calls.load(), n);
      r = inst->call("run", {wasmwarp::Arg::index()});
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->trap_message(13), "host function failed");
      EXPECT_EQ(r->i64(12), 4 * 12);
      r = inst->call("run", {wasmwarp::Arg::i64(5)});
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r->trap_message(13), "host function failed");
      EXPECT_EQ(r->i64(14), 15 + 14);
      EXPECT_EQ(calls.load(), 3 * n - 1);  // instance 13 made no third call
    }
}

TEST(ApiHostFunctions, MissingOrMistypedIsAnError) {
  auto m = wasmwarp::Module::from_bytes(kModule);
  ASSERT_TRUE(m.ok());
  auto r = cpu().call(*m, "run", 4, {wasmwarp::Arg::index()});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unsatisfied import env.mix"), std::string::npos) << r.error().message;
  std::atomic<uint64_t> calls{0};
  wasmwarp::EngineOptions o;
  o.backend = wasmwarp::Backend::Cpu;
  o.host_functions = {mix(calls)};
  o.host_functions[0].type.params = {ValueType::I64};
  r = wasmwarp::Engine(o).call(*m, "run", 4, {wasmwarp::Arg::index()});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().message.find("host function env.mix is (i64) -> (i64); the module imports it as (i64, i32) -> (i64)"),
      std::string::npos)
      << r.error().message;
}

}  // namespace
