// End-to-end tests of the CLI's columns and output files (every format,
// v128 values, memory inputs and outputs) and of its compiled tier.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/io_formats.h"
#include "cli_fixture.h"

namespace {

using cli_e2e::Cli;
using cli_e2e::lines;
using cli_e2e::Proc;
using cli_e2e::slurp;
namespace fs = std::filesystem;
TEST_F(Cli, BatchTrapSummaryAndCsv) {
  std::string out = path("t.csv");
  Proc r = run({"run", "-n", "10", "--invoke", "odd_traps", "--output", out, mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 1) << r.err;  // some instance trapped
  EXPECT_NE(r.err.find("instances: 10  completed: 5  trapped: 5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("integer divide by zero: 5"), std::string::npos) << r.err;
  auto ls = lines(slurp(out));
  ASSERT_EQ(ls.size(), 11u);
  EXPECT_EQ(ls[1], "0,100,");
  EXPECT_EQ(ls[2], "1,,integer divide by zero");
  EXPECT_EQ(ls[10], "9,,integer divide by zero");
}

TEST_F(Cli, BatchColumnsFromEveryFormat) {
  using ww::cli::npy_header;
  // .npy, 2-D i4: column 1.
  std::vector<int32_t> a{10, -1, 20, -2, 30, -3};
  std::string npy = npy_header("'<i4'", false, {3, 2}) + std::string(reinterpret_cast<char*>(a.data()), 24);
  std::string pn = write("a.npy", npy);
  Proc r = run({"run", "--output", "-", "-n", "3", "-q", "--invoke", "add", mod("basic"), "@col:" + pn + ":0",
                "@col:" + pn + ":1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\t9\n1\t18\n2\t27\n");
  // .npy f8, 1-D, bit-exact NaN payload.
  std::vector<uint64_t> f{0x3FF8000000000000ull, 0x7FF0000000000001ull};
  std::string pf = write("f.npy", npy_header("'<f8'", false, {2}) + std::string(reinterpret_cast<char*>(f.data()), 16));
  r = run({"run", "--output", "-", "-n", "2", "-q", "--invoke", "f64id", mod("basic"), "@col:" + pf});
  EXPECT_EQ(r.out, "0\t1.5\n1\tnan:0x1\n") << r.err;
  // .csv with a header row.
  std::string pc = write("c.csv", "x,y\n1,-0x1p-1\n2,inf\n3,-0\n");
  r = run({"run", "--output", "-", "-n", "3", "-q", "--invoke", "mixed", mod("basic"), "@col:" + pc + ":0",
           "@col:" + pc + ":1"});
  EXPECT_EQ(r.out, "0\t1\t-0.5\t1\n1\t2\tinf\t2\n2\t3\t-0\t3\n") << r.err;
  // raw little-endian i64.
  std::vector<int64_t> b{5, -6};
  std::string pb = write("b.bin", std::string(reinterpret_cast<char*>(b.data()), 16));
  r = run({"run", "--output", "-", "-n", "2", "-q", "--invoke", "add64", mod("basic"), "@col:" + pb, "@index"});
  EXPECT_EQ(r.out, "0\t5\n1\t-5\n") << r.err;
  // Too few rows, missing column, bad cell: errors before running.
  expect_error({"run", "-n", "4", "--invoke", "add", mod("basic"), "@col:" + pn + ":0", "1"},
               "has 3 rows, but 4 instances");
  expect_error({"run", "-n", "3", "--invoke", "add", mod("basic"), "@col:" + pn + ":2", "1"},
               "column 2 does not exist");
  expect_error({"run", "-n", "4", "--invoke", "add", mod("basic"), "@col:" + pc, "1"}, "has 3 rows");
  expect_error({"run", "-n", "3", "--invoke", "add64", mod("basic"), "@col:" + pb, "1"}, "has 2 rows");
  expect_error({"run", "-n", "1", "--invoke", "add", mod("basic"), "@col:" + pf, "1"}, "cannot feed an i32");
  expect_error({"run", "-n", "1", "--invoke", "add", mod("basic"), "@col:" + path("none.csv"), "1"}, "No such file");
  std::string bad = write("bad.csv", "1\nzz\n");
  expect_error({"run", "-n", "2", "--invoke", "f32id", mod("basic"), "@col:" + bad},
               "line 2: cannot parse 'zz' as f32");
}

TEST_F(Cli, OutputJson) {
  std::string out = path("r.json");
  Proc r = run({"run", "-n", "4", "--invoke", "odd_traps", "--output", out, mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 1);
  auto j = nlohmann::json::parse(slurp(out));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["instance"], 0);
  EXPECT_EQ(j[0]["results"][0], 100);
  EXPECT_TRUE(j[0]["trap"].is_null());
  EXPECT_TRUE(j[1]["results"].is_null());
  EXPECT_EQ(j[1]["trap"], "integer divide by zero");
  // Where it trapped: the export's function, at the division's bytecode
  // offset (after the ops computing its operands, so not 0).
  EXPECT_EQ(j[1]["trap_function"], "odd_traps");
  ASSERT_TRUE(j[1]["trap_offset"].is_number());
  EXPECT_GT(j[1]["trap_offset"].get<int>(), 0);
  EXPECT_FALSE(j[0].contains("trap_offset"));
  out = path("m.json");
  r = run({"run", "-n", "2", "--invoke", "mixed", "--output", out, mod("basic"), "@index", "nan:0x5"});
  EXPECT_EQ(r.rc, 0) << r.err;
  j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j[1]["results"], nlohmann::json::parse(R"([1, "nan:0x5", 1])"));
}

TEST_F(Cli, OutputNpy) {
  using ww::cli::parse_npy;
  std::string out = path("p.npy");
  Proc r = run({"run", "-n", "3", "--invoke", "pair", "--output", out, mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  std::string s = slurp(out);
  auto a = parse_npy(std::vector<uint8_t>(s.begin(), s.end()), out);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->dtype, "i4");
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{3, 2}));
  std::vector<int32_t> v(6);
  std::memcpy(v.data(), a->data.data(), 24);
  EXPECT_EQ(v, (std::vector<int32_t>{0, 1, 1, 2, 2, 3}));
  // Mixed result types: a structured dtype, 16 bytes per row.
  out = path("m.npy");
  r = run({"run", "-n", "2", "--invoke", "mixed", "--output", out, mod("basic"), "@index", "2.5"});
  EXPECT_EQ(r.rc, 0) << r.err;
  s = slurp(out);
  EXPECT_NE(s.find("[('result0', '<i4'), ('result1', '<f8'), ('result2', '<i8')]"), std::string::npos);
  EXPECT_EQ(s.size() % 64, 40u);  // 64-aligned header + 2 rows of 4+8+8 bytes
  // Traps: refused without --allow-traps (no file), else zero rows + codes.
  out = path("t.npy");
  r = run({"run", "-n", "4", "--invoke", "odd_traps", "--output", out, mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("wasmwarp: error: 2 instance(s) trapped; " + out + " not written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = run({"run", "-n", "4", "--invoke", "odd_traps", "--allow-traps", "--output", out, mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 1);
  s = slurp(out);
  a = parse_npy(std::vector<uint8_t>(s.begin(), s.end()), out);
  ASSERT_TRUE(a.ok());
  std::vector<int32_t> t(4);
  std::memcpy(t.data(), a->data.data(), 16);
  EXPECT_EQ(t, (std::vector<int32_t>{100, 0, 100, 0}));
  std::string ts = slurp(path("t.traps.npy"));
  auto tc = parse_npy(std::vector<uint8_t>(ts.begin(), ts.end()), "traps");
  ASSERT_TRUE(tc.ok());
  EXPECT_EQ(tc->dtype, "u1");
  EXPECT_EQ(tc->data, (std::vector<uint8_t>{0, 7, 0, 7}));  // 7 = IntegerDivideByZero
  // Not numeric / no results: refused before running.
  expect_error({"run", "--invoke", "nullfunc", "--output", path("x.npy"), mod("basic")}, "cannot hold funcref");
  expect_error({"run", "--invoke", "nothing", "--output", path("x.npy"), mod("basic")}, "needs an export with results");
}

// v128 arguments (constants: 0x and hex digits, or a shape and lanes) and
// results (0x and 32 hex digits; 16 bytes in .npy).
TEST_F(Cli, V128ArgumentsAndResults) {
  Proc r = run({"run", "--invoke", "pair", mod("lanes"), "i32x4 1 2 3 -1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0xffffffff000000030000000200000001\n-1\n");
  r = run({"run", "--invoke", "pair", mod("lanes"), "0x1"});
  EXPECT_EQ(r.out, "0x00000000000000000000000000000001\n0\n");
  std::string out = path("v.csv");
  r = run(
      {"run", "-n", "3", "--invoke", "add_lanes", "--output", out, mod("lanes"), "i32x4 0 10 20 0xffffffff", "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(slurp(out),
            "instance,result0,trap\n"
            "0,0xffffffff000000140000000a00000000,\n"
            "1,0x00000000000000150000000b00000001,\n"
            "2,0x00000001000000160000000c00000002,\n");
  out = path("v.npy");
  r = run({"run", "-n", "2", "--invoke", "add_lanes", "--output", out, mod("lanes"), "0x0", "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  std::string s = slurp(out);
  EXPECT_NE(s.find("'descr': '|V16'"), std::string::npos) << s.substr(0, 80);
  ASSERT_EQ(s.size() % 64, 32u);  // 64-aligned header + 2 rows of 16 bytes
  std::vector<uint32_t> lanes(8);
  std::memcpy(lanes.data(), s.data() + s.size() - 32, 32);
  EXPECT_EQ(lanes, (std::vector<uint32_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  expect_error({"run", "-n", "2", "--invoke", "add_lanes", mod("lanes"), "@index", "1"}, "@index cannot feed a v128");
  expect_error({"run", "--invoke", "add_lanes", mod("lanes"), "i32x4 1 2 3", "1"}, "i32x4 takes 4 lanes");
}

TEST_F(Cli, OutputErrorsBeforeRunning) {
  expect_error({"run", "--invoke", "add", "--output", path("no/such/dir/x.csv"), mod("basic"), "1", "2"},
               "cannot write " + path("no/such/dir/x.csv"));
  expect_error({"run", "--invoke", "add", "--output", path("x.txt"), mod("basic"), "1", "2"}, "unknown output format");
  // A failing run leaves no output file and no temporary behind.
  expect_error({"run", "--invoke", "add", "--output", path("y.csv"), mod("basic"), "1"}, "got 1");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 0);
  fs::create_directory(path("d.csv"));
  expect_error({"run", "--invoke", "add", "--output", path("d.csv"), mod("basic"), "1", "2"},
               "cannot write " + path("d.csv") + ": it is a directory");
  expect_error({"run", "--invoke", "hash", "--mem-out", "4096:8=" + path("no/dir/h.bin"), mod("hash")}, "cannot write");
}

uint64_t fnv1a(const uint8_t* p) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < 64; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

TEST_F(Cli, MemoryIoHashesMessages) {
  const int n = 5000;
  std::string msgs(size_t(n) * 64, '\0');
  std::mt19937 rng(7);
  for (char& c : msgs) c = char(rng());
  std::string in = write("msgs.bin", msgs);
  std::string hashes = path("hashes.bin"), res = path("res.npy");
  Proc r = run({"run", "-n", std::to_string(n), "--invoke", "hash", "--mem-in", "input_ptr=" + in, "--mem-out",
                "output_ptr:8=" + hashes, "--output", res, mod("hash")});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("completed: 5000  trapped: 0"), std::string::npos) << r.err;
  std::string h = slurp(hashes);
  ASSERT_EQ(h.size(), size_t(n) * 8);
  std::string s = slurp(res);
  auto a = ww::cli::parse_npy(std::vector<uint8_t>(s.begin(), s.end()), res);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->data.size(), size_t(n) * 8);
  for (int i = 0; i < n; ++i) {
    uint64_t want = fnv1a(reinterpret_cast<const uint8_t*>(msgs.data()) + i * 64), got, ret;
    std::memcpy(&got, h.data() + i * 8, 8);
    std::memcpy(&ret, a->data.data() + i * 8, 8);
    ASSERT_EQ(got, want) << "instance " << i;
    ASSERT_EQ(ret, want) << "instance " << i;
  }
  // Numeric addresses and an explicit record size (extra bytes ignored).
  std::string longer = write("long.bin", msgs + "extra");
  r = run({"run", "--output", "-", "-n", "3", "-q", "--invoke", "hash", "--mem-in", "1024=" + longer, "--mem-in-size",
           "64", "--mem-out", "0x1000:8=" + hashes, mod("hash")});
  EXPECT_EQ(r.rc, 0) << r.err;
  h = slurp(hashes);
  ASSERT_EQ(h.size(), 24u);
  uint64_t got;
  std::memcpy(&got, h.data() + 16, 8);
  EXPECT_EQ(got, fnv1a(reinterpret_cast<const uint8_t*>(msgs.data()) + 128));
}

TEST_F(Cli, MemoryIoOutOfBoundsTrapsOnlyThatInstance) {
  std::string addrs = write("addrs.csv", "0\n8\n70000\n16\n");
  std::string out = path("o.bin"), csv = path("o.csv");
  Proc r = run({"run", "-n", "4", "--invoke", "set_out", "--mem-out", "out_ptr:8=" + out, "--output", csv, mod("hash"),
                "@col:" + addrs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("out of bounds memory access: 1"), std::string::npos) << r.err;
  auto ls = lines(slurp(csv));
  ASSERT_EQ(ls.size(), 5u);
  EXPECT_EQ(ls[1], "0,0,");
  EXPECT_EQ(ls[3], "2,,out of bounds memory access");
  EXPECT_EQ(ls[4], "3,16,");
  std::string o = slurp(out);
  ASSERT_EQ(o.size(), 32u);
  uint64_t v[4];
  std::memcpy(v, o.data(), 32);
  EXPECT_EQ(v[0], 256u);
  EXPECT_EQ(v[1], 264u);
  EXPECT_EQ(v[2], 0u);  // trapped: zeros
  EXPECT_EQ(v[3], 272u);
  // Input records out of bounds: every instance traps.
  std::string msgs = write("m.bin", std::string(128, 'x'));
  r = run({"run", "--output", "-", "-n", "2", "-q", "--invoke", "hash", "--mem-in", "65530=" + msgs, mod("hash")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "0\ttrap: out of bounds memory access\n1\ttrap: out of bounds memory access\n");
}

TEST_F(Cli, MemoryIoErrors) {
  std::string msgs = write("m.bin", std::string(100, 'x'));
  expect_error({"run", "-n", "3", "--invoke", "hash", "--mem-in", "1024=" + msgs, mod("hash")},
               "not a multiple of 3 instances");
  expect_error({"run", "-n", "2", "--invoke", "hash", "--mem-in", "1024=" + msgs, "--mem-in-size", "64", mod("hash")},
               "holds 1 records of 64 bytes, but 2 instances");
  expect_error({"run", "--invoke", "hash", "--mem-in", "1024=" + write("e.bin", ""), mod("hash")}, "is empty");
  expect_error({"run", "--invoke", "hash", "--mem-in", "1024=" + path("nope.bin"), mod("hash")}, "No such file");
  expect_error({"run", "--invoke", "hash", "--mem-in", "nosuch=" + msgs, mod("hash")},
               "neither a number nor an export");
  expect_error({"run", "--invoke", "hash", "--mem-in", "hash=" + msgs, mod("hash")}, "need () -> (i32)");
  expect_error({"run", "--invoke", "hash", "--mem-in", msgs, mod("hash")}, "expected ADDR=FILE");
  expect_error({"run", "--invoke", "hash", "--mem-out", "4096=" + path("o.bin"), mod("hash")},
               "expected ADDR:LEN=FILE");
  expect_error({"run", "--mem-in", "0=" + msgs, mod("start")}, "need a module with a memory");
}

// ------------------------------------------------------------ tiers

TEST_F(Cli, CompiledTierGivesTheInterpretersResults) {
  std::string a = path("interp.json"), b = path("compiled.json");
  for (auto [tier, out] : {std::pair{"interp", a}, std::pair{"compiled", b}}) {
    Proc r = run({"run", "--tier", tier, "-n", "30", "--invoke", "odd_traps", "--output", out, mod("basic"), "@index"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_NE(r.err.find(std::string("tier: ") + tier), std::string::npos) << r.err;
  }
  // Results, traps and their locations alike.
  EXPECT_EQ(slurp(a), slurp(b));
  Proc r = run({"run", "--tier", "compiled", "--invoke", "fib", mod("basic"), "20"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "6765\n");
}

TEST_F(Cli, CompiledCodeIsCachedAndReused) {
  Proc first =
      run({"run", "--output", "-", "--tier", "compiled", "-n", "2", "--invoke", "fib", mod("basic"), "@index"});
  EXPECT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.err.find("compile: cache miss"), std::string::npos) << first.err;
  Proc second = run({"run", "--output", "-", "--tier", "auto", "-n", "2", "--invoke", "fib", mod("basic"), "@index"});
  EXPECT_EQ(second.rc, 0) << second.err;
  EXPECT_NE(second.err.find("tier: compiled"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("compile: cache hit"), std::string::npos) << second.err;
  // --no-cache neither reads nor writes it.
  Proc none = run({"run", "--output", "-", "--tier", "compiled", "--no-cache", "-n", "2", "--invoke", "fib",
                   mod("basic"), "@index"});
  EXPECT_NE(none.err.find("compile: cache miss"), std::string::npos) << none.err;
}

TEST_F(Cli, CompileCommandFillsTheCacheAndEmitsSource) {
  std::string src = path("fib.cc"), cache = path("own-cache");
  Proc c =
      run({"compile", "--backend", "cpu", "--invoke", "fib", "--cache-dir", cache, "--emit-source", src, mod("basic")});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_NE(c.out.find("compiled for the CPU (cache miss)"), std::string::npos) << c.out;
  std::string text = slurp(src);
  EXPECT_NE(text.find("sem::i32_add"), std::string::npos);
  EXPECT_NE(text.find("ww_entries"), std::string::npos);
  Proc r = run({"run", "--output", "-", "--tier", "auto", "--cache-dir", cache, "-n", "3", "--invoke", "fib",
                mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("compile: cache hit"), std::string::npos) << r.err;
  // Compiled for every export (no --invoke): any one export's run uses it.
  std::string all = path("all-cache");
  EXPECT_EQ(run({"compile", "--backend", "cpu", "--cache-dir", all, mod("basic")}).rc, 0);
  Proc a = run({"run", "--output", "-", "--tier", "auto", "--cache-dir", all, "-n", "2", "--invoke", "add",
                mod("basic"), "@index", "1"});
  EXPECT_EQ(a.rc, 0) << a.err;
  EXPECT_NE(a.err.find("compile: cache hit"), std::string::npos) << a.err;
  expect_error({"compile", "--invoke", "nope", mod("basic")}, "unknown export 'nope'");
  expect_error({"compile", "--gpu-arch", "sm_5", mod("basic")}, "--gpu-arch must be");
  expect_error({"run", "--tier", "fast", "--invoke", "fib", mod("basic"), "1"},
               "--tier must be interp, compiled or auto");
}

// NVRTC needs no GPU: generated GPU code (here with calls that leave for
// the host, whose leave and resume paths and the device headers come
// along) must compile wherever NVRTC loads, so CI catches what otherwise
// only the GPU machine would run.
TEST_F(Cli, GeneratedGpuCodeCompilesWithNvrtc) {
  const std::string m = std::string(WW_SOURCE_DIR) + "/tests/wasi/files/copy.wat";
  Proc r = run({"compile", "--backend", "gpu", "--gpu-arch", "sm_90", "--no-cache", "--invoke", "copy", m});
  if (r.rc != 0 && r.err.find("NVRTC") != std::string::npos && r.err.find("NVRTC failed") == std::string::npos)
    GTEST_SKIP() << "NVRTC not loadable here: " << r.err;
  EXPECT_EQ(r.rc, 0) << r.err;
  // Without --gpu-layout, both layouts a run chooses between by itself.
  EXPECT_NE(r.out.find("compiled for the GPU (interleaved memory, cache miss)"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("compiled for the GPU (sparse memory, cache miss)"), std::string::npos) << r.out << r.err;
  Proc one = run({"compile", "--backend", "gpu", "--gpu-arch", "sm_90", "--no-cache", "--gpu-layout", "sparse",
                  "--invoke", "copy", m});
  EXPECT_EQ(one.rc, 0) << one.err;
  EXPECT_EQ(one.out.find("interleaved memory"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("compiled for the GPU (sparse memory"), std::string::npos) << one.out;
}

TEST_F(Cli, CompilerTroubleFallsBackToTheInterpreter) {
  // A missing compiler, and one that fails: one line says why, the results
  // are the interpreter's.
  for (std::string cxx : {"/nonexistent/c++", "false"}) {
    Proc r =
        run({"run", "--output", "-", "--tier", "compiled", "-n", "3", "--invoke", "add", mod("basic"), "@index", "1"},
            "CXX=" + cxx);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "0\t1\n1\t2\n2\t3\n");
    EXPECT_NE(r.err.find("compile: compiled tier unavailable (host C++ compiler"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tier: interp"), std::string::npos) << r.err;
    // -q drops the summary, not the line that says the tier asked for did not run.
    Proc q = run(
        {"run", "-q", "--output", "-", "--tier", "compiled", "-n", "3", "--invoke", "add", mod("basic"), "@index", "1"},
        "CXX=" + cxx);
    EXPECT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.out, r.out);
    EXPECT_NE(q.err.find("wasmwarp: note: compiled tier unavailable (host C++ compiler"), std::string::npos) << q.err;
    EXPECT_EQ(q.err.find("tier: "), std::string::npos) << q.err;
  }
  // An unwritable cache directory: compiled code runs, uncached, and says so.
  std::ofstream(path("plainfile")) << "x";
  Proc r = run({"run", "--output", "-", "--tier", "compiled", "--cache-dir", path("plainfile") + "/cache", "-n", "2",
                "--invoke", "add", mod("basic"), "@index", "1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("tier: compiled"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not cached"), std::string::npos) << r.err;
}

TEST_F(Cli, AutoTierSwitchesMidBatchWithIdenticalResults) {
  // A batch large enough to compile in the background: whatever ran each
  // stretch, every row is right.
  std::string out = path("fib.csv");
  Proc r = run({"run", "--tier", "auto", "--threads", "2", "-n", "20000", "--invoke", "fib", "--output", out,
                mod("basic"), "15"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("compile: "), std::string::npos) << r.err;
  auto ls = lines(slurp(out));
  ASSERT_EQ(ls.size(), 20001u);
  for (size_t i = 1; i < ls.size(); ++i) ASSERT_EQ(ls[i], std::to_string(i - 1) + ",610,") << i;
}

TEST_F(Cli, SmallAutoBatchesTierUp) {
  // Too small to compile whole: the interpreter starts at once, counts,
  // and fib gets hot (a call per step); the summary and the stats say so,
  // and the rows are right whatever ran them.
  std::string stats = path("tier-up.json");
  Proc r = run({"run", "--tier", "auto", "--threads", "1", "--cache-dir", path("tier-up-cache"), "-n", "3", "--invoke",
                "fib", "--output", "-", "--stats", stats, mod("basic"), "25"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\t75025\n1\t75025\n2\t75025\n") << r.err;
  EXPECT_NE(r.err.find("tier: auto"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tier-up: "), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(slurp(stats));
  ASSERT_TRUE(j.contains("tier_up")) << j.dump();
  EXPECT_GE(j["tier_up"]["hot_functions"].get<int>(), 1) << j.dump();
  EXPECT_EQ(j["tier_up"]["failed_units"].get<int>(), 0) << j.dump();
}

// A batch shorter than its background compile waits for the code to reach
// the cache; its time split says so (the wait is its compile phase, not
// time that no phase accounts for).
TEST_F(Cli, AutoTierWaitForTheCompileIsItsCompilePhase) {
  std::string stats = path("auto.json");
  Proc r = run({"run",      "-q",        "--backend", "cpu",         "--tier",           "auto", "--compile-wait",
                "end",      "--threads", "2",         "--cache-dir", path("auto-cache"), "-n",   "1100",
                "--invoke", "fib",       "--stats",   stats,         mod("basic"),       "1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(slurp(stats));
  ASSERT_FALSE(j["compile"]["used"].get<bool>()) << "1,100 calls of fib(1) outran a host compiler";
  const double wall_ms = j["wall_s"].get<double>() * 1e3;
  EXPECT_GT(j["phases_ms"]["compile"].get<double>(), 0.5 * wall_ms) << j.dump();
}

// A process's state letter from /proc (0: gone).
char process_state(const std::string& pid) {
  std::string line = slurp("/proc/" + pid + "/stat");
  const size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? 0 : line[close + 2];
}

// The process whose id `pid_file` holds has ended within 5 s (a killed
// orphan may stay a zombie until init reaps it).
void expect_ended(const std::string& pid_file) {
  std::string pid = slurp(pid_file);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  ASSERT_FALSE(pid.empty()) << pid_file;
  char st = process_state(pid);
  for (int k = 0; k < 50 && st && st != 'Z'; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    st = process_state(pid);
  }
  EXPECT_TRUE(st == 0 || st == 'Z') << pid_file << " " << pid << " still runs (state " << st << ")";
}

// A host compiler that never finishes (it waits for a child of its own,
// as g++ does for cc1plus): the batch waits --compile-wait for it, then
// the process ends at once, the compiler and its child killed, nothing of
// the compile left behind, the summary saying so.
TEST_F(Cli, AutoTierStopsWaitingForACompileThatOutlastsTheBatch) {
  const std::string cc = write("slow-cc.sh", "#!/bin/sh\necho $$ > " + path("cc.pid") + "\nsleep 600 &\necho $! > " +
                                                 path("child.pid") + "\nwait\nexit 1\n");
  fs::permissions(cc, fs::perms::owner_all);
  fs::create_directories(path("tmp"));
  const std::string stats = path("left.json");
  const auto t0 = std::chrono::steady_clock::now();
  Proc r = run({"run", "--backend", "cpu", "--tier", "auto", "--compile-wait", "0.3", "--threads", "2", "-n", "5000",
                "--invoke", "fib", "--output", path("out.csv"), "--stats", stats, mod("basic"), "10"},
               "CXX=" + cli_e2e::quote(cc) + " TMPDIR=" + cli_e2e::quote(path("tmp")));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_LT(seconds, 60) << "the process waited for the compiler";
  EXPECT_NE(r.err.find("compile: still running when the batch ended"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(slurp(stats));
  EXPECT_TRUE(j["compile"]["left_running"].get<bool>()) << j.dump();
  EXPECT_FALSE(j["compile"]["used"].get<bool>());
  EXPECT_EQ(j["completed"].get<uint64_t>(), 5000u);
  EXPECT_GE(j["phases_ms"]["compile"].get<double>(), 250);
  auto rows = lines(slurp(path("out.csv")));
  ASSERT_EQ(rows.size(), 5001u);
  EXPECT_EQ(rows[1].rfind("0,55,", 0), 0u) << rows[1];  // instance 0: fib(10)
  EXPECT_EQ(rows[5000].rfind("4999,55,", 0), 0u) << rows[5000];
  // The compiler started before the batch ended (it wrote its pid), and
  // neither it nor its child outlives the run.
  for (const char* f : {"cc.pid", "child.pid"}) expect_ended(path(f));
  for (const auto& e : fs::directory_iterator(path("tmp"))) ADD_FAILURE() << "left behind: " << e.path();
  if (fs::exists(path("cache")))
    for (const auto& e : fs::recursive_directory_iterator(path("cache")))
      EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
}

// SIGTERM while the batch waits for its compile (--tier compiled): the
// compile stops, no instance runs, the process exits 128 + 15 within
// seconds, and the summary does not call the stop a fallback to the
// interpreter.
TEST_F(Cli, SignalDuringTheCompileEndsTheBatch) {
  const std::string cc = write("never-cc.sh", "#!/bin/sh\nsleep 600 &\nwait\nexit 1\n");
  fs::permissions(cc, fs::perms::owner_all);
  const std::string cmd = "CXX=" + cli_e2e::quote(cc) + " " + cli_e2e::quote(WW_CLI_BIN) +
                          " run --backend cpu --tier compiled --no-cache -n 4 --invoke fib " +
                          cli_e2e::quote(mod("basic")) + " 10 >/dev/null 2>" + cli_e2e::quote(path("err.txt")) +
                          " </dev/null & p=$!; sleep 1; kill -TERM $p; wait $p; echo $? >" +
                          cli_e2e::quote(path("rc.txt"));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(std::system(("sh -c " + cli_e2e::quote(cmd)).c_str()), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = slurp(path("err.txt"));
  EXPECT_EQ(slurp(path("rc.txt")), "143\n") << err;
  EXPECT_LT(seconds, 30) << err;
  EXPECT_EQ(err.find("compiled tier unavailable"), std::string::npos) << err;
  EXPECT_NE(err.find("compile: stopped by the interrupt"), std::string::npos) << err;
  EXPECT_NE(err.find("completed: 0  trapped: 0  not finished: 4"), std::string::npos) << err;
}

// Two signals at once while a host compiler runs (the second quits at
// once, from the signal handler): the compiler and its child end with the
// process.
TEST_F(Cli, SecondSignalLeavesNoCompilerBehind) {
  const std::string cc = write("slow-cc2.sh", "#!/bin/sh\necho $$ > " + path("cc2.pid") + "\nsleep 600 &\necho $! > " +
                                                  path("child2.pid") + "\nwait\nexit 1\n");
  fs::permissions(cc, fs::perms::owner_all);
  const std::string q = cli_e2e::quote(path("child2.pid"));
  const std::string cmd =
      "CXX=" + cli_e2e::quote(cc) + " " + cli_e2e::quote(WW_CLI_BIN) +
      " run --backend cpu --tier compiled --no-cache -n 4 --invoke fib " + cli_e2e::quote(mod("basic")) +
      " 10 >/dev/null 2>" + cli_e2e::quote(path("err2.txt")) + " </dev/null & p=$!; k=0; while [ ! -s " + q +
      " ] && [ $k -lt 300 ]; do sleep 0.1; k=$((k+1)); done; kill -TERM $p; kill -TERM $p; wait $p; echo $? >" +
      cli_e2e::quote(path("rc2.txt"));
  ASSERT_EQ(std::system(("sh -c " + cli_e2e::quote(cmd)).c_str()), 0);
  EXPECT_EQ(slurp(path("rc2.txt")), "143\n") << slurp(path("err2.txt"));
  for (const char* f : {"cc2.pid", "child2.pid"}) expect_ended(path(f));
}

TEST_F(Cli, CompileWaitTakesSecondsOrEnd) {
  expect_error({"run", "--compile-wait", "soon", "--invoke", "fib", mod("basic"), "1"}, "--compile-wait");
  expect_error({"run", "--compile-wait", "-1", "--invoke", "fib", mod("basic"), "1"}, "--compile-wait");
}

}  // namespace
