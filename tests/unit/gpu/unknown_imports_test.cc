// Imports nothing provides on the GPU (BatchRequest::unknown_imports): the
// device answers their calls itself, trapping with UnknownImport (the
// import as the trap's site) or returning zeros, without a host pass, in
// the interpreter kernel and in compiled code, directly and through a
// table; beside a host-call server, only the imports it serves leave.
// Runs where a GPU is present and skips elsewhere.
#include <gtest/gtest.h>

#include <atomic>

#include "exec/gpu/device/dev_wasi_ids.h"
#include "exec/gpu/gpu_backend.h"
#include "gpu_test_support.h"

namespace ww::gpu {
namespace {

/* wat2wasm of:
(module
  (type $ii (func (param i32) (result i32)))
  (import "env" "foo" (func $foo (type $ii)))
  (import "env" "bar" (func $bar (result i64)))
  (memory 1)
  (table 1 funcref)
  (elem (i32.const 0) $foo)
  ;; Odd instances call env.foo; even ones never do.
  (func (export "run") (param i32) (result i32)
    (if (result i32) (i32.and (local.get 0) (i32.const 1))
      (then (call $foo (local.get 0)))
      (else (i32.add (local.get 0) (i32.const 1)))))
  (func (export "indirect") (param i32) (result i32)
    (call_indirect (type $ii) (local.get 0) (i32.const 0)))
  (func (export "bar") (result i64) (call $bar)))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60,
    0x00, 0x01, 0x7e, 0x02, 0x15, 0x02, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x66, 0x6f, 0x6f, 0x00, 0x00, 0x03,
    0x65, 0x6e, 0x76, 0x03, 0x62, 0x61, 0x72, 0x00, 0x01, 0x03, 0x04, 0x03, 0x00, 0x00, 0x01, 0x04, 0x04,
    0x01, 0x70, 0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x18, 0x03, 0x03, 0x72, 0x75, 0x6e, 0x00,
    0x02, 0x08, 0x69, 0x6e, 0x64, 0x69, 0x72, 0x65, 0x63, 0x74, 0x00, 0x03, 0x03, 0x62, 0x61, 0x72, 0x00,
    0x04, 0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00, 0x0a, 0x25, 0x03, 0x14, 0x00, 0x20, 0x00,
    0x41, 0x01, 0x71, 0x04, 0x7f, 0x20, 0x00, 0x10, 0x00, 0x05, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x0b,
    0x09, 0x00, 0x20, 0x00, 0x41, 0x00, 0x11, 0x00, 0x00, 0x0b, 0x04, 0x00, 0x10, 0x01, 0x0b,
};

// Serves env.foo (function 0) as x * 10; anything else is a test failure.
class FooServer final : public HostCallServer {
 public:
  void serve(HostCall& c) override {
    ++served;
    if (c.func != 0 || c.foreign_func >= 0) {
      c.trap = TrapCode::HostError;
      return;
    }
    c.io[0] = uint32_t(c.io[0]) * 10;
  }
  std::atomic<uint64_t> served{0};
};

class UnknownImportsTest : public GpuTierTest {
 protected:
  void SetUp() override {
    GpuTierTest::SetUp();
    if (IsSkipped()) return;
    cm_ = compile_or_fail(kModule);
    ASSERT_TRUE(cm_);
  }
  BatchRequest request(const std::string& fn, uint32_t n, std::vector<uint8_t> unknown) {
    BatchRequest r;
    r.module = cm_;
    r.func_index = export_func(cm_->module, fn);
    r.instances = n;
    if (!cm_->module.func_type(r.func_index).params.empty()) {
      r.args = {0};
      r.arg_index_kind = {1};  // the instance's index, as an i32
    }
    r.unknown_imports = std::move(unknown);
    return r;
  }
  std::shared_ptr<const CompiledModule> cm_;
};

TEST_P(UnknownImportsTest, TrapsOnTheDeviceNamingTheImport) {
  const uint32_t n = 3000;
  auto r = run(request("run", n, {kDevTrapImport, kDevTrapImport}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_TRUE(r->finished[i]) << i;
    if (i & 1) {
      ASSERT_EQ(r->traps[i], uint8_t(TrapCode::UnknownImport)) << i;
      ASSERT_EQ(r->trap_func[i], 0u) << i;  // env.foo
      ASSERT_EQ(r->trap_pc[i], kNoTrapPc) << i;
    } else {
      ASSERT_EQ(r->traps[i], 0) << i;
      ASSERT_EQ(uint32_t(r->results[i]), i + 1) << i;
    }
  }
  EXPECT_EQ(r->host_calls, 0u);
  // Through the table, the same.
  auto ind = run(request("indirect", 64, {kDevTrapImport, kDevTrapImport}));
  ASSERT_TRUE(ind.ok()) << ind.error().to_string();
  for (uint32_t i = 0; i < 64; ++i) {
    ASSERT_EQ(ind->traps[i], uint8_t(TrapCode::UnknownImport)) << i;
    ASSERT_EQ(ind->trap_func[i], 0u) << i;
  }
  auto bar = run(request("bar", 4, {kDevTrapImport, kDevTrapImport}));
  ASSERT_TRUE(bar.ok()) << bar.error().to_string();
  EXPECT_EQ(bar->trap_func[3], 1u);  // env.bar
}

TEST_P(UnknownImportsTest, ZerosOnTheDevice) {
  const uint32_t n = 3000;
  auto r = run(request("run", n, {kDevZeroImport, kDevZeroImport}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(r->traps[i], 0) << i;
    ASSERT_EQ(uint32_t(r->results[i]), i & 1 ? 0 : i + 1) << i;
  }
  auto ind = run(request("indirect", 64, {kDevZeroImport, kDevZeroImport}));
  ASSERT_TRUE(ind.ok()) << ind.error().to_string();
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(ind->results[i], 0u) << i;
  auto bar = run(request("bar", 64, {kDevZeroImport, kDevZeroImport}));
  ASSERT_TRUE(bar.ok()) << bar.error().to_string();
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(bar->results[i], 0u) << i;
  EXPECT_EQ(bar->host_calls, 0u);
}

// The server takes env.foo's calls; env.bar's never reach it.
TEST_P(UnknownImportsTest, BesideAServerOnlyItsImportsLeave) {
  FooServer server;
  BatchRequest q = request("run", 1000, {0, kDevTrapImport});
  q.host_calls = &server;
  auto r = run(q);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(uint32_t(r->results[i]), i & 1 ? 10 * i : i + 1) << i;
  EXPECT_EQ(server.served.load(), 500u);
  BatchRequest b = request("bar", 32, {0, kDevZeroImport});
  b.host_calls = &server;
  auto rb = run(b);
  ASSERT_TRUE(rb.ok()) << rb.error().to_string();
  for (uint32_t i = 0; i < 32; ++i) {
    ASSERT_EQ(rb->traps[i], 0) << i;
    ASSERT_EQ(rb->results[i], 0u) << i;
  }
  EXPECT_EQ(server.served.load(), 500u);
}

TEST_P(UnknownImportsTest, WithoutStandInsOrAServerAnError) {
  auto r = run(request("run", 32, {}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown import env.foo"), std::string::npos) << r.error().message;
}

INSTANTIATE_TEST_SUITE_P(Tiers, UnknownImportsTest, ::testing::Bool(), tier_test_name);

}  // namespace
}  // namespace ww::gpu
