// The GPU backend against the CPU interpreter. The planning tests run
// everywhere; the rest run only where a GPU is present (the device machine,
// through scripts/gpu-check.sh) and skip with the reason elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <thread>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/plan/gpu_plan.h"
#include "exec/gpu/resources/gpu_resources.h"
#include "gpu_test_support.h"
#include "intrinsics/gpu_batch.h"
#include "store/store.h"

namespace ww::gpu {
namespace {

/* The module under test (wat2wasm of):
(module
  (import "gpu" "get_thread_id" (func $tid (result i32)))
  (import "gpu" "atomic_add" (func $aadd (param i32 i32) (result i32)))
  (memory 1 4)
  (table 2 funcref)
  (elem (i32.const 0) $sq $fact)
  (type $i2i (func (param i32) (result i32)))
  (func $sq (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))
  (func $fact (export "fact") (param i32) (result i32)
    (if (result i32) (i32.le_s (local.get 0) (i32.const 1))
      (then (i32.const 1))
      (else (i32.mul (local.get 0) (call $fact (i32.sub (local.get 0) (i32.const 1)))))))
  ;; sum of i*i for i < n, through memory (unaligned stores) and call_indirect
  (func (export "mix") (param $n i32) (result i64)
    (local $i i32) (local $acc i64)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i64.store offset=3 (i32.mul (local.get $i) (i32.const 8))
          (i64.extend_i32_u (call_indirect (type $i2i) (local.get $i) (i32.and (local.get $i) (i32.const 1)))))
        (local.set $acc (i64.add (local.get $acc)
          (i64.load offset=3 (i32.mul (local.get $i) (i32.const 8)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $acc))
  (func (export "tid") (result i32) (call $tid))
  (func (export "count") (result i32) (call $aadd (i32.const 0) (i32.const 1)))
  (func (export "oob") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "div") (param i32 i32) (result i32) (i32.div_s (local.get 0) (local.get 1)))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "spin") (param i32) (result i32) (loop $l (br $l)) (i32.const 0))
  (func (export "fmix") (param f64 f32) (result f64)
    (f64.add (f64.mul (local.get 0) (f64.promote_f32 (local.get 1))) (f64.sqrt (f64.abs (local.get 0)))))
)
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x1b, 0x05, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01,
    0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7e, 0x60, 0x02, 0x7c, 0x7d, 0x01, 0x7c, 0x02,
    0x26, 0x02, 0x03, 0x67, 0x70, 0x75, 0x0d, 0x67, 0x65, 0x74, 0x5f, 0x74, 0x68, 0x72, 0x65, 0x61, 0x64, 0x5f, 0x69,
    0x64, 0x00, 0x01, 0x03, 0x67, 0x70, 0x75, 0x0a, 0x61, 0x74, 0x6f, 0x6d, 0x69, 0x63, 0x5f, 0x61, 0x64, 0x64, 0x00,
    0x02, 0x03, 0x0b, 0x0a, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x02, 0x00, 0x00, 0x04, 0x04, 0x04, 0x01, 0x70, 0x00,
    0x02, 0x05, 0x04, 0x01, 0x01, 0x01, 0x04, 0x07, 0x3d, 0x09, 0x04, 0x66, 0x61, 0x63, 0x74, 0x00, 0x03, 0x03, 0x6d,
    0x69, 0x78, 0x00, 0x04, 0x03, 0x74, 0x69, 0x64, 0x00, 0x05, 0x05, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0x06, 0x03,
    0x6f, 0x6f, 0x62, 0x00, 0x07, 0x03, 0x64, 0x69, 0x76, 0x00, 0x08, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x09, 0x04,
    0x73, 0x70, 0x69, 0x6e, 0x00, 0x0a, 0x04, 0x66, 0x6d, 0x69, 0x78, 0x00, 0x0b, 0x09, 0x08, 0x01, 0x00, 0x41, 0x00,
    0x0b, 0x02, 0x02, 0x03, 0x0a, 0x9d, 0x01, 0x0a, 0x07, 0x00, 0x20, 0x00, 0x20, 0x00, 0x6c, 0x0b, 0x17, 0x00, 0x20,
    0x00, 0x41, 0x01, 0x4c, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x20, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x03, 0x6c,
    0x0b, 0x0b, 0x3e, 0x02, 0x01, 0x7f, 0x01, 0x7e, 0x02, 0x40, 0x03, 0x40, 0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01,
    0x20, 0x01, 0x41, 0x08, 0x6c, 0x20, 0x01, 0x20, 0x01, 0x41, 0x01, 0x71, 0x11, 0x00, 0x00, 0xad, 0x37, 0x03, 0x03,
    0x20, 0x02, 0x20, 0x01, 0x41, 0x08, 0x6c, 0x29, 0x03, 0x03, 0x7c, 0x21, 0x02, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21,
    0x01, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x02, 0x0b, 0x04, 0x00, 0x10, 0x00, 0x0b, 0x08, 0x00, 0x41, 0x00, 0x41, 0x01,
    0x10, 0x01, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x28, 0x02, 0x00, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6d, 0x0b,
    0x06, 0x00, 0x20, 0x00, 0x40, 0x00, 0x0b, 0x09, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x41, 0x00, 0x0b, 0x0d, 0x00,
    0x20, 0x00, 0x20, 0x01, 0xbb, 0xa2, 0x20, 0x00, 0x99, 0x9f, 0xa0, 0x0b,
};

std::shared_ptr<const CompiledModule> compiled() {
  static auto m = compile_or_fail(kModule);
  return m;
}

// A CPU instance with the gpu imports bound to `batch`.
struct CpuRef {
  GpuBatch batch;
  GpuContext ctx{&batch, 0};
  Store store;
  uint32_t instance = 0;
  CpuRef() {
    auto imports = link_gpu_imports(store, compiled()->module, &ctx);
    EXPECT_TRUE(imports.ok());
    auto r = store.instantiate(compiled(), *imports);
    instance = std::get<uint32_t>(r);
  }
  InvokeResult call(const std::string& name, std::vector<Value> args, uint32_t index = 0) {
    ctx.instance_index = index;
    auto ext = store.get_export(instance, name);
    return store.invoke(ext->addr, args);
  }
};

TEST(GpuPlan, ImageAndPlanFromACpuInstance) {
  CpuRef ref;
  std::vector<uint8_t> intr;
  for (const Import& im : compiled()->module.imports) intr.push_back(uint8_t(intrinsics::find_intrinsic(im.field)->id));
  auto img = build_image(ref.store.impl(), ref.instance, intr);
  ASSERT_TRUE(img.ok());
  EXPECT_TRUE(img->has_memory);
  EXPECT_EQ(img->init_pages, 1u);
  EXPECT_EQ(img->max_pages, 4u);
  EXPECT_TRUE(img->uses_memory_grow);
  EXPECT_FALSE(img->tables_mutable);
  // The active element segment put $sq and $fact (functions 2 and 3: two
  // imports come first) into the table, in the GPU's index+1 encoding.
  ASSERT_EQ(img->table_elems.size(), 2u);
  EXPECT_EQ(img->table_elems[0], 3u);
  EXPECT_EQ(img->table_elems[1], 4u);

  BatchRequest req;
  req.instances = 1000;
  // memory.grow is used, so growth room is added, capped by the declared max.
  EXPECT_EQ(memory_pages_for(req, *img), 4u);
  req.memory_pages = 2;
  EXPECT_EQ(memory_pages_for(req, *img), 2u);
  {
    // A batch whose calls the host serves reserves its share of
    // kHostCallMemoryBytes (instances counted in dense memory's groups of
    // 32) so that none runs again and repeats its calls; never less than
    // the default, never more than the memory's maximum.
    struct NoCalls : HostCallServer {
      void serve(HostCall&) override {}
    } server;
    BatchRequest wasi = req;
    wasi.memory_pages = 0;
    wasi.host_calls = &server;
    GpuImage open_ended = *img;
    open_ended.max_pages = 65536;
    wasi.instances = 1;
    EXPECT_EQ(memory_pages_for(wasi, open_ended), kHostCallMemoryBytes / kPageSize / 32);
    wasi.instances = 1000;  // 1,024 in groups
    EXPECT_EQ(memory_pages_for(wasi, open_ended), kHostCallMemoryBytes / kPageSize / 1024);
    wasi.instances = 1000000;
    EXPECT_EQ(memory_pages_for(wasi, open_ended), 1u + kDefaultGrowPages);
    EXPECT_EQ(memory_pages_for(wasi, *img), 4u);  // its own maximum
    wasi.memory_pages = 2;                        // asked for
    EXPECT_EQ(memory_pages_for(wasi, open_ended), 2u);
  }
  uint64_t per = 2 * kPageSize + overhead_bytes_per_instance(req, *img);
  // Room for 100 instances, plus the 31 instances' worth of memory that the
  // interleaved layout may round a wave up to.
  auto plan = plan_for(req, *img, kReserveBytes + 31 * 2 * kPageSize + 100 * per + 4096);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->wave_size, 96u);  // 100 fit; whole warps per wave
  EXPECT_EQ(plan->waves, 11u);
  auto impossible = plan_for(req, *img, kReserveBytes + per);
  ASSERT_FALSE(impossible.ok());
  EXPECT_NE(impossible.error().message.find("bytes of GPU memory per instance"), std::string::npos);
}

TEST(GpuPlan, OverheadStaysWithinFourKiB) {
  CpuRef ref;
  auto img = build_image(ref.store.impl(), ref.instance, {});
  ASSERT_TRUE(img.ok());
  BatchRequest req;  // default stack and depth
  EXPECT_LE(overhead_bytes_per_instance(req, *img), 4096u);
}

class GpuRun : public GpuTierTest {
 protected:
  BatchRequest request(const std::string& name, uint32_t n) {
    BatchRequest r;
    r.module = compiled();
    r.func_index = export_func(compiled()->module, name);
    r.instances = n;
    return r;
  }
};

TEST_P(GpuRun, RecursiveFactorialMatchesCpuOnEveryLayout) {
  CpuRef ref;
  for (MemoryLayout layout : {MemoryLayout::Interleaved, MemoryLayout::Contiguous, MemoryLayout::Sparse}) {
    BatchRequest r = request("fact", 100003);  // not a multiple of 32
    r.layout = layout;
    r.args_per_instance = true;
    for (uint32_t i = 0; i < r.instances; ++i) r.args.push_back(i % 13);
    auto out = run(r);
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (uint32_t i = 0; i < r.instances; i += 997) {
      auto cpu = ref.call("fact", {Value::i32(int32_t(i % 13))});
      ASSERT_TRUE(cpu.ok());
      ASSERT_EQ(out->traps[i], 0) << i;
      ASSERT_EQ(out->results[i], cpu.results[0].bits) << "instance " << i;
    }
  }
}

TEST_P(GpuRun, MemoryAndCallIndirectMatchCpu) {
  CpuRef ref;
  BatchRequest r = request("mix", 4096);
  // $fact recurses up to 299 deep through call_indirect.
  r.max_call_depth = 400;
  r.stack_slots = 4096;
  r.args_per_instance = true;
  for (uint32_t i = 0; i < r.instances; ++i) r.args.push_back(i % 300);
  for (MemoryLayout layout : {MemoryLayout::Interleaved, MemoryLayout::Contiguous, MemoryLayout::Sparse}) {
    r.layout = layout;
    auto out = run(r);
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (uint32_t i = 0; i < r.instances; i += 7) {
      auto cpu = ref.call("mix", {Value::i32(int32_t(i % 300))});
      ASSERT_TRUE(cpu.ok());
      ASSERT_EQ(out->traps[i], 0) << "instance " << i;
      ASSERT_EQ(out->results[i], cpu.results[0].bits) << "instance " << i;
    }
  }
}

TEST_P(GpuRun, ThreadIdAndAtomicAdd) {
  GpuBatch batch;
  batch.state.assign(1, 0);
  BatchRequest r = request("tid", 50000);
  r.batch = &batch;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) ASSERT_EQ(out->results[i], i);

  BatchRequest c = request("count", 50000);
  c.batch = &batch;
  auto cnt = run(c);
  ASSERT_TRUE(cnt.ok()) << cnt.error().message;
  // Every instance saw a different old value: a permutation of 0..N-1.
  std::set<uint64_t> seen(cnt->results.begin(), cnt->results.end());
  EXPECT_EQ(seen.size(), c.instances);
  EXPECT_EQ(*seen.rbegin(), c.instances - 1);
  EXPECT_EQ(batch.state[0], int32_t(c.instances));
}

// A wave loop's block is the GPU's idle block when that holds it, and goes
// back to it afterwards, so that the next batch's costs no cudaMalloc (and
// holds what the last one left: nothing may count on fresh memory's zeros;
// every GPU test after the first runs so).
TEST_P(GpuRun, WaveBlocksComeBackToTheIdleBlock) {
  warm_idle_block();
  const uint64_t idle = idle_block_bytes();
  ASSERT_GT(idle, 0u);
  for (int round = 0; round < 2; ++round) {
    // (1,000 instances: their block, up to 4 pages of memory each, fits.)
    auto out = run(request("tid", 1000));
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(out->results[i], i) << round;
    wait_for_background_frees();
    EXPECT_EQ(idle_block_bytes(), idle) << "round " << round;
  }
  // A block larger than it is not taken from it, and it stays; freed, the
  // next start-up makes another.
  GpuResources& gpu = Resources::process().current();
  EXPECT_EQ(gpu.take_idle_block(idle + 1).ptr, nullptr);
  EXPECT_EQ(idle_block_bytes(), idle);
  gpu.free_idle_block();
  EXPECT_EQ(idle_block_bytes(), 0u);
  warm_idle_block();
  EXPECT_GT(idle_block_bytes(), 0u);
}

// Buffers the device refuses: the batch is planned again with less memory
// up to four times, says how often, and runs whole; past that it fails
// with the device's error.
TEST_P(GpuRun, RefusedBuffersArePlannedAgainWithLessMemory) {
  BatchRequest r = request("tid", 5000);
  r.refused_setups = 2;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->replans, 2u);
  for (uint32_t i = 0; i < r.instances; ++i) ASSERT_EQ(out->results[i], i) << i;
  r.refused_setups = 5;
  auto refused = run(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("out of memory"), std::string::npos) << refused.error().message;
  r.refused_setups = 0;
  auto plain = run(r);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->replans, 0u);
}

// Recursive compiled code raises the GPU's CUDA stack while its launcher
// lives, and the GPU gets its size back when the launcher goes.
TEST_P(GpuRun, CompiledRecursionGivesTheCudaStackBack) {
  if (!GetParam()) GTEST_SKIP() << "compiled code only";
  const uint64_t before = cuda_stack_bytes();
  compiled::Request c;
  c.module = compiled();
  c.target = compiled::Target::Gpu;
  c.layout = MemoryLayout::Interleaved;
  c.cache.dir = WW_BINARY_DIR "/test-code-cache";
  auto launcher = compiled::compile_gpu(c, nullptr);
  ASSERT_TRUE(launcher.ok()) << launcher.error().message;
  BatchRequest r = request("fact", 1000);
  r.launcher = *launcher;
  r.args_per_instance = true;
  for (uint32_t i = 0; i < r.instances; ++i) r.args.push_back(i % 13);
  auto out = run_batch(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  CpuRef ref;
  for (uint32_t i = 0; i < 13; ++i)
    ASSERT_EQ(out->results[i], ref.call("fact", {Value::i32(int32_t(i))}).results[0].bits);
  EXPECT_GT(cuda_stack_bytes(), before);
  r.launcher.reset();
  *launcher = nullptr;
  EXPECT_EQ(cuda_stack_bytes(), before);
}

TEST_P(GpuRun, TrapsStayWithTheirInstance) {
  BatchRequest r = request("div", 1024);
  r.args_per_instance = true;
  for (uint32_t i = 0; i < r.instances; ++i) {
    r.args.push_back(i % 3 == 0 ? 0x80000000u : 100);
    r.args.push_back(i % 3 == 0 ? 0xffffffffu : (i % 3 == 1 ? 0 : 7));
  }
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) {
    if (i % 3 == 0) {
      EXPECT_EQ(out->traps[i], uint8_t(TrapCode::IntegerOverflow));
    }
    if (i % 3 == 1) {
      EXPECT_EQ(out->traps[i], uint8_t(TrapCode::IntegerDivideByZero));
    }
    if (i % 3 == 2) {
      EXPECT_EQ(out->traps[i], 0);
      EXPECT_EQ(out->results[i], 14u);
    }
  }
  BatchRequest o = request("oob", 256);
  o.args_per_instance = true;
  for (uint32_t i = 0; i < o.instances; ++i) o.args.push_back(i % 2 ? 65533 : 65532);
  auto oob = run(o);
  ASSERT_TRUE(oob.ok());
  for (uint32_t i = 0; i < o.instances; ++i)
    EXPECT_EQ(oob->traps[i], i % 2 ? uint8_t(TrapCode::MemoryOutOfBounds) : 0) << i;
}

TEST_P(GpuRun, StackExhaustionFuelAndTimeout) {
  BatchRequest deep = request("fact", 64);
  deep.args = {100000};
  auto d = run(deep);
  ASSERT_TRUE(d.ok());
  for (uint8_t t : d->traps) EXPECT_EQ(t, uint8_t(TrapCode::CallStackExhausted));

  BatchRequest fuel = request("spin", 64);
  fuel.args = {0};
  fuel.fuel = 10000;
  auto f = run(fuel);
  ASSERT_TRUE(f.ok());
  for (uint8_t t : f->traps) EXPECT_EQ(t, uint8_t(TrapCode::FuelExhausted));

  BatchRequest spin = request("spin", 64);
  spin.args = {0};
  spin.timeout_s = 0.3;
  auto s = run(spin);
  ASSERT_TRUE(s.ok());
  for (uint32_t i = 0; i < spin.instances; ++i) {
    EXPECT_EQ(s->traps[i], uint8_t(TrapCode::Timeout));
    EXPECT_EQ(s->finished[i], 0);
  }
}

// Ctrl-C reaches instances inside a running wave: the host moves the
// wave's deadline on the device, and they stop as unfinished.
TEST_P(GpuRun, CancelStopsARunningWave) {
  BatchRequest spin = request("spin", 4096);
  spin.args = {0};
  std::atomic<bool> cancel{false};
  spin.cancel = &cancel;
  spin.timeout_s = 60;  // a backstop: without the cancel the wave runs a minute
  std::thread press([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto s = run(spin);
  press.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_LT(took, 20.0);
  for (uint32_t i = 0; i < spin.instances; ++i) {
    EXPECT_EQ(s->finished[i], 0) << i;
    EXPECT_EQ(s->traps[i], uint8_t(TrapCode::Interrupted)) << i;
  }
}

TEST_P(GpuRun, MemoryGrowStopsAtCapacity) {
  BatchRequest r = request("grow", 64);
  r.args = {2};
  r.memory_pages = 3;
  auto out = run(r);
  ASSERT_TRUE(out.ok());
  for (uint64_t v : out->results) EXPECT_EQ(v, 1u);  // 1 -> 3 pages
  r.args = {3};
  out = run(r);
  ASSERT_TRUE(out.ok());
  for (uint64_t v : out->results) EXPECT_EQ(v, 0xffffffffu);  // past the capacity
}

TEST_P(GpuRun, FloatBitsMatchCpu) {
  CpuRef ref;
  std::mt19937_64 rng(42);
  BatchRequest r = request("fmix", 8192);
  r.args_per_instance = true;
  std::vector<std::pair<uint64_t, uint32_t>> in;
  for (uint32_t i = 0; i < r.instances; ++i) {
    uint64_t a = rng();
    uint32_t b = uint32_t(rng());
    if (i % 5 == 0) a = 0x3ff0000000000000ull + (rng() & 0xfffff);  // near 1.0
    r.args.push_back(a);
    r.args.push_back(b);
    in.push_back({a, b});
  }
  auto out = run(r);
  ASSERT_TRUE(out.ok());
  for (uint32_t i = 0; i < r.instances; ++i) {
    auto cpu = ref.call("fmix", {Value::f64_bits(in[i].first), Value::f32_bits(in[i].second)});
    ASSERT_EQ(out->results[i], cpu.results[0].bits) << "instance " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, GpuRun, ::testing::Values(false, true), tier_test_name);

}  // namespace
}  // namespace ww::gpu
