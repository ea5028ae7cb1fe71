// What the GPU tests share: running a request on the interpreter kernel or
// on compiled code built for the request's fuel, timeout and layout, as the
// batch engine does.
#pragma once

#include <gtest/gtest.h>

#include "compiled/compiled_tier.h"
#include "exec/gpu/gpu_backend.h"
#include "store/store.h"

namespace ww::gpu {

// The test's module, compiled once (a failure fails the test that asks).
inline std::shared_ptr<const CompiledModule> compile_or_fail(const std::vector<uint8_t>& bytes) {
  auto r = compile_module(bytes);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? *r : nullptr;
}

// Module function index of export `name`.
inline uint32_t export_func(const Module& m, const std::string& name) {
  for (const Export& e : m.exports)
    if (e.name == name && e.kind == ExternKind::Func) return e.index;
  ADD_FAILURE() << "no export " << name;
  return 0;
}

// `r` with compiled code for it as its launcher, or as it is for the
// interpreter kernel.
inline Result<BatchRequest> on_tier(BatchRequest r, bool compiled_tier, SparseMisses misses = SparseMisses::BySize) {
  if (compiled_tier) {
    compiled::Request c;
    c.module = r.module;
    c.target = compiled::Target::Gpu;
    c.metered = r.fuel != 0;
    c.deadline = r.timeout_s > 0;
    c.layout = r.layout;
    c.sparse_misses = misses;
    c.cache.dir = WW_BINARY_DIR "/test-code-cache";
    auto l = compiled::compile_gpu(c, nullptr);
    if (!l.ok()) return l.error();
    r.launcher = *l;
  }
  return r;
}

inline Result<RunResult> run_on_tier(BatchRequest r, bool compiled_tier, SparseMisses misses = SparseMisses::BySize) {
  auto req = on_tier(std::move(r), compiled_tier, misses);
  if (!req.ok()) return req.error();
  auto out = run_batch(*req);
  if (out.ok()) {
    EXPECT_EQ(out->tier, compiled_tier ? "compiled" : "interpreter");
  }
  return out;
}

// Every GPU test runs on the interpreter kernel and on compiled code
// (NVRTC), which must agree with the CPU alike; without a GPU they skip.
class GpuTierTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    DeviceInfo d = probe_device();
    if (!d.available) GTEST_SKIP() << "no GPU: " << d.reason;
  }
  Result<RunResult> run(BatchRequest r) { return run_on_tier(std::move(r), GetParam()); }
};

inline std::string tier_test_name(const ::testing::TestParamInfo<bool>& i) {
  return i.param ? std::string("Compiled") : std::string("Interpreter");
}

}  // namespace ww::gpu
