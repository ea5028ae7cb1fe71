// The public C++ API (include/wasmwarp/wasmwarp.h), used as an embedder
// would: this file includes nothing of src/. CPU calls run everywhere;
// a GPU call runs where a GPU is present and must fail with a clear error
// elsewhere.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "api_test_support.h"
#include "wasmwarp/wasmwarp.h"

namespace {

/* wat2wasm of:
(module
  (memory 1)
  (func (export "axpy") (param $a i64) (param $x i64) (param $i i32) (result i64)
    (i64.add (i64.mul (local.get $a) (local.get $x)) (i64.extend_i32_u (local.get $i))))
  (func (export "div") (param i32 i32) (result i32) (i32.div_s (local.get 0) (local.get 1)))
  (func (export "fsum") (param f32 f64) (result f64)
    (f64.add (f64.promote_f32 (local.get 0)) (local.get 1)))
  (func (export "twice") (param $addr i32) (result i32)
    (i32.store offset=4 (local.get $addr) (i32.mul (i32.load (local.get $addr)) (i32.const 2)))
    (i32.load offset=4 (local.get $addr)))
  (func (export "pair") (param i32) (result i32 i64)
    (local.get 0) (i64.extend_i32_s (local.get 0)))
  (global (export "g") i32 (i32.const 0)))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x1f, 0x05, 0x60, 0x03, 0x7e, 0x7e, 0x7f, 0x01, 0x7e, 0x60,
    0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7d, 0x7c, 0x01, 0x7c, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f,
    0x02, 0x7f, 0x7e, 0x03, 0x06, 0x05, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x03, 0x01, 0x00, 0x01, 0x06, 0x06, 0x01,
    0x7f, 0x00, 0x41, 0x00, 0x0b, 0x07, 0x28, 0x06, 0x04, 0x61, 0x78, 0x70, 0x79, 0x00, 0x00, 0x03, 0x64, 0x69, 0x76,
    0x00, 0x01, 0x04, 0x66, 0x73, 0x75, 0x6d, 0x00, 0x02, 0x05, 0x74, 0x77, 0x69, 0x63, 0x65, 0x00, 0x03, 0x04, 0x70,
    0x61, 0x69, 0x72, 0x00, 0x04, 0x01, 0x67, 0x03, 0x00, 0x0a, 0x3b, 0x05, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x7e,
    0x20, 0x02, 0xad, 0x7c, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6d, 0x0b, 0x08, 0x00, 0x20, 0x00, 0xbb, 0x20,
    0x01, 0xa0, 0x0b, 0x14, 0x00, 0x20, 0x00, 0x20, 0x00, 0x28, 0x02, 0x00, 0x41, 0x02, 0x6c, 0x36, 0x02, 0x04, 0x20,
    0x00, 0x28, 0x02, 0x04, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x00, 0xac, 0x0b,
};

wasmwarp::Module module() {
  auto m = wasmwarp::Module::from_bytes(kModule);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return *m;
}

TEST(Api, ExportsAndTheirTypes) {
  wasmwarp::Module m = module();
  ASSERT_EQ(m.exports().size(), 6u);
  EXPECT_EQ(m.exports()[0].name, "axpy");
  EXPECT_EQ(m.exports()[5].kind, wasmwarp::ExternKind::Global);
  EXPECT_TRUE(m.imports().empty());
  auto t = m.function_type("pair");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->params, std::vector<wasmwarp::ValueType>{wasmwarp::ValueType::I32});
  EXPECT_EQ(t->results, (std::vector<wasmwarp::ValueType>{wasmwarp::ValueType::I32, wasmwarp::ValueType::I64}));
  auto none = m.function_type("nope");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("unknown export 'nope'"), std::string::npos) << none.error().message;
  EXPECT_STREQ(wasmwarp::type_name(wasmwarp::ValueType::F64), "f64");
}

TEST(Api, ColumnsScalarsAndIndicesOnEveryInstance) {
  wasmwarp::Module m = module();
  const uint64_t n = 10000;
  std::vector<int64_t> x(n);
  for (uint64_t i = 0; i < n; ++i) x[i] = int64_t(i) * 7 - 5000;
  auto r = cpu().call(m, "axpy", n, {wasmwarp::Arg::i64(-3), wasmwarp::Arg::column(x), wasmwarp::Arg::index()});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->instances(), n);
  EXPECT_EQ(r->trap_count(), 0u);
  EXPECT_EQ(r->backend(), wasmwarp::Backend::Cpu);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(r->i64(i), -3 * x[i] + int64_t(i)) << i;

  std::vector<double> d{0.25, -1e300, 3.0};
  auto f = cpu().call(m, "fsum", 3, {wasmwarp::Arg::f32(1.5f), wasmwarp::Arg::column(d)});
  ASSERT_TRUE(f.ok()) << f.error().message;
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(f->f64(i), 1.5 + d[i]);

  auto p = cpu().call(m, "pair", 4, {wasmwarp::Arg::index()});
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->result_types().size(), 2u);
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p->i32(i, 0), int32_t(i));
    EXPECT_EQ(p->i64(i, 1), int64_t(i));
  }
  EXPECT_EQ(p->all_bits().size(), 8u);
}

// Results that are all i32 or f32 are held 4 bytes each (the column the
// GPU copies into); all_bits() gives them widened, the upper half zero.
TEST(Api, ThirtyTwoBitResultsAreHeldFourBytesEach) {
  std::vector<int32_t> num{-7, 7, 9}, den{2, 0, 3};
  auto r = cpu().call(module(), "div", 3, {wasmwarp::Arg::column(num), wasmwarp::Arg::column(den)});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->all_bits32().size(), 3u);
  EXPECT_EQ(r->all_bits32()[0], 0xfffffffdu);
  EXPECT_EQ(r->i32(0), -3);
  EXPECT_EQ(r->bits(0), 0xfffffffdu);
  ASSERT_EQ(r->all_bits().size(), 3u);
  EXPECT_EQ(r->all_bits()[0], 0xfffffffdu);
  EXPECT_EQ(r->all_bits()[2], 3u);
  EXPECT_TRUE(r->trapped(1));
  // An i64 among the results: 8 bytes each, all of them.
  auto p = cpu().call(module(), "pair", 2, {wasmwarp::Arg::index()});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->all_bits32().empty());
  EXPECT_EQ(p->all_bits().size(), 4u);
}

TEST(Api, TrapsAreEachInstancesOwn) {
  std::vector<int32_t> num{7, 7, INT32_MIN, 9}, den{2, 0, -1, 3};
  auto r = cpu().call(module(), "div", 4, {wasmwarp::Arg::column(num), wasmwarp::Arg::column(den)});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->trap_count(), 2u);
  EXPECT_FALSE(r->trapped(0));
  EXPECT_EQ(r->i32(0), 3);
  EXPECT_EQ(r->trap_message(1), "integer divide by zero");
  EXPECT_EQ(r->trap_message(2), "integer overflow");
  EXPECT_EQ(r->trap_message(3), "");
  EXPECT_EQ(r->i32(3), 3);
  EXPECT_EQ(wasmwarp::trap_message(r->trap_codes()[1]), "integer divide by zero");
}

TEST(Api, MemoryInAndOut) {
  const uint64_t n = 300;
  std::vector<uint8_t> in(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t v = int32_t(i) - 100;
    std::memcpy(&in[i * 4], &v, 4);
  }
  wasmwarp::CallOptions o;
  o.memory_in.push_back({.address = 64, .record_size = 4, .bytes = in});
  o.memory_out.push_back({.address = 68, .length = 4});
  auto r = cpu().call(module(), "twice", n, {wasmwarp::Arg::i32(64)}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto out = r->memory_out(0);
  ASSERT_EQ(out.size(), n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    int32_t v;
    std::memcpy(&v, &out[i * 4], 4);
    ASSERT_EQ(v, 2 * (int32_t(i) - 100)) << i;
    ASSERT_EQ(r->i32(i), v);
  }
}

TEST(Api, BadInputIsAnErrorValue) {
  wasmwarp::Module m = module();
  std::vector<int64_t> short_col(3);
  struct Case {
    std::vector<wasmwarp::Arg> args;
    const char* fn;
    const char* says;
  } cases[] = {
      {{wasmwarp::Arg::i32(1)}, "div", "'div' takes 2 argument(s), given 1"},
      {{wasmwarp::Arg::i64(1), wasmwarp::Arg::i32(1)}, "div", "argument 1 of 'div' is i32, given i64"},
      {{wasmwarp::Arg::i64(1), wasmwarp::Arg::column(short_col), wasmwarp::Arg::i32(0)},
       "axpy",
       "argument 2 of 'axpy' has 3 rows for 10 instances"},
      {{}, "g", "is a global"},
      {{}, "missing", "unknown export 'missing'"},
  };
  for (const Case& c : cases) {
    auto r = cpu().call(m, c.fn, 10, c.args);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
  }
  auto zero = cpu().call(m, "pair", 0, {wasmwarp::Arg::i32(1)});
  ASSERT_FALSE(zero.ok());

  auto bad = wasmwarp::Module::from_bytes({0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("version"), std::string::npos) << bad.error().message;
  auto missing = wasmwarp::Module::from_file("/nonexistent/m.wasm");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos) << missing.error().message;
}

// A chain's calls share their instances: twice(64) leaves 2v at 68, which
// twice(68) reads (three times, each writing 4v at 72); memory goes in
// before the first call and comes out after the last.
TEST(Api, ChainedCallsShareTheirInstances) {
  auto e = cpu().chain(module(), 2, {{"twice", {wasmwarp::Arg::i32(64)}}, {"twice", {}}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("'twice' takes 1 argument(s), given 0"), std::string::npos) << e.error().message;
  e = cpu().chain(module(), 2, {});
  ASSERT_FALSE(e.ok());
  const uint64_t n = 200;
  std::vector<uint8_t> in(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t v = int32_t(i) - 50;
    std::memcpy(&in[i * 4], &v, 4);
  }
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu}) {
    wasmwarp::CallOptions o;
    o.memory_in.push_back({.address = 64, .record_size = 4, .bytes = in});
    o.memory_out.push_back({.address = 72, .length = 4});
    auto r = engine_on(b).chain(module(), n,
                                {{"twice", {wasmwarp::Arg::i32(64)}}, {"twice", {wasmwarp::Arg::i32(68)}, 3}}, o);
    if (b == wasmwarp::Backend::Gpu && !r.ok()) GTEST_SKIP() << "no GPU: " << r.error().message;
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (uint64_t i = 0; i < n; ++i) {
      int32_t at72;
      std::memcpy(&at72, &r->memory_out(0)[i * 4], 4);
      ASSERT_EQ(r->i32(i), 4 * (int32_t(i) - 50)) << i;
      ASSERT_EQ(at72, r->i32(i)) << i;
    }
  }
}

// Resident instances keep their memory between calls: a value written in,
// doubled by one call, read back, doubled again by a chain.
TEST(Api, ResidentInstancesKeepTheirMemory) {
  const uint64_t n = 500;
  std::vector<uint8_t> in(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t v = int32_t(i) - 7;
    std::memcpy(&in[i * 4], &v, 4);
  }
  auto at = [](const std::vector<uint8_t>& b, uint64_t i) {
    int32_t v;
    std::memcpy(&v, &b[i * 4], 4);
    return v;
  };
  for (wasmwarp::Backend b : {wasmwarp::Backend::Cpu, wasmwarp::Backend::Gpu}) {
    auto inst = engine_on(b).instances(module(), n);
    if (b == wasmwarp::Backend::Gpu && !inst.ok()) GTEST_SKIP() << "no GPU: " << inst.error().message;
    ASSERT_TRUE(inst.ok()) << inst.error().message;
    EXPECT_EQ(inst->backend(), b);
    EXPECT_EQ(inst->count(), n);
    auto wrote = inst->write_memory(64, 4, in);
    ASSERT_TRUE(wrote.ok()) << wrote.error().message;
    EXPECT_EQ(*wrote, n * 4);
    auto r = inst->call("twice", {wasmwarp::Arg::i32(64)});
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto mem = inst->read_memory(68, 4);
    ASSERT_TRUE(mem.ok()) << mem.error().message;
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(r->i32(i), 2 * (int32_t(i) - 7)) << i;
      ASSERT_EQ(at(*mem, i), r->i32(i)) << i;
    }
    auto c = inst->chain({{"twice", {wasmwarp::Arg::i32(68)}}, {"twice", {wasmwarp::Arg::i32(72)}}});
    ASSERT_TRUE(c.ok()) << c.error().message;
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(c->i32(i), 8 * (int32_t(i) - 7)) << i;
    auto past = inst->read_memory(65535, 4);
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.error().message.find("past instance 0's memory"), std::string::npos) << past.error().message;
    auto short_in = inst->write_memory(0, 8, in);
    ASSERT_FALSE(short_in.ok());
    EXPECT_NE(short_in.error().message.find("250 records for 500 instances"), std::string::npos)
        << short_in.error().message;
    auto unknown = inst->call("nope", {});
    ASSERT_FALSE(unknown.ok());
  }
}

// Results left in GPU memory feed the next call where they are: axpy's
// results (2i + 1) as the column x of a second axpy (2x + 1 = 4i + 3),
// with no trip through the host; on the CPU such columns are refused.
TEST(Api, DeviceColumnsInAndOut) {
  const uint64_t n = 3000;
  std::vector<int64_t> host(n, 1);
  wasmwarp::CallOptions on_device;
  on_device.results_on_device = true;
  auto cpu_try = cpu().call(module(), "axpy", n, {wasmwarp::Arg::i64(2), wasmwarp::Arg::index(), wasmwarp::Arg::i32(1)},
                            on_device);
  ASSERT_FALSE(cpu_try.ok());
  EXPECT_NE(cpu_try.error().message.find("need the GPU backend"), std::string::npos) << cpu_try.error().message;
  auto gpu = engine_on(wasmwarp::Backend::Gpu);
  auto first =
      gpu.call(module(), "axpy", n, {wasmwarp::Arg::i64(2), wasmwarp::Arg::index(), wasmwarp::Arg::i32(1)}, on_device);
  if (!first.ok()) GTEST_SKIP() << "no GPU: " << first.error().message;
  ASSERT_NE(first->device_result(0), nullptr);
  EXPECT_EQ(first->i64(5), 0);  // the host's copy stays zeros
  auto second =
      gpu.call(module(), "axpy", n,
               {wasmwarp::Arg::i64(2), wasmwarp::Arg::device_column(first->device_result(0), wasmwarp::ValueType::I64),
                wasmwarp::Arg::i32(1)});
  ASSERT_TRUE(second.ok()) << second.error().message;
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(second->i64(i), 4 * int64_t(i) + 3) << i;
  // Resident instances take and give them too.
  auto inst = gpu.instances(module(), n);
  ASSERT_TRUE(inst.ok()) << inst.error().message;
  auto third = inst->call(
      "axpy",
      {wasmwarp::Arg::i64(3), wasmwarp::Arg::device_column(first->device_result(0), wasmwarp::ValueType::I64),
       wasmwarp::Arg::i32(0)},
      on_device);
  ASSERT_TRUE(third.ok()) << third.error().message;
  auto fourth =
      gpu.call(module(), "axpy", n,
               {wasmwarp::Arg::i64(1), wasmwarp::Arg::device_column(third->device_result(0), wasmwarp::ValueType::I64),
                wasmwarp::Arg::i32(0)});
  ASSERT_TRUE(fourth.ok()) << fourth.error().message;
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(fourth->i64(i), 3 * (2 * int64_t(i) + 1)) << i;
}

// On the GPU the same answers; without one, an error that says so.
TEST(Api, GpuCallOrAClearError) {
  const uint64_t n = 5000;
  auto r = engine_on(wasmwarp::Backend::Gpu)
               .call(module(), "axpy", n, {wasmwarp::Arg::i64(2), wasmwarp::Arg::index(), wasmwarp::Arg::i32(1)});
  if (!r.ok()) {
    const std::string& e = r.error().message;
    EXPECT_TRUE(e.find("GPU") != std::string::npos || e.find("CUDA") != std::string::npos) << e;
    GTEST_SKIP() << "no GPU: " << e;
  }
  EXPECT_EQ(r->backend(), wasmwarp::Backend::Gpu);
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(r->i64(i), 2 * int64_t(i) + 1) << i;
}

}  // namespace
