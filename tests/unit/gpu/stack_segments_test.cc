// The GPU interpreter's call stack past an instance's own slots: segments
// from a pool, up to the CPU backend's limits, so that recursion runs or
// runs out at the same call on both backends. Compiled code, whose frames
// live in the CUDA stack, hands the instances that run out of it to the
// interpreter. Runs where a GPU is present and skips elsewhere.
#include <gtest/gtest.h>

#include "exec/gpu/gpu_backend.h"
#include "gpu_test_support.h"
#include "store/store.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (type $i_i (func (param i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) $even $odd)
  (func $sum (export "sum") (param $n i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (i64.const 0))
      (else (i64.add (local.get $n) (call $sum (i64.sub (local.get $n) (i64.const 1)))))))
  (func $wide (export "wide") (param $n i32) (result i64)
    (local $x i64) (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
      i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
      i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
      i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
      i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (local.set $x (i64.mul (i64.extend_i32_u (local.get $n)) (i64.const 3)))
    (if (result i64) (i32.eqz (local.get $n))
      (then (i64.const 7))
      (else (i64.add (local.get $x) (call $wide (i32.sub (local.get $n) (i32.const 1)))))))
  (func $even (export "even") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else (call_indirect (type $i_i) (i32.sub (local.get $n) (i32.const 1)) (i32.const 1)))))
  (func $odd (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (call_indirect (type $i_i) (i32.sub (local.get $n) (i32.const 1)) (i32.const 0)))))
)
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x10, 0x03, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x01,
    0x7e, 0x01, 0x7e, 0x60, 0x01, 0x7f, 0x01, 0x7e, 0x03, 0x05, 0x04, 0x01, 0x02, 0x00, 0x00, 0x04, 0x04, 0x01,
    0x70, 0x00, 0x02, 0x07, 0x15, 0x03, 0x03, 0x73, 0x75, 0x6d, 0x00, 0x00, 0x04, 0x77, 0x69, 0x64, 0x65, 0x00,
    0x01, 0x04, 0x65, 0x76, 0x65, 0x6e, 0x00, 0x02, 0x09, 0x08, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x02, 0x02, 0x03,
    0x0a, 0x63, 0x04, 0x15, 0x00, 0x20, 0x00, 0x50, 0x04, 0x7e, 0x42, 0x00, 0x05, 0x20, 0x00, 0x20, 0x00, 0x42,
    0x01, 0x7d, 0x10, 0x00, 0x7c, 0x0b, 0x0b, 0x1f, 0x01, 0x65, 0x7e, 0x20, 0x00, 0xad, 0x42, 0x03, 0x7e, 0x21,
    0x01, 0x20, 0x00, 0x45, 0x04, 0x7e, 0x42, 0x07, 0x05, 0x20, 0x01, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x01,
    0x7c, 0x0b, 0x0b, 0x15, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x20, 0x00, 0x41, 0x01, 0x6b,
    0x41, 0x01, 0x11, 0x00, 0x00, 0x0b, 0x0b, 0x15, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x00, 0x05, 0x20,
    0x00, 0x41, 0x01, 0x6b, 0x41, 0x00, 0x11, 0x00, 0x00, 0x0b, 0x0b,
};

std::shared_ptr<const CompiledModule> compiled() {
  static auto m = compile_or_fail(kModule);
  return m;
}

// The CPU backend's answer, or its trap, under the same limits.
struct CpuRef {
  Store store;
  uint32_t instance = 0;
  explicit CpuRef(StoreLimits limits) : store(limits) {
    auto r = store.instantiate(compiled(), {});
    instance = std::get<uint32_t>(r);
  }
  InvokeResult call(const std::string& name, uint64_t arg, ValType t) {
    auto ext = store.get_export(instance, name);
    return store.invoke(ext->addr, {t == ValType::I64 ? Value::i64(int64_t(arg)) : Value::i32(int32_t(arg))});
  }
};

class StackSegments : public GpuTierTest {
 protected:
  BatchRequest request(const std::string& name, std::vector<uint64_t> args) {
    BatchRequest r;
    r.module = compiled();
    r.func_index = export_func(compiled()->module, name);
    r.instances = uint32_t(args.size());
    r.args = std::move(args);
    r.args_per_instance = true;
    return r;  // the batch engine's own stacks: 384 slots, 64 calls
  }
  // Every instance of `r`, run with room to recurse (limits far above its
  // own stack), returns want(its argument); `stack_reruns`: the result's.
  void expect_results(BatchRequest r, uint64_t (*want)(uint64_t), uint64_t* stack_reruns = nullptr) {
    r.stack_slots_limit = 1u << 22;
    r.call_depth_limit = 20000;
    auto out = run(r);
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (uint32_t i = 0; i < r.instances; ++i) {
      ASSERT_EQ(out->traps[i], 0) << i;
      ASSERT_EQ(out->results[i], want(r.args[i])) << "instance " << i << ", argument " << r.args[i];
    }
    EXPECT_GT(out->stack_pool_bytes, 0u);
    if (stack_reruns) *stack_reruns = out->stack_reruns;
  }
};

TEST_P(StackSegments, DeepRecursionReturnsThroughEverySegment) {
  std::vector<uint64_t> n;
  for (uint32_t i = 0; i < 20000; ++i) n.push_back(i % 3001);
  expect_results(request("sum", n), [](uint64_t a) { return a * (a + 1) / 2; });
}

TEST_P(StackSegments, WideFramesAndCallsThroughATable) {
  std::vector<uint64_t> n;
  for (uint32_t i = 0; i < 4096; ++i) n.push_back(i % 700);
  expect_results(request("wide", n), [](uint64_t a) { return 7 + 3 * a * (a + 1) / 2; });
  for (uint64_t& v : n) v = v * 7 + 1;  // up to 4894 calls deep, through call_indirect
  expect_results(request("even", n), [](uint64_t a) { return uint64_t(a % 2 == 0); });
}

// Compiled code's frames live in the CUDA stack, sized for the batch's
// own depth: the instances that recurse deeper run again on the
// interpreter, and the result counts them (the others ran compiled).
TEST_P(StackSegments, DeeperInstancesRunAgainInterpretedAndAreCounted) {
  std::vector<uint64_t> n;
  for (uint32_t i = 0; i < 512; ++i) n.push_back(i % 2 ? 3000 : 10);
  uint64_t reruns = 0;
  expect_results(
      request("sum", n), [](uint64_t a) { return a * (a + 1) / 2; }, &reruns);
  EXPECT_EQ(reruns, GetParam() ? 256u : 0u);
}

// "call stack exhausted" at the same call as on the CPU: the depth limit
// (shallow frames) and the slot limit (wide ones), for instances just
// below, at and just above each.
TEST_P(StackSegments, ExhaustedOnBothBackendsOrNeither) {
  StoreLimits limits;
  limits.max_call_depth = 1000;
  limits.stack_slots = 30000;
  CpuRef ref(limits);
  for (const char* fn : {"sum", "wide"}) {
    const ValType t = std::string(fn) == "sum" ? ValType::I64 : ValType::I32;
    std::vector<uint64_t> n;
    for (uint32_t k = 0; k < 1100; ++k) n.push_back(k);
    BatchRequest r = request(fn, n);
    r.stack_slots_limit = limits.stack_slots;
    r.call_depth_limit = limits.max_call_depth;
    auto out = run(r);
    ASSERT_TRUE(out.ok()) << out.error().message;
    uint32_t ran = 0, exhausted = 0;
    for (uint32_t i = 0; i < r.instances; ++i) {
      auto cpu = ref.call(fn, n[i], t);
      if (cpu.ok()) {
        ++ran;
        ASSERT_EQ(out->traps[i], 0) << fn << " " << n[i];
        ASSERT_EQ(out->results[i], t == ValType::I64 ? cpu.results[0].bits : uint32_t(cpu.results[0].bits))
            << fn << " " << n[i];
      } else {
        ++exhausted;
        ASSERT_EQ(cpu.trap, TrapCode::CallStackExhausted) << fn << " " << n[i];
        ASSERT_EQ(out->traps[i], uint8_t(TrapCode::CallStackExhausted)) << fn << " " << n[i];
      }
    }
    // Both limits are really met within the range, with room below them.
    EXPECT_GT(ran, 100u) << fn;
    EXPECT_GT(exhausted, 50u) << fn;
  }
}

// A pool far smaller than the batch needs: instances that find it empty
// run again in later, smaller waves, and every answer is still right.
TEST_P(StackSegments, ASmallPoolRunsTheRestInLaterWaves) {
  std::vector<uint64_t> n(60000, 2000);
  BatchRequest r = request("sum", n);
  r.stack_slots_limit = 1u << 16;
  r.call_depth_limit = 3000;
  r.max_stack_pool_bytes = uint64_t(64) << 20;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) {
    ASSERT_EQ(out->traps[i], 0) << i;
    ASSERT_EQ(out->results[i], 2000u * 2001 / 2) << "instance " << i;
  }
  EXPECT_LE(out->stack_pool_bytes, uint64_t(64) << 20);
  EXPECT_GT(out->plan.waves, 2u);
}

/* wat2wasm of:
(module
  (func $leaf (param i32) (result i32) local.get 0 i32.const 1 i32.add)
  (func $mid (param i32) (result i32) local.get 0 call $leaf call $leaf)
  (func $top (export "top") (param i32) (result i32) local.get 0 call $mid i32.const 2 i32.mul))
*/
const std::vector<uint8_t> kChain = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x03, 0x04, 0x03, 0x00, 0x00, 0x00, 0x07, 0x07, 0x01, 0x03, 0x74, 0x6f, 0x70, 0x00, 0x02, 0x0a,
    0x1c, 0x03, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x08, 0x00, 0x20, 0x00, 0x10, 0x00,
    0x10, 0x00, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x10, 0x01, 0x41, 0x02, 0x6c, 0x0b,
};

// A call graph without cycles or tables bounds the stack: each instance's
// own stack and call records are cut to it (a few slots, two calls), not
// the 384 slots and 64 calls that recursion starts with.
TEST_P(StackSegments, OwnStacksShrinkToWhatTheCallGraphReaches) {
  static auto chain = compile_or_fail(kChain);
  BatchRequest r;
  r.module = chain;
  r.func_index = export_func(chain->module, "top");
  r.instances = 4096;
  for (uint32_t i = 0; i < r.instances; ++i) r.args.push_back(i);
  r.args_per_instance = true;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) {
    ASSERT_EQ(out->traps[i], 0) << i;
    ASSERT_EQ(out->results[i], 2 * (i + 2)) << i;
  }
  EXPECT_LT(out->plan.overhead_bytes_per_instance, 512u);
  // A recursive export keeps the stacks recursion starts with.
  auto rec = run(request("sum", std::vector<uint64_t>(64, 10)));
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  if (!GetParam()) {
    EXPECT_GT(rec->plan.overhead_bytes_per_instance, 384u * 8);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, StackSegments, ::testing::Values(false, true), tier_test_name);

}  // namespace
}  // namespace ww::gpu
