// Resident instances (batch::Resident): batches on the same instances see
// what the batches before left (globals and memory), memory reads and
// writes between them land in each instance, an instance that trapped
// keeps its trap in every later batch, and every backend and tier gives
// the same. The CPU cases run everywhere (CI); the GPU ones where a GPU is
// present.
#include <gtest/gtest.h>

#include <cstring>

#include "backend_ways.h"
#include "batch/batch.h"
#include "batch/resident.h"
#include "exec/gpu/gpu_backend.h"
#include "walker_module.h"

namespace ww::batch {
namespace {

BatchSpec base_spec(uint64_t n, const Way& way, Resident* r) {
  auto cm = compile_module(test::kWalker);
  EXPECT_TRUE(cm.ok());
  BatchSpec s;
  s.module = *cm;
  s.instances = n;
  s.backend = way.backend;
  s.tier = way.tier;
  s.threads = 2;
  s.cache.dir = WW_BINARY_DIR "/test-code-cache";
  s.resident = r;
  return s;
}

// A call of `name` with one i64 argument (a constant, or the index when
// `index`), or none.
BatchSpec call_of(const BatchSpec& base, const char* name, std::optional<int64_t> arg, bool index = false) {
  BatchSpec s = base;
  s.export_name = name;
  if (index) {
    s.args.resize(1);
    s.args[0].kind = ArgSource::Index;
  } else if (arg) {
    s.args.resize(1);
    s.args[0].value = Value::i64(*arg);
  }
  return s;
}

TEST(Resident, BatchesSeeWhatTheBatchesBeforeLeft) {
  const uint64_t n = 300;
  for (const Way& way : ways()) {
    SCOPED_TRACE(name_of(way));
    Resident r(n);
    const BatchSpec base = base_spec(n, way, &r);
    ASSERT_TRUE(start_resident(base, r).ok());
    EXPECT_EQ(r.backend(), way.backend);
    EXPECT_EQ(r.compile.used, way.tier == Tier::Compiled) << r.compile.fallback;
    ASSERT_TRUE(run(call_of(base, "init", std::nullopt, true)).ok());
    // Three batches of one step: instance 3 traps in the first, 1 in the second.
    for (int k = 0; k < 3; ++k) {
      auto step = run(call_of(base, "step", 2));
      ASSERT_TRUE(step.ok()) << step.error().message;
      EXPECT_EQ(step->traps[3], uint8_t(TrapCode::IntegerDivideByZero));
      EXPECT_EQ(step->traps[1], k >= 1 ? uint8_t(TrapCode::IntegerDivideByZero) : 0) << k;
    }
    // Memory between batches: every instance's step count (at 8) read,
    // then set to 100 + i.
    std::vector<uint8_t> counts(n * 8);
    ASSERT_TRUE(r.read_memory(8, 8, counts.data()).ok());
    std::vector<uint8_t> set(n * 8);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t c;
      std::memcpy(&c, &counts[i * 8], 8);
      EXPECT_EQ(c, i == 1 || i == 3 ? 0u : 3u) << i;  // a trapped instance reads as zeros
      const uint64_t v = 100 + i;
      std::memcpy(&set[i * 8], &v, 8);
    }
    ASSERT_TRUE(r.write_memory(8, 8, set.data()).ok());
    // A chain on top: five more steps, then the read-out.
    BatchSpec chain = call_of(base, "step", 2);
    chain.then = {{"step", 4, {chain.args[0]}}, {"result", 1, {}}};
    auto out = run(chain);
    ASSERT_TRUE(out.ok()) << out.error().message;
    for (uint64_t i = 0; i < n; ++i) {
      if (i == 1 || i == 3) {
        EXPECT_EQ(out->traps[i], uint8_t(TrapCode::IntegerDivideByZero)) << i;
        continue;
      }
      ASSERT_EQ(out->traps[i], 0) << i;
      EXPECT_EQ(out->result_bits(i, 0), i + 16) << i;
      EXPECT_EQ(out->result_bits(i, 1), 105 + i) << i;
    }
    // A range past the memory changes nothing and says why.
    Status past = r.write_memory(65536 - 4, 8, set.data());
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.error().message.find("past instance 0's memory (1 pages)"), std::string::npos)
        << past.error().message;
    auto again = run(call_of(base, "result", std::nullopt));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->result_bits(5, 1), 105u + 5);
  }
}

// Writes across granules (and their 8-byte spills) read back as written,
// before and after batches, next to what the instances wrote themselves.
TEST(Resident, MemoryWritesAcrossGranulesStay) {
  const uint64_t n = 40, at = 250, len = 600;
  for (const Way& way : ways()) {
    SCOPED_TRACE(name_of(way));
    Resident r(n);
    const BatchSpec base = base_spec(n, way, &r);
    ASSERT_TRUE(start_resident(base, r).ok());
    std::vector<uint8_t> pattern(n * len);
    for (uint64_t k = 0; k < pattern.size(); ++k) pattern[k] = uint8_t(k * 7 + k / len);
    ASSERT_TRUE(r.write_memory(at, len, pattern.data()).ok());
    // A second, overlapping write of a few bytes in the middle.
    std::vector<uint8_t> patch(n * 3, 0xAB);
    ASSERT_TRUE(r.write_memory(at + 255, 3, patch.data()).ok());
    for (uint64_t i = 0; i < n; ++i)
      for (uint64_t k = 255; k < 258; ++k) pattern[i * len + k] = 0xAB;
    for (int round = 0; round < 2; ++round) {
      std::vector<uint8_t> back(n * len);
      ASSERT_TRUE(r.read_memory(at, len, back.data()).ok());
      ASSERT_EQ(back, pattern) << "round " << round;
      // The instances' own writes (the step count at 8) land beside them.
      ASSERT_TRUE(run(call_of(base, "init", 100)).ok());
      ASSERT_TRUE(run(call_of(base, "step", 1)).ok());
    }
    std::vector<uint8_t> count(n * 8);
    ASSERT_TRUE(r.read_memory(8, 8, count.data()).ok());
    EXPECT_EQ(count[0], 1);
  }
}

TEST(Resident, BatchesMustMatchTheInstances) {
  Resident r(10);
  const BatchSpec base = base_spec(10, {Backend::Cpu, Tier::Interp}, &r);
  BatchSpec early = call_of(base, "result", std::nullopt);
  auto e = run(early);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("before start_resident"), std::string::npos) << e.error().message;
  ASSERT_TRUE(start_resident(base, r).ok());
  BatchSpec wrong = call_of(base, "result", std::nullopt);
  wrong.instances = 11;
  e = run(wrong);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("11 instances on 10 resident ones"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace ww::batch
