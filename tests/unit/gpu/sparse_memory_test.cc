// Sparse linear memory on the GPU: the layout choice and the plan (run
// everywhere), and on a GPU, instances that read the image, write chunks of
// it, grow their memory and run out of a small pool, against answers
// computed here.
#include <gtest/gtest.h>

#include "exec/gpu/gpu_backend.h"
#include "exec/gpu/plan/gpu_image.h"
#include "exec/gpu/plan/gpu_plan.h"
#include "gpu_test_support.h"
#include "intrinsics/gpu_batch.h"
#include "store/store.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (memory 4 8)
  (data (i32.const 100) "\2a\00\00\00")
  (data (i32.const 70000) "\07\00\00\00")
  ;; Stores i + p at 4096 + p * 65536 for p < pages, a byte into the data
  ;; word at 100, then reads everything back: image, written and untouched.
  (func (export "touch") (param $i i32) (param $pages i32) (result i32)
    (local $p i32) (local $acc i32)
    (i32.store8 (i32.const 101) (local.get $i))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $p) (local.get $pages)))
      (i32.store (i32.add (i32.mul (local.get $p) (i32.const 65536)) (i32.const 4096))
                 (i32.add (local.get $i) (local.get $p)))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $l)))
    (local.set $p (i32.const 0))
    (block $d2 (loop $l2
      (br_if $d2 (i32.ge_u (local.get $p) (local.get $pages)))
      (local.set $acc (i32.add (local.get $acc)
        (i32.load (i32.add (i32.mul (local.get $p) (i32.const 65536)) (i32.const 4096)))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $l2)))
    (i32.add (i32.add (local.get $acc) (i32.load (i32.const 100)))
             (i32.add (i32.load (i32.const 70000)) (i32.load (i32.const 200000)))))
  ;; Grows by 4 pages, writes i at the last word of the new memory and
  ;; reads it back with a word of the new memory never written (zero).
  (func (export "grow") (param $i i32) (result i32)
    (drop (memory.grow (i32.const 4)))
    (i32.store (i32.const 524284) (local.get $i))
    (i32.add (i32.load (i32.const 524284)) (i32.load (i32.const 400000))))
)
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x02, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01,
    0x7f, 0x01, 0x7f, 0x03, 0x03, 0x02, 0x00, 0x01, 0x05, 0x04, 0x01, 0x01, 0x04, 0x08, 0x07, 0x10, 0x02, 0x05, 0x74,
    0x6f, 0x75, 0x63, 0x68, 0x00, 0x00, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x01, 0x0a, 0x9d, 0x01, 0x02, 0x7b, 0x01,
    0x02, 0x7f, 0x41, 0xe5, 0x00, 0x20, 0x00, 0x3a, 0x00, 0x00, 0x02, 0x40, 0x03, 0x40, 0x20, 0x02, 0x20, 0x01, 0x4f,
    0x0d, 0x01, 0x20, 0x02, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x41, 0x80, 0x20, 0x6a, 0x20, 0x00, 0x20, 0x02, 0x6a, 0x36,
    0x02, 0x00, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x21, 0x02, 0x0c, 0x00, 0x0b, 0x0b, 0x41, 0x00, 0x21, 0x02, 0x02, 0x40,
    0x03, 0x40, 0x20, 0x02, 0x20, 0x01, 0x4f, 0x0d, 0x01, 0x20, 0x03, 0x20, 0x02, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x41,
    0x80, 0x20, 0x6a, 0x28, 0x02, 0x00, 0x6a, 0x21, 0x03, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x21, 0x02, 0x0c, 0x00, 0x0b,
    0x0b, 0x20, 0x03, 0x41, 0xe4, 0x00, 0x28, 0x02, 0x00, 0x6a, 0x41, 0xf0, 0xa2, 0x04, 0x28, 0x02, 0x00, 0x41, 0xc0,
    0x9a, 0x0c, 0x28, 0x02, 0x00, 0x6a, 0x6a, 0x0b, 0x1f, 0x00, 0x41, 0x04, 0x40, 0x00, 0x1a, 0x41, 0xfc, 0xff, 0x1f,
    0x20, 0x00, 0x36, 0x02, 0x00, 0x41, 0xfc, 0xff, 0x1f, 0x28, 0x02, 0x00, 0x41, 0x80, 0xb5, 0x18, 0x28, 0x02, 0x00,
    0x6a, 0x0b, 0x0b, 0x16, 0x02, 0x00, 0x41, 0xe4, 0x00, 0x0b, 0x04, 0x2a, 0x00, 0x00, 0x00, 0x00, 0x41, 0xf0, 0xa2,
    0x04, 0x0b, 0x04, 0x07, 0x00, 0x00, 0x00,
};

std::shared_ptr<const CompiledModule> sparse_module() {
  static auto m = compile_or_fail(kModule);
  return m;
}

// An instance's part of a chunk: the read-only module's 4 pages, the
// touch module's 8 (memory.grow is used: up to the declared max).
const uint64_t kFourPagePart = uint64_t(1) << sparse_chunk_shift(4 * kPageSize);
const uint64_t kEightPagePart = uint64_t(1) << sparse_chunk_shift(8 * kPageSize);

uint32_t export_index(const std::string& name) { return export_func(sparse_module()->module, name); }

// touch(i, pages) as the module computes it.
uint32_t expected_touch(uint32_t i, uint32_t pages) {
  uint32_t acc = 0;
  for (uint32_t p = 0; p < pages; ++p) acc += i + p;
  return acc + (42u | ((i & 255u) << 8)) + 7u;
}

TEST(SparsePlan, AutoPicksDenseWhileOneWaveHoldsTheBatch) {
  const Module& m = sparse_module()->module;
  const uint64_t free = 100ull << 30;
  // 4 pages (256 KiB) per instance: 1000 fit one dense wave, 1M do not.
  EXPECT_EQ(choose_layout(m, 1000, 0, free), MemoryLayout::Interleaved);
  EXPECT_EQ(choose_layout(m, 1000000, 0, free), MemoryLayout::Sparse);
}

// A request for touch() over n instances in the sparse layout (its
// arguments the caller's).
BatchRequest touch_plan_request(uint32_t n) {
  BatchRequest req;
  req.module = sparse_module();
  req.func_index = export_index("touch");
  req.instances = n;
  req.layout = MemoryLayout::Sparse;
  return req;
}

TEST(SparsePlan, ChunksGrowWithCapacityAndThePoolTakesTheRest) {
  EXPECT_EQ(sparse_chunk_shift(4 * kPageSize), 8u);   // 256 B per instance
  EXPECT_EQ(sparse_chunk_shift(16 * kPageSize), 8u);  // 1 MiB: a table of 1 KiB per instance
  EXPECT_EQ(sparse_chunk_shift(32 * kPageSize), 9u);
  EXPECT_EQ(sparse_chunk_shift(16384 * kPageSize), 16u);
  for (uint64_t pages : {1, 17, 1024, 4096}) {
    const uint64_t cap = pages * kPageSize;
    EXPECT_LE((cap >> sparse_chunk_shift(cap)) * 8 / 32, kSparseTableBytesPerInstance) << pages;
  }
  Store store;
  auto inst = store.instantiate(sparse_module(), {});
  ASSERT_TRUE(std::holds_alternative<uint32_t>(inst));
  auto img = build_image(store.impl(), std::get<uint32_t>(inst), {});
  ASSERT_TRUE(img.ok());
  BatchRequest req = touch_plan_request(16u << 20);
  // Compiled code's plan: no interpreter frames per instance.
  auto plan = plan_for(req, *img, 139ull << 30, /*frames=*/false);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->layout, MemoryLayout::Sparse);
  EXPECT_EQ(plan->memory_pages, 8u);  // memory.grow is used: up to the declared max
  // 16M instances of a 512 KiB memory in one wave: the table (512 B), not
  // the capacity, is what every instance holds.
  EXPECT_EQ(plan->wave_size, req.instances);
  EXPECT_LT(plan->overhead_bytes_per_instance, 600u);
  EXPECT_GE(plan->pool_bytes, uint64_t(req.instances) * 1024);
  req.max_pool_bytes = 64 << 20;
  plan = plan_for(req, *img, 139ull << 30, false);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pool_bytes, 64u << 20);
  EXPECT_EQ(plan->first_wave, (64u << 20) / (4 * kEightPagePart));
  // --gpu-max-wave below a warp is a wave size, not a batch too large.
  req.instances = 100;
  req.max_wave = 16;
  plan = plan_for(req, *img, 139ull << 30, false);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->wave_size, 16u);
}

/* wat2wasm of: a memory that nothing writes (only the data segment).
(module
  (import "gpu" "get_thread_id" (func $tid (result i32)))
  (memory 4)
  (data (i32.const 100) "\2a\00\00\00")
  (func (export "read") (result i32)
    (i32.add (i32.load (i32.const 100)) (call $tid))))
*/
const std::vector<uint8_t> kReadOnlyModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x15,
    0x01, 0x03, 0x67, 0x70, 0x75, 0x0d, 0x67, 0x65, 0x74, 0x5f, 0x74, 0x68, 0x72, 0x65, 0x61, 0x64, 0x5f,
    0x69, 0x64, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x05, 0x03, 0x01, 0x00, 0x04, 0x07, 0x08, 0x01, 0x04,
    0x72, 0x65, 0x61, 0x64, 0x00, 0x01, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x41, 0xe4, 0x00, 0x28, 0x02, 0x00,
    0x10, 0x00, 0x6a, 0x0b, 0x0b, 0x0b, 0x01, 0x00, 0x41, 0xe4, 0x00, 0x0b, 0x04, 0x2a, 0x00, 0x00, 0x00,
};

std::shared_ptr<const CompiledModule> read_only_module() {
  static auto m = compile_or_fail(kReadOnlyModule);
  return m;
}

// The image of `module` with its imports bound as a batch binds them
// (the gpu intrinsics by id; `host` for every import: served by the host).
Result<GpuImage> image_of(const std::shared_ptr<const CompiledModule>& module, bool host) {
  static GpuBatch batch;
  static GpuContext ctx{&batch, 0};
  Store store;
  auto imports = link_gpu_imports(store, module->module, &ctx);
  if (!imports.ok()) return imports.error();
  auto inst = store.instantiate(module, *imports);
  if (!std::holds_alternative<uint32_t>(inst)) return make_error(kNoOffset, "instantiate failed");
  std::vector<uint8_t> intr;
  for (const Import& im : module->module.imports)
    intr.push_back(host ? kDevHostImport : uint8_t(intrinsics::find_intrinsic(im.field)->id));
  return build_image(store.impl(), std::get<uint32_t>(inst), intr);
}

TEST(SparsePlan, MemoryThatNothingWritesNeedsNoPool) {
  auto img = image_of(read_only_module(), false);
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_FALSE(img->writes_memory);
  // The image holds the memory up to its last non-zero byte (the data
  // segment's 0x2a at 100); the rest of the 4 pages is zeros.
  EXPECT_EQ(img->memory.size(), 101u);
  EXPECT_EQ(img->init_pages, 4u);
  BatchRequest req;
  req.module = read_only_module();
  req.func_index = export_func(req.module->module, "read");
  req.instances = 8u << 20;
  req.layout = MemoryLayout::Sparse;
  auto plan = plan_for(req, *img, 139ull << 30, /*frames=*/false);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  // One chunk of 32 parts, the whole batch in the first wave, and one
  // chunk table that every group reads (4 pages of 256 B parts: a table
  // per group would be 256 bytes an instance).
  EXPECT_EQ(plan->pool_bytes, 32u * kFourPagePart);
  EXPECT_EQ(plan->first_wave, req.instances);
  EXPECT_TRUE(plan->chunk_table_shared);
  const uint64_t shared_overhead = plan->overhead_bytes_per_instance;
  // Records the host writes in need the pool and a table per group again...
  std::vector<uint8_t> rec(4);
  req.mem_in.push_back({0, 4, rec.data()});
  plan = plan_for(req, *img, 139ull << 30, false);
  ASSERT_TRUE(plan.ok());
  EXPECT_GE(plan->pool_bytes, kSparsePoolStart);
  EXPECT_FALSE(plan->chunk_table_shared);
  EXPECT_EQ(plan->overhead_bytes_per_instance, shared_overhead + 4 + (4 * kPageSize / kFourPagePart) * 8 / 32);
  // ...as do an import the host serves (it may write memory) and stores.
  auto host = image_of(read_only_module(), true);
  ASSERT_TRUE(host.ok());
  EXPECT_TRUE(host->writes_memory);
  Store store;
  auto inst = store.instantiate(sparse_module(), {});
  ASSERT_TRUE(std::holds_alternative<uint32_t>(inst));
  auto stores = build_image(store.impl(), std::get<uint32_t>(inst), {});
  ASSERT_TRUE(stores.ok());
  EXPECT_TRUE(stores->writes_memory);
}

// The GPU's idle block, kept between batches, costs nothing to use: the
// first pool takes its room beyond the wave's other buffers (otherwise
// SQLite's 10K instances run their first wave again from a 1 GiB pool),
// while the first wave stays sized from the allowance. Not past the pool's
// own limit, not for a first pool the caller set, and not when the rule's
// pool is larger.
TEST(SparsePlan, TheFirstPoolTakesTheIdleBlocksRoom) {
  auto img = image_of(sparse_module(), false);
  ASSERT_TRUE(img.ok()) << img.error().message;
  BatchRequest req = touch_plan_request(10000);
  const uint64_t idle = 4ull << 30, free_bytes = 139ull << 30;  // under the pool's 5 GiB limit
  auto base = plan_for(req, *img, free_bytes, false);
  auto roomy = plan_for(req, *img, free_bytes, false, 0, 0, idle);
  ASSERT_TRUE(base.ok() && roomy.ok());
  EXPECT_EQ(base->pool_bytes, kSparsePoolStart / (32 * kEightPagePart) * (32 * kEightPagePart));
  const uint64_t group_chunk = 32 * kEightPagePart;
  const uint64_t others =
      (base->wave_size + 31) / 32 * 32 * base->overhead_bytes_per_instance + 2 * group_chunk + kIdleBlockMargin;
  // All of it but the module's arrays and the intrinsics' buffers (a few
  // KiB here), in whole chunks; the wave's block still fits the idle block.
  EXPECT_EQ(roomy->pool_bytes % group_chunk, 0u);
  EXPECT_LE(roomy->pool_bytes + others, idle);
  EXPECT_GE(roomy->pool_bytes + others + (1u << 20), idle);
  EXPECT_EQ(roomy->first_wave, base->first_wave);
  EXPECT_EQ(roomy->wave_size, base->wave_size);
  EXPECT_EQ(roomy->pool_bytes_max, base->pool_bytes_max);
  // The pool's limit holds.
  req.max_pool_bytes = 2ull << 30;
  auto capped = plan_for(req, *img, free_bytes, false, 0, 0, idle);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->pool_bytes, 2ull << 30);
  req.max_pool_bytes = 0;
  // A first pool the caller set stays.
  req.first_pool_bytes = 64ull << 20;
  auto set = plan_for(req, *img, free_bytes, false, 0, 0, idle);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->pool_bytes, 64ull << 20);
  req.first_pool_bytes = 0;
  // An idle block smaller than the rule's pool leaves the rule's.
  auto small = plan_for(req, *img, free_bytes, false, 0, 0, 512ull << 20);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->pool_bytes, base->pool_bytes);
}

/* wat2wasm of: segments only, then a start function that writes past them.
(module (memory 2) (data (i32.const 16) "\01\00\00"))
(module (memory 2) (data (i32.const 16) "\01\00\00")
  (func $s (i32.store8 (i32.const 70000) (i32.const 7))) (start $s))
*/
const std::vector<uint8_t> kSegmentsOnly = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00,
    0x02, 0x0b, 0x09, 0x01, 0x00, 0x41, 0x10, 0x0b, 0x03, 0x01, 0x00, 0x00,
};
const std::vector<uint8_t> kStartWrites = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00,
    0x05, 0x03, 0x01, 0x00, 0x02, 0x08, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x41, 0xf0, 0xa2, 0x04, 0x41,
    0x07, 0x3a, 0x00, 0x00, 0x0b, 0x0b, 0x09, 0x01, 0x00, 0x41, 0x10, 0x0b, 0x03, 0x01, 0x00, 0x00,
};

TEST(GpuImage, AFreshInstanceIsScannedOnlyToItsSegmentsUnlessItsStartRan) {
  Store store;
  auto inst = store.instantiate(compile_or_fail(kSegmentsOnly), {});
  ASSERT_TRUE(std::holds_alternative<uint32_t>(inst));
  const uint32_t id = std::get<uint32_t>(inst);
  auto fresh = build_image(store.impl(), id, {}, 0, /*fresh=*/true);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_EQ(fresh->memory.size(), 17u);  // up to the segment's last non-zero byte
  // What ran in the instance since (an --init export) is found by the
  // whole scan, which an instance that is not fresh gets.
  store.impl().memories[store.impl().instances[id].memories[0]].data[70000] = 9;
  auto after_init = build_image(store.impl(), id, {});
  ASSERT_TRUE(after_init.ok());
  ASSERT_EQ(after_init->memory.size(), 70001u);
  EXPECT_EQ(after_init->memory[70000], 9);
  // A start function may write anywhere: its instance is scanned whole.
  Store started;
  auto s = started.instantiate(compile_or_fail(kStartWrites), {});
  ASSERT_TRUE(std::holds_alternative<uint32_t>(s));
  auto img = build_image(started.impl(), std::get<uint32_t>(s), {}, 0, /*fresh=*/true);
  ASSERT_TRUE(img.ok());
  ASSERT_EQ(img->memory.size(), 70001u);
  EXPECT_EQ(img->memory[70000], 7);
}

// The interpreter kernel, compiled code, and compiled code whose misses
// are calls (what a module with many accesses gets: these are small).
enum class SparseTier { Interpreter, Compiled, CompiledMissCalls };

class SparseRun : public ::testing::TestWithParam<SparseTier> {
 protected:
  void SetUp() override {
    DeviceInfo d = probe_device();
    if (!d.available) GTEST_SKIP() << "no GPU: " << d.reason;
  }
  Result<RunResult> run(BatchRequest r) {
    const SparseTier t = GetParam();
    return run_on_tier(std::move(r), t != SparseTier::Interpreter,
                       t == SparseTier::CompiledMissCalls ? SparseMisses::Calls : SparseMisses::Inline);
  }
  // `n` instances of `module`'s `name`, each called with its own index.
  static BatchRequest index_request(std::shared_ptr<const CompiledModule> module, const std::string& name, uint32_t n) {
    BatchRequest r;
    r.func_index = export_func(module->module, name);
    r.module = std::move(module);
    r.instances = n;
    r.layout = MemoryLayout::Sparse;
    r.args = {0};
    r.arg_index_kind = {1};  // the instance's index
    return r;
  }
  BatchRequest touch_request(uint32_t n) {
    BatchRequest r = touch_plan_request(n);
    r.args_per_instance = true;
    for (uint32_t i = 0; i < n; ++i) {
      r.args.push_back(i);
      r.args.push_back(1 + i % 4);
    }
    return r;
  }
  void expect_touch(const RunResult& out, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(out.traps[i], 0) << "instance " << i << ": " << trap_message(TrapCode(out.traps[i]));
      ASSERT_EQ(uint32_t(out.results[i]), expected_touch(i, 1 + i % 4)) << "instance " << i;
    }
  }
};

TEST_P(SparseRun, ReadsTheImageAndWritesOnlyItsOwnChunks) {
  const uint32_t n = 100003;  // not a multiple of 32
  auto out = run(touch_request(n));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->plan.layout, MemoryLayout::Sparse);
  expect_touch(*out, n);
  // At most 5 chunk parts per instance were written, far below the 512
  // KiB reserved.
  ASSERT_GT(out->pool_wave_instances, 0u);
  EXPECT_LE(out->pool_bytes_used / out->pool_wave_instances, 6 * kEightPagePart);
  EXPECT_EQ(out->pool_reruns, 0u);
}

TEST_P(SparseRun, AnExhaustedPoolRunsTheRestInLaterWaves) {
  const uint32_t n = 100003;
  BatchRequest r = touch_request(n);
  // Five chunk parts per instance, more than the first wave is sized for,
  // from a pool of about 3,300 instances' worth that may not grow.
  for (uint32_t i = 0; i < n; ++i) r.args[2 * i + 1] = 4;
  r.max_pool_bytes = 3300 * 5 * kEightPagePart;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(uint32_t(out->results[i]), expected_touch(i, 4)) << i;
  EXPECT_GT(out->pool_reruns, 0u);
  EXPECT_GT(out->plan.waves, 10u);
  EXPECT_LE(out->pool_bytes_used, r.max_pool_bytes);
}

TEST_P(SparseRun, APoolThatRunsOutGrowsForTheNextWave) {
  const uint32_t n = 100003;
  BatchRequest r = touch_request(n);
  // Five chunk parts per instance, more than the first wave is sized for.
  for (uint32_t i = 0; i < n; ++i) r.args[2 * i + 1] = 4;
  r.first_pool_bytes = 3300 * 5 * kEightPagePart;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(uint32_t(out->results[i]), expected_touch(i, 4)) << i;
  EXPECT_GT(out->pool_reruns, 0u);
  // Grown for the rest of the batch, the pool held it in a wave or two.
  EXPECT_GT(out->pool_bytes_used, r.first_pool_bytes);
  EXPECT_LE(out->plan.waves, 4u);
}

TEST_P(SparseRun, GrowCostsNothingUntilWritten) {
  BatchRequest r = index_request(sparse_module(), "grow", 4099);
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) ASSERT_EQ(uint32_t(out->results[i]), i) << "instance " << i;
  // One chunk part per instance: the word it stored.
  EXPECT_LE(out->pool_bytes_used / out->pool_wave_instances, kEightPagePart + 64);
}

TEST_P(SparseRun, MemoryInAndOutGoThroughChunks) {
  const uint32_t n = 5000;
  BatchRequest r = touch_request(n);
  std::vector<uint8_t> in(uint64_t(n) * 8), out_bytes(uint64_t(n) * 12);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t k = 0; k < 8; ++k) in[uint64_t(i) * 8 + k] = uint8_t(i * 7 + k);
  // Record i at 200004 (never otherwise written); read back 12 bytes
  // from 200000: the 4 zeros touch() reads, then the record.
  r.mem_in.push_back({200004, 8, in.data()});
  r.mem_out.push_back({200000, 12, out_bytes.data()});
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_touch(*out, n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t k = 0; k < 4; ++k) ASSERT_EQ(out_bytes[uint64_t(i) * 12 + k], 0) << i;
    for (uint32_t k = 0; k < 8; ++k) ASSERT_EQ(out_bytes[uint64_t(i) * 12 + 4 + k], uint8_t(i * 7 + k)) << i;
  }
}

TEST_P(SparseRun, MemoryThatNothingWritesRunsInOneWaveFromTheImage) {
  BatchRequest r;
  r.module = read_only_module();
  r.func_index = export_func(r.module->module, "read");
  r.instances = 1000003;
  r.layout = MemoryLayout::Sparse;
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) ASSERT_EQ(uint32_t(out->results[i]), 42u + i) << "instance " << i;
  EXPECT_EQ(out->plan.waves, 1u);
  EXPECT_EQ(out->plan.pool_bytes, 32u * kFourPagePart);
  EXPECT_EQ(out->pool_bytes_used, 0u);
  EXPECT_EQ(out->pool_reruns, 0u);
  // In waves of at most 65,536, every wave is that size: a wave that took
  // nothing from the pool does not shrink the next.
  r.max_wave = 65536;
  out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  for (uint32_t i = 0; i < r.instances; ++i) ASSERT_EQ(uint32_t(out->results[i]), 42u + i) << "instance " << i;
  EXPECT_EQ(out->plan.waves, (r.instances + 65535) / 65536);
}

/* wat2wasm of:
(module
  (memory 1)
  (data (i32.const 100) "\2a\00\00\00")
  (data (i32.const 300) "\05\00\00\00")
  (data (i32.const 600) "\09\00\00\00")
  (data (i32.const 900) "\0b\00\00\00")
  (data (i32.const 1020) "\01\00\00\00\02\00\00\00")
  (func $poke (param $i i32) (i32.store (i32.const 104) (local.get $i)))
  ;; Each line reads a word of the image, writes its chunk some other way
  ;; (a call, a store, memory.fill, an unaligned store) and reads it again.
  (func (export "stale") (param $i i32) (result i32)
    (local $acc i32)
    (local.set $acc (i32.load (i32.const 100)))
    (call $poke (local.get $i))
    (local.set $acc (i32.add (local.get $acc)
      (i32.mul (i32.add (i32.load (i32.const 100)) (i32.load (i32.const 104))) (i32.const 3))))
    (local.set $acc (i32.add (local.get $acc) (i32.mul (i32.load (i32.const 300)) (i32.const 5))))
    (i32.store8 (i32.const 301) (local.get $i))
    (local.set $acc (i32.add (local.get $acc) (i32.mul (i32.load (i32.const 300)) (i32.const 7))))
    (local.set $acc (i32.add (local.get $acc) (i32.mul (i32.load (i32.const 600)) (i32.const 11))))
    (memory.fill (i32.const 600) (local.get $i) (i32.const 1))
    (local.set $acc (i32.add (local.get $acc) (i32.mul (i32.load (i32.const 600)) (i32.const 13))))
    (local.set $acc (i32.add (local.get $acc) (i32.mul (i32.load (i32.const 900)) (i32.const 17))))
    (i32.store offset=1 (i32.const 900) (local.get $i))
    (local.set $acc (i32.add (local.get $acc) (i32.mul (i32.load (i32.const 900)) (i32.const 19))))
    (local.set $acc (i32.add (local.get $acc)
      (i32.wrap_i64 (i64.rotl (i64.load (i32.const 1020)) (i64.const 7)))))
    (i64.store (i32.const 1020) (i64.extend_i32_u (local.get $i)))
    (i32.add (local.get $acc) (i32.wrap_i64 (i64.rotl (i64.load (i32.const 1020)) (i64.const 9))))))
*/
const std::vector<uint8_t> kStaleModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x01,
    0x7f, 0x03, 0x03, 0x02, 0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x09, 0x01, 0x05, 0x73, 0x74, 0x61, 0x6c,
    0x65, 0x00, 0x01, 0x0a, 0xc6, 0x01, 0x02, 0x0a, 0x00, 0x41, 0xe8, 0x00, 0x20, 0x00, 0x36, 0x02, 0x00, 0x0b, 0xb8,
    0x01, 0x01, 0x01, 0x7f, 0x41, 0xe4, 0x00, 0x28, 0x02, 0x00, 0x21, 0x01, 0x20, 0x00, 0x10, 0x00, 0x20, 0x01, 0x41,
    0xe4, 0x00, 0x28, 0x02, 0x00, 0x41, 0xe8, 0x00, 0x28, 0x02, 0x00, 0x6a, 0x41, 0x03, 0x6c, 0x6a, 0x21, 0x01, 0x20,
    0x01, 0x41, 0xac, 0x02, 0x28, 0x02, 0x00, 0x41, 0x05, 0x6c, 0x6a, 0x21, 0x01, 0x41, 0xad, 0x02, 0x20, 0x00, 0x3a,
    0x00, 0x00, 0x20, 0x01, 0x41, 0xac, 0x02, 0x28, 0x02, 0x00, 0x41, 0x07, 0x6c, 0x6a, 0x21, 0x01, 0x20, 0x01, 0x41,
    0xd8, 0x04, 0x28, 0x02, 0x00, 0x41, 0x0b, 0x6c, 0x6a, 0x21, 0x01, 0x41, 0xd8, 0x04, 0x20, 0x00, 0x41, 0x01, 0xfc,
    0x0b, 0x00, 0x20, 0x01, 0x41, 0xd8, 0x04, 0x28, 0x02, 0x00, 0x41, 0x0d, 0x6c, 0x6a, 0x21, 0x01, 0x20, 0x01, 0x41,
    0x84, 0x07, 0x28, 0x02, 0x00, 0x41, 0x11, 0x6c, 0x6a, 0x21, 0x01, 0x41, 0x84, 0x07, 0x20, 0x00, 0x36, 0x02, 0x01,
    0x20, 0x01, 0x41, 0x84, 0x07, 0x28, 0x02, 0x00, 0x41, 0x13, 0x6c, 0x6a, 0x21, 0x01, 0x20, 0x01, 0x41, 0xfc, 0x07,
    0x29, 0x03, 0x00, 0x42, 0x07, 0x89, 0xa7, 0x6a, 0x21, 0x01, 0x41, 0xfc, 0x07, 0x20, 0x00, 0xad, 0x37, 0x03, 0x00,
    0x20, 0x01, 0x41, 0xfc, 0x07, 0x29, 0x03, 0x00, 0x42, 0x09, 0x89, 0xa7, 0x6a, 0x0b, 0x0b, 0x37, 0x05, 0x00, 0x41,
    0xe4, 0x00, 0x0b, 0x04, 0x2a, 0x00, 0x00, 0x00, 0x00, 0x41, 0xac, 0x02, 0x0b, 0x04, 0x05, 0x00, 0x00, 0x00, 0x00,
    0x41, 0xd8, 0x04, 0x0b, 0x04, 0x09, 0x00, 0x00, 0x00, 0x00, 0x41, 0x84, 0x07, 0x0b, 0x04, 0x0b, 0x00, 0x00, 0x00,
    0x00, 0x41, 0xfc, 0x07, 0x0b, 0x08, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00};

// stale(i) as the module computes it.
uint32_t expected_stale(uint32_t i) {
  uint32_t acc = 42;
  acc += (42 + i) * 3;
  acc += 5 * 5;
  acc += (5u | (i & 255u) << 8) * 7;
  acc += 9 * 11;
  acc += (i & 255u) * 13;
  acc += 11 * 17;
  acc += (11u | i << 8) * 19;
  acc += 128;  // 0x0000000200000001 rotated left by 7, low word
  return acc + (i << 9);
}

// Functions keep translations of sparse memory in registers: a write to a
// chunk the function has read from the image, by any path (a callee, a
// bulk op, an unaligned store, its own stores), must send its next read of
// that chunk to the new part.
TEST_P(SparseRun, ReadsAfterAWriteByAnotherPathSeeTheWrite) {
  BatchRequest r = index_request(compile_or_fail(kStaleModule), "stale", 1000);
  auto out = run(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->plan.layout, MemoryLayout::Sparse);
  for (uint32_t i = 0; i < r.instances; ++i) {
    ASSERT_EQ(out->traps[i], 0) << "instance " << i;
    ASSERT_EQ(uint32_t(out->results[i]), expected_stale(i)) << "instance " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, SparseRun,
                         ::testing::Values(SparseTier::Interpreter, SparseTier::Compiled,
                                           SparseTier::CompiledMissCalls),
                         [](const ::testing::TestParamInfo<SparseTier>& i) {
                           return i.param == SparseTier::Interpreter ? std::string("Interpreter")
                                  : i.param == SparseTier::Compiled  ? std::string("Compiled")
                                                                     : std::string("CompiledMissCalls");
                         });

}  // namespace
}  // namespace ww::gpu
