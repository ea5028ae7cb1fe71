// Rows handed out while a batch runs (BatchSpec::on_ready): every range
// reported ready already holds its final results, ranges only grow, and a
// batch that is still running has reported the rows before the instance
// that holds it up. The CPU case runs everywhere (CI); the GPU one where a
// GPU is present.
#include <gtest/gtest.h>

#include <mutex>

#include "batch/batch.h"
#include "exec/gpu/gpu_backend.h"
#include "runtime/runtime.h"

namespace ww::batch {
namespace {

/* wat2wasm of:
(module
  ;; n * n, except that instance `spin` loops until the batch stops it
  (func (export "sq") (param $n i32) (param $spin i32) (result i32)
    (if (i32.eq (local.get $n) (local.get $spin)) (then (loop $l (br $l))))
    (i32.mul (local.get $n) (local.get $n))))
*/
const std::vector<uint8_t> kModule = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03,
    0x02, 0x01, 0x00, 0x07, 0x06, 0x01, 0x02, 0x73, 0x71, 0x00, 0x00, 0x0a, 0x16, 0x01, 0x14, 0x00, 0x20, 0x00,
    0x20, 0x01, 0x46, 0x04, 0x40, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x00, 0x20, 0x00, 0x6c, 0x0b,
};

struct Seen {
  std::mutex mu;
  uint64_t last = 0, calls = 0, wrong = 0, before_end = 0;
};

// A batch of sq(i, spin): instance `spin` (if below n) loops until the
// timeout. Each ready range is checked against i * i when it is reported.
BatchSpec spec_for(uint64_t n, uint64_t spin, Backend backend, Seen& seen) {
  auto cm = compile_module(kModule);
  EXPECT_TRUE(cm.ok());
  BatchSpec s;
  s.module = *cm;
  s.export_name = "sq";
  s.instances = n;
  s.backend = backend;
  s.tier = Tier::Interp;
  s.args.resize(2);
  s.args[0].kind = ArgSource::Index;
  s.args[1].value = Value::i32(int32_t(spin));
  s.on_ready = [&seen, n, spin](const BatchResult& r, uint64_t upto) {
    std::lock_guard<std::mutex> g(seen.mu);
    ++seen.calls;
    if (upto < seen.last || upto > n) ++seen.wrong;
    for (uint64_t i = seen.last; i < upto; ++i)
      if (i != spin && (r.traps[i] != 0 || uint32_t(r.result_bits(i, 0)) != uint32_t(i * i))) ++seen.wrong;
    if (upto < n) seen.before_end = std::max(seen.before_end, upto);
    seen.last = std::max(seen.last, upto);
  };
  return s;
}

TEST(Streaming, CpuRowsAreReportedAsTheyFinish) {
  Seen seen;
  const uint64_t n = 64;
  BatchSpec s = spec_for(n, n - 1, Backend::Cpu, seen);
  s.threads = 2;
  s.timeout_s = 1.0;  // ends the spinning instance, the last
  auto r = run(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(seen.wrong, 0u);
  EXPECT_EQ(seen.last, n);
  // Every chunk but the spinner's was reported while it still ran.
  EXPECT_GE(seen.before_end, n - 4);
  EXPECT_EQ(r->traps[n - 1], uint8_t(TrapCode::Timeout));
}

TEST(Streaming, GpuRowsAreReportedWaveByWave) {
  gpu::DeviceInfo d = gpu::probe_device();
  if (!d.available) GTEST_SKIP() << "no GPU: " << d.reason;
  Seen seen;
  const uint64_t n = 100000;
  BatchSpec s = spec_for(n, n, Backend::Gpu, seen);  // none spins
  s.gpu.max_wave = 4096;
  auto r = run(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(seen.wrong, 0u);
  EXPECT_EQ(seen.last, n);
  EXPECT_GE(seen.calls, n / 4096);  // a report per wave, at least
  EXPECT_GT(seen.before_end, n / 2);
}

}  // namespace
}  // namespace ww::batch
