// One batch run as shares (CallOptions::first_index / total_instances, what
// an MPI rank runs): each share's rows equal the same rows of the whole
// batch, on every backend and tier. Includes nothing of src/.
#include <gtest/gtest.h>

#include "api_test_support.h"
#include "wasmwarp/wasmwarp.h"

namespace {

/* wat2wasm of:
(module
  (import "gpu" "get_thread_id" (func $tid (result i32)))
  (import "gpu" "instance_count" (func $count (result i32)))
  ;; x * 1e9 + index * 1e6 + thread_id * 1e3 + instance_count
  (func (export "f") (param $i i64) (param $x i32) (result i64)
    (i64.add (i64.mul (i64.extend_i32_u (local.get $x)) (i64.const 1000000000))
      (i64.add (i64.mul (local.get $i) (i64.const 1000000))
        (i64.add (i64.mul (i64.extend_i32_u (call $tid)) (i64.const 1000))
                 (i64.extend_i32_u (call $count)))))))
*/
const std::vector<uint8_t> kIndices = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0b, 0x02, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x02, 0x7e, 0x7f,
    0x01, 0x7e, 0x02, 0x2a, 0x02, 0x03, 0x67, 0x70, 0x75, 0x0d, 0x67, 0x65, 0x74, 0x5f, 0x74, 0x68, 0x72, 0x65, 0x61,
    0x64, 0x5f, 0x69, 0x64, 0x00, 0x00, 0x03, 0x67, 0x70, 0x75, 0x0e, 0x69, 0x6e, 0x73, 0x74, 0x61, 0x6e, 0x63, 0x65,
    0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0x00, 0x03, 0x02, 0x01, 0x01, 0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x02,
    0x0a, 0x22, 0x01, 0x20, 0x00, 0x20, 0x01, 0xad, 0x42, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0x7e, 0x20, 0x00, 0x42, 0xc0,
    0x84, 0x3d, 0x7e, 0x10, 0x00, 0xad, 0x42, 0xe8, 0x07, 0x7e, 0x10, 0x01, 0xad, 0x7c, 0x7c, 0x7c, 0x0b,
};

TEST(ApiShares, RowsEqualTheWholeBatchs) {
  auto m = wasmwarp::Module::from_bytes(kIndices);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t n = 300;
  std::vector<int32_t> x(n);
  for (uint64_t i = 0; i < n; ++i) x[i] = int32_t(i % 7);
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu})
    for (wasmwarp::Tier t : {wasmwarp::Tier::Interpreter, wasmwarp::Tier::Compiled}) {
      SCOPED_TRACE(std::string(wasmwarp::backend_name(b)) + " " + wasmwarp::tier_name(t));
      const wasmwarp::Engine e = engine_on(b, t);
      auto whole = e.call(*m, "f", n, {wasmwarp::Arg::index(), wasmwarp::Arg::column(x)});
      if (b == wasmwarp::Backend::Gpu && !whole.ok()) {
        EXPECT_NE(whole.error().message.find("GPU"), std::string::npos) << whole.error().message;
        GTEST_SKIP() << "no GPU: " << whole.error().message;
      }
      ASSERT_TRUE(whole.ok()) << whole.error().message;
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(whole->i64(i), x[i] * 1000000000ll + i * 1001000ll + n) << i;
      // Three uneven shares, each with its own rows of the column.
      for (auto [first, count] : {std::pair<uint64_t, uint64_t>{0, 100}, {100, 101}, {201, 99}}) {
        wasmwarp::CallOptions o;
        o.first_index = first;
        o.total_instances = n;
        const std::span<const int32_t> rows(x.data() + first, count);
        auto share = e.call(*m, "f", count, {wasmwarp::Arg::index(), wasmwarp::Arg::column(rows)}, o);
        ASSERT_TRUE(share.ok()) << share.error().message;
        ASSERT_EQ(share->instances(), count);
        for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(share->i64(i), whole->i64(first + i)) << first << "+" << i;
      }
    }
  wasmwarp::CallOptions o;
  o.first_index = 250;
  o.total_instances = n;
  auto bad = cpu().call(*m, "f", 100, {wasmwarp::Arg::index(), wasmwarp::Arg::column(x)}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("instances [250, 350) are not within a batch of 300"), std::string::npos)
      << bad.error().message;
}

/* wat2wasm of:
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  ;; exits with the size of argv's strings (NULs included)
  (func (export "_start")
    (drop (call $args_sizes_get (i32.const 48) (i32.const 52)))
    (call $proc_exit (i32.load (i32.const 52)))))
*/
const std::vector<uint8_t> kArgvSize = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0e, 0x03, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01,
    0x7f, 0x00, 0x60, 0x00, 0x00, 0x02, 0x4c, 0x02, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73, 0x6e, 0x61, 0x70, 0x73,
    0x68, 0x6f, 0x74, 0x5f, 0x70, 0x72, 0x65, 0x76, 0x69, 0x65, 0x77, 0x31, 0x0e, 0x61, 0x72, 0x67, 0x73, 0x5f, 0x73,
    0x69, 0x7a, 0x65, 0x73, 0x5f, 0x67, 0x65, 0x74, 0x00, 0x00, 0x16, 0x77, 0x61, 0x73, 0x69, 0x5f, 0x73, 0x6e, 0x61,
    0x70, 0x73, 0x68, 0x6f, 0x74, 0x5f, 0x70, 0x72, 0x65, 0x76, 0x69, 0x65, 0x77, 0x31, 0x09, 0x70, 0x72, 0x6f, 0x63,
    0x5f, 0x65, 0x78, 0x69, 0x74, 0x00, 0x01, 0x03, 0x02, 0x01, 0x02, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x13, 0x02,
    0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x06, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0x00, 0x02, 0x0a,
    0x12, 0x01, 0x10, 0x00, 0x41, 0x30, 0x41, 0x34, 0x10, 0x00, 0x1a, 0x41, 0x34, 0x28, 0x02, 0x00, 0x10, 0x01, 0x0b,
};

// A WASI program's @index is the whole batch's too: "p\0" and the index's
// digits with their NUL, 4 for indices below 10, 5 from 10 on.
TEST(ApiShares, WasiArgvTakesTheWholeBatchsIndex) {
  auto m = wasmwarp::Module::from_bytes(kArgvSize);
  ASSERT_TRUE(m.ok()) << m.error().message;
  wasmwarp::WasiOptions w;
  w.program = "p";
  w.args = {"@index"};
  wasmwarp::CallOptions o;
  o.first_index = 7;
  o.total_instances = 20;
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu}) {
    SCOPED_TRACE(wasmwarp::backend_name(b));
    auto r = engine_on(b).run_command(*m, 6, w, o);
    if (b == wasmwarp::Backend::Gpu && !r.ok()) GTEST_SKIP() << "no GPU: " << r.error().message;
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(r->exit_code(i), 7 + i < 10 ? 4 : 5) << i;
  }
}

}  // namespace
