// End-to-end tests: run the built `wasmwarp` binary as a subprocess and
// check its exit code, stdout, stderr and output files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/io_formats.h"

namespace {

namespace fs = std::filesystem;

struct Proc {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string l;
  while (std::getline(ss, l)) out.push_back(l);
  return out;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ww_cli_e2e_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string mod(const std::string& name) { return std::string(WW_CLI_MODULES) + "/" + name + ".wasm"; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  // Every run gets the test's own compiled-code cache (--tier auto may
  // compile in the background); `env` is prefixed as NAME=VALUE words.
  Proc run(const std::vector<std::string>& args, const std::string& env = "") {
    std::string cmd = "WW_CACHE_DIR=" + quote(path("cache")) + " " + env + " " + quote(WW_CLI_BIN);
    for (const auto& a : args) cmd += " " + quote(a);
    std::string o = path(".stdout"), e = path(".stderr");
    cmd += " >" + quote(o) + " 2>" + quote(e) + " </dev/null";
    int st = std::system(cmd.c_str());
    Proc r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(o);
    r.err = slurp(e);
    fs::remove(o);
    fs::remove(e);
    return r;
  }

  // A usage/input error: exit 2, nothing on stdout, exactly one stderr line
  // with the prefix and the expected text.
  void expect_error(const std::vector<std::string>& args, const std::string& text) {
    Proc r = run(args);
    std::string what;
    for (auto& a : args) what += a + " ";
    EXPECT_EQ(r.rc, 2) << what << "\n" << r.err;
    EXPECT_EQ(r.out, "") << what;
    auto ls = lines(r.err);
    ASSERT_EQ(ls.size(), 1u) << what << "\n" << r.err;
    EXPECT_EQ(ls[0].rfind("wasmwarp: error: ", 0), 0u) << ls[0];
    EXPECT_NE(ls[0].find(text), std::string::npos) << "want '" << text << "' in: " << ls[0];
  }

  fs::path dir_;
};

TEST_F(Cli, VersionAndHelp) {
  Proc v = run({"--version"});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, "wasmwarp 0.1.0\n");
  Proc h = run({"--help"});
  EXPECT_EQ(h.rc, 0);
  for (const char* c : {"run", "validate", "inspect", "disasm", "exit codes"})
    EXPECT_NE(h.out.find(c), std::string::npos) << c;
  Proc rh = run({"run", "--help"});
  EXPECT_EQ(rh.rc, 0);
  for (const char* c : {"--invoke", "--instances", "--mem-in", "@col:FILE", "@index", "--fuel", "--deny-recursion"})
    EXPECT_NE(rh.out.find(c), std::string::npos) << c;
  EXPECT_EQ(run({}).rc, 2);
}

TEST_F(Cli, RunPrintsIntegers) {
  Proc r = run({"run", "--invoke", "add", mod("basic"), "-5", "3"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "-2\n");
  EXPECT_EQ(r.err, "");
  // Negative numbers right after the module, and unsigned spellings.
  EXPECT_EQ(run({"run", "--invoke", "add", mod("basic"), "4294967295", "0x10"}).out, "15\n");
  EXPECT_EQ(run({"run", "--invoke=add64", mod("basic"), "-9223372036854775808", "-1"}).out,
            "9223372036854775807\n");
  // "--" ends the options explicitly.
  EXPECT_EQ(run({"run", "--invoke", "add", "--", mod("basic"), "-1", "-2"}).out, "-3\n");
}

TEST_F(Cli, RunFloatsRoundTrip) {
  auto one = [&](const char* fn, const char* arg) {
    Proc r = run({"run", "--invoke", fn, mod("basic"), arg});
    EXPECT_EQ(r.rc, 0) << fn << " " << arg << ": " << r.err;
    return r.out;
  };
  EXPECT_EQ(one("f32id", "0.1"), "0.1\n");
  EXPECT_EQ(one("f64id", "0.1"), "0.1\n");
  EXPECT_EQ(one("f32id", "0x1.8p3"), "12\n");
  EXPECT_EQ(one("f64id", "-0"), "-0\n");
  EXPECT_EQ(one("f32id", "-inf"), "-inf\n");
  EXPECT_EQ(one("f64id", "nan"), "nan\n");
  EXPECT_EQ(one("f32id", "nan:0x200000"), "nan:0x200000\n");
  EXPECT_EQ(one("fneg", "nan:0x200000"), "-nan:0x200000\n");
  EXPECT_EQ(one("fneg", "-nan"), "nan\n");
  EXPECT_EQ(one("f64id", "1e-320"), "1e-320\n");  // subnormal
  EXPECT_EQ(one("f32id", "3.4028235e38"), "3.4028235e+38\n");
  // What is printed reads back to the same bits.
  std::string printed = one("f64id", "0.30000000000000004");
  printed.pop_back();
  EXPECT_EQ(one("f64id", printed.c_str()), printed + "\n");
}

TEST_F(Cli, RunMultipleResultsAndRefs) {
  Proc r = run({"run", "--invoke", "mixed", mod("basic"), "-3", "0x1.8p1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "-3\n3\n-3\n");
  EXPECT_EQ(run({"run", "--invoke", "nothing", mod("basic")}).out, "");
  EXPECT_EQ(run({"run", "--invoke", "ext", mod("basic"), "null"}).out, "null\n");
  EXPECT_EQ(run({"run", "--invoke", "ext", mod("basic"), "ref.extern 7"}).out, "ref.extern 7\n");
  EXPECT_EQ(run({"run", "--invoke", "nullfunc", mod("basic")}).out, "null\n");
}

TEST_F(Cli, RunStart) {
  Proc r = run({"run", mod("start")});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "42\n");
  expect_error({"run", mod("nostart")}, "no --invoke given and the module exports no _start");
}

TEST_F(Cli, Traps) {
  Proc r = run({"run", "--invoke", "boom", mod("basic")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "wasm trap: unreachable\n");
  r = run({"run", "--invoke", "div", mod("basic"), "1", "0"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "wasm trap: integer divide by zero\n");
  r = run({"run", "--invoke", "load", mod("basic"), "65535"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "wasm trap: out of bounds memory access\n");
  r = run({"run", mod("start_trap")});  // the start function traps
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "wasm trap: unreachable\n");
  r = run({"run", "--fuel", "10000", "--invoke", "spin", mod("basic")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "wasm trap: fuel exhausted\n");
}

TEST_F(Cli, DenyRecursion) {
  EXPECT_EQ(run({"run", "--invoke", "fib", mod("basic"), "20"}).out, "6765\n");
  expect_error({"run", "--deny-recursion", "--invoke", "fib", mod("basic"), "20"},
               "recursion not supported: function fib calls itself");
  EXPECT_EQ(run({"run", "--deny-recursion", mod("start")}).out, "42\n");
}

TEST_F(Cli, BadModules) {
  std::string basic = slurp(mod("basic"));
  expect_error({"run", path("missing.wasm")}, "cannot open " + path("missing.wasm") + ": No such file or directory");
  expect_error({"run", dir_.string()}, "is a directory");
  expect_error({"run", write("empty.wasm", "")}, "is empty");
  expect_error({"run", write("trunc.wasm", basic.substr(0, 30))}, "trunc.wasm: ");
  expect_error({"run", write("magic.wasm", "\x01\x61\x73\x6d\x01\x00\x00\x00")}, "magic");
  expect_error({"run", write("bad.wat", "(module (func (result i32) i32.const))")}, "bad.wat:1:");
  expect_error({"run", "--invoke", "f", mod("invalid_type")}, "type mismatch");
  expect_error({"validate", mod("invalid_type")}, "type mismatch");
  expect_error({"validate", write("trunc2.wasm", basic.substr(0, 30))}, "trunc2.wasm: ");
  expect_error({"inspect", path("missing.wasm")}, "No such file");
  expect_error({"disasm", dir_.string()}, "is a directory");
  expect_error({"run", mod("imports")}, "unsatisfied import env.foo (func)");
}

constexpr const char* kSpinWat = R"((module
  (func (export "spin") (param i32) (result i32)
    (if (i32.eqz (local.get 0)) (then (loop $l (br $l))))
    (local.get 0))
  (func (export "nothing")))
)";

// A batch prints nothing per instance on stdout unless --output - asks;
// -q keeps the one line that says instances trapped.
TEST_F(Cli, OutputDiscipline) {
  std::string spin = write("spin.wat", kSpinWat);
  Proc r = run({"run", "-n", "10000", "--invoke", "nothing", spin});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("instances: 10000  completed: 10000"), std::string::npos) << r.err;
  r = run({"run", "-q", "-n", "50", "--invoke", "odd_traps", mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "wasm trap: instance 1: integer divide by zero (first of 25 trapped instances)\n");
}

// --timeout stops instances that are running, not only those not yet
// started: an endless loop on either CPU tier ends as "not finished".
TEST_F(Cli, TimeoutStopsRunningInstances) {
  std::string spin = write("spin.wat", kSpinWat);
  for (const char* tier : {"interp", "compiled"}) {
    std::string csv = path(std::string("t-") + tier + ".csv");
    const std::vector<std::string> args = {"run", "--backend", "cpu", "--tier", tier, "--timeout", "0.5", "-n", "6",
                                           "--threads", "2", "--invoke", "spin", "--output", csv, spin, "@index"};
    // The compiled tier's code comes from the test's cache: a host compile
    // under CI's load (1.4 s once) spent the whole timeout before any
    // instance ran.
    (void)run(args);
    Proc r = run(args);
    EXPECT_EQ(r.rc, 1) << tier << "\n" << r.err;
    EXPECT_NE(r.err.find("completed: 5  trapped: 0  not finished: 1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("wasmwarp: 1 instance(s) not finished: timeout"), std::string::npos) << r.err;
    EXPECT_NE(slurp(csv).find("0,,not finished: timeout\n"), std::string::npos) << slurp(csv);
  }
}

// SIGTERM (like Ctrl-C) stops the batch: what finished is written, the
// rest is marked, the exit code is 128 + 15, and no temporary file stays.
TEST_F(Cli, SignalWritesWhatFinished) {
  std::string spin = write("spin.wat", kSpinWat);
  std::string csv = path("sig.csv");
  std::string cmd = "WW_CACHE_DIR=" + quote(path("cache")) + " " + quote(WW_CLI_BIN) +
                    " run --backend cpu --tier interp -n 4 --threads 2 --invoke spin --output " + quote(csv) + " " +
                    quote(spin) + " @index >/dev/null 2>" + quote(path("err.txt")) +
                    " </dev/null & p=$!; sleep 1; kill -TERM $p; wait $p; echo $? >" + quote(path("rc.txt"));
  ASSERT_EQ(std::system(("sh -c " + quote(cmd)).c_str()), 0);
  EXPECT_EQ(slurp(path("rc.txt")), "143\n") << slurp(path("err.txt"));
  std::string rows = slurp(csv);
  EXPECT_NE(rows.find("0,,not finished: interrupted\n"), std::string::npos) << rows;
  EXPECT_NE(rows.find("3,3,\n"), std::string::npos) << rows;
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

// --stats writes the summary's figures as JSON: counts, phases, tiers.
TEST_F(Cli, StatsJson) {
  std::string stats = path("stats.json");
  Proc r = run({"run", "-q", "--backend", "cpu", "--tier", "interp", "-n", "40", "--invoke", "odd_traps", "--stats",
                stats, mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 1) << r.err;
  auto j = nlohmann::json::parse(slurp(stats));
  EXPECT_EQ(j["instances"], 40);
  EXPECT_EQ(j["completed"], 20);
  EXPECT_EQ(j["trapped"], 20);
  EXPECT_EQ(j["not_finished"], 0);
  EXPECT_EQ(j["traps"]["integer divide by zero"], 20);
  EXPECT_EQ(j["backend"], "cpu");
  for (const char* phase : {"read inputs", "translate", "compile", "plan", "upload", "memory set-up", "kernel",
                            "download", "write outputs"})
    EXPECT_TRUE(j["phases_ms"].contains(phase)) << phase;
  EXPECT_GT(j["phases_ms"]["kernel"].get<double>(), 0.0);
  EXPECT_EQ(j["tiers"][0]["tier"], "interp");
}

constexpr const char* kInitWat = R"((module
  (type $t (func (param i32) (result i32)))
  (memory 1)
  (table $tab 1 funcref)
  (global $ready (mut i32) (i32.const 0))
  (global $starts (mut i32) (i32.const 0))
  (func $square (type $t) (i32.mul (local.get 0) (local.get 0)))
  (func $cube (type $t) (i32.mul (local.get 0) (i32.mul (local.get 0) (local.get 0))))
  (elem (i32.const 0) $square)
  (elem declare func $cube)
  (func $start (global.set $starts (i32.add (global.get $starts) (i32.const 1))))
  (start $start)
  (func (export "build") (local $i i32)
    (loop $l
      (i32.store (i32.shl (local.get $i) (i32.const 2)) (call_indirect (type $t) (local.get $i) (i32.const 0)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 256))))
    (global.set $ready (i32.const 1)))
  (func (export "use_cube") (table.set $tab (i32.const 0) (ref.func $cube)))
  (func (export "fail") unreachable)
  (func (export "set_ready") (param i32) (global.set $ready (local.get 0)))
  (func (export "lookup") (param i32) (result i32)
    (if (result i32) (global.get $ready)
      (then (i32.load (i32.shl (i32.and (local.get 0) (i32.const 255)) (i32.const 2))))
      (else (i32.const -1))))
  (func (export "apply") (param i32) (result i32) (call_indirect (type $t) (local.get 0) (i32.const 0)))
  (func (export "starts") (result i32) (global.get $starts)))
)";

// --init runs exports once; every instance starts from the memory, globals
// and table they left, and the start function is not run again.
TEST_F(Cli, InitRunsOnceAndSeedsEveryInstance) {
  std::string m = write("init.wat", kInitWat);
  for (const char* backend : {"cpu"}) {
    Proc r = run({"run", "--backend", backend, "--output", "-", "-n", "3", "--invoke", "lookup", m, "@index"});
    EXPECT_EQ(r.out, "0\t-1\n1\t-1\n2\t-1\n") << r.err;
    r = run({"run", "--backend", backend, "--init", "build", "--output", "-", "-n", "3", "--invoke", "lookup", m,
             "@index"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "0\t0\n1\t1\n2\t4\n") << r.err;
    // Order matters: the table is switched to cubes before the build.
    r = run({"run", "--backend", backend, "--init", "use_cube", "--init", "build", "--output", "-", "-n", "3",
             "--invoke", "lookup", m, "@index"});
    EXPECT_EQ(r.out, "0\t0\n1\t1\n2\t8\n") << r.err;
    // A function reference the init left in the table is this instance's.
    r = run({"run", "--backend", backend, "--init", "use_cube", "--output", "-", "-n", "3", "--invoke", "apply", m,
             "@index"});
    EXPECT_EQ(r.out, "0\t0\n1\t1\n2\t8\n") << r.err;
    r = run({"run", "--backend", backend, "--init", "set_ready:1", "--output", "-", "-n", "2", "--invoke", "lookup",
             m, "@index"});
    EXPECT_EQ(r.out, "0\t0\n1\t0\n") << r.err;
    r = run({"run", "--backend", backend, "--init", "build", "--output", "-", "-n", "2", "--invoke", "starts", m});
    EXPECT_EQ(r.out, "0\t1\n1\t1\n") << r.err;
  }
  expect_error({"run", "--init", "fail", "-n", "2", "--invoke", "lookup", m, "1"},
               "--init export 'fail' trapped: unreachable");
  expect_error({"run", "--init", "lookup", "-n", "2", "--invoke", "lookup", m, "1"},
               "--init lookup: export 'lookup' takes 1 argument(s) (i32); give them as NAME:A,B");
  expect_error({"run", "--init", "lookup:x", "-n", "2", "--invoke", "lookup", m, "1"}, "--init lookup:x: argument 1");
  expect_error({"run", "--init", "nope", "-n", "2", "--invoke", "lookup", m, "1"}, "unknown export 'nope'");
}

// --then: calls on the same instances; the results are the last call's,
// and an instance that traps stops there with that trap.
TEST_F(Cli, ThenChainsCallsOnTheSameInstances) {
  std::string m = write("chain.wat", R"((module
  (memory 1)
  (global $g (mut i64) (i64.const 0))
  (func (export "init") (param i64) (global.set $g (local.get 0)))
  (func (export "add") (param i64)
    (if (i64.eq (global.get $g) (i64.const 3)) (then unreachable))
    (global.set $g (i64.add (global.get $g) (local.get 0)))
    (i64.store (i32.const 8) (i64.add (i64.load (i32.const 8)) (i64.const 1))))
  (func (export "result") (result i64 i64) (global.get $g) (i64.load (i32.const 8)))))");
  Proc r = run({"run", "--backend", "cpu", "--output", "-", "-n", "5", "--invoke", "init", "--then", "add:10:2",
                "--then", "result", m, "@index"});
  EXPECT_EQ(r.rc, 1) << r.err;  // instances 1 and 3 meet g == 3
  EXPECT_EQ(r.out, "0\t20\t10\n1\ttrap: unreachable\n2\t22\t10\n3\ttrap: unreachable\n4\t24\t10\n") << r.err;
  r = run({"run", "--backend", "cpu", "--invoke", "init", "--then", "add:3:@index", "--then", "result", m, "5"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "5\n3\n") << r.err;  // one instance, index 0: adds 0 three times
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "add", m, "1"},
               "--then add: export 'add' takes 1 argument(s) (i64); give them as NAME:K:A,B");
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "add:0:1", m, "1"}, "the count after ':' must be a positive number");
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "nope", m, "1"}, "unknown export 'nope'");
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "add:1:@col:x.npy", m, "1"},
               "arguments of chained calls are constants or @index");
}

// The text format is read as well as the binary one, whatever the name.
TEST_F(Cli, TextFormatModulesRun) {
  std::string wat = write("add.wat", ";; adds\n(module (func (export \"add\") (param i32 i32) (result i32)\n"
                                     "  local.get 0 local.get 1 i32.add))\n");
  Proc r = run({"run", "--invoke", "add", wat, "2", "3"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "5\n");
  r = run({"inspect", wat});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("add"), std::string::npos) << r.out;
}

TEST_F(Cli, BadArguments) {
  std::string m = mod("basic");
  expect_error({"run", "--invoke", "nope", m}, "unknown export 'nope'");
  expect_error({"run", "--invoke", "memory", m}, "export 'memory' is a memory, not a function");
  expect_error({"run", "--invoke", "add", m, "1"}, "export 'add' takes 2 argument(s) (i32, i32), got 1");
  expect_error({"run", "--invoke", "add", m, "1", "2", "3"}, "got 3");
  expect_error({"run", "--invoke", "add", m, "1", "x"}, "argument 2 (i32): cannot parse 'x' as i32");
  expect_error({"run", "--invoke", "add", m, "1", "4294967296"}, "out of range for i32");
  expect_error({"run", "--invoke", "f32id", m, "1.2.3"}, "cannot parse '1.2.3' as f32");
  expect_error({"run", "--invoke", "f32id", m, "nan:0x0"}, "bad NaN payload");
  expect_error({"run", "--invoke", "nullfunc", m, "@nope"}, "takes 0 argument(s)");
  expect_error({"run", "--invoke", "f32id", m, "@nope"}, "unknown per-instance argument '@nope'");
  expect_error({"run", "--bogus", m}, "--bogus");
  expect_error({"run"}, "missing MODULE.wasm");
  expect_error({"run", "-n", "0", "--invoke", "bump", m}, "--instances must be at least 1");
  expect_error({"run", "-n", "abc", "--invoke", "bump", m}, "--instances");
  expect_error({"run", "--threads", "0", "--invoke", "bump", m}, "--threads");
  expect_error({"run", "--gpus", "x", "--invoke", "bump", m}, "--gpus 'x': give all, a count");
  expect_error({"run", "--gpus", "0,,1", "--invoke", "bump", m}, "--gpus '0,,1'");
  expect_error({"run", "--gpus", "0", "--invoke", "bump", m}, "--gpus 0: at least one GPU");
  expect_error({"run", "--gpu-workers", "9", "--invoke", "bump", m}, "--gpu-workers must be between 1 and 8");
  expect_error({"frobnicate"}, "unknown command 'frobnicate'");
  expect_error({"validate"}, "validate");
}

// A GPU that is not there is named, on a machine with GPUs or without;
// the CPU backend runs whatever --gpus says.
TEST_F(Cli, GpuSelection) {
  const std::string m = mod("basic");
  Proc r = run({"run", "--backend", "gpu", "--gpus", "7,", "-n", "4", "--invoke", "bump", m});
  EXPECT_NE(r.rc, 0);
  const bool named = r.err.find("GPU 7 was asked for; this machine has") != std::string::npos;
  const bool none = r.err.find("the GPU backend was asked for") != std::string::npos;
  EXPECT_TRUE(named || none) << r.err;
  Proc c = run({"run", "--backend", "cpu", "--gpus", "2", "--output", "-", "-n", "3", "--invoke", "add", m, "@index", "1"});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(c.out, "0\t1\n1\t2\n2\t3\n");
}

TEST_F(Cli, ValidateInspectDisasm) {
  Proc v = run({"validate", mod("basic")});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, "valid\n");
  Proc i = run({"inspect", mod("basic")});
  EXPECT_EQ(i.rc, 0) << i.err;
  for (const char* s : {"exports: 19", "add: func 0 (i32, i32) -> (i32)", "fib: (i32) -> (i32)",
                        "callees [fib]", "recursive groups: 1", "  [fib]", "frame slots", "max stack",
                        "code section:", "ratio", "times: decode"})
    EXPECT_NE(i.out.find(s), std::string::npos) << s << "\n" << i.out;
  Proc ii = run({"inspect", mod("imports")});
  EXPECT_EQ(ii.rc, 0);
  EXPECT_NE(ii.out.find("env.foo: func (i32) -> ()"), std::string::npos) << ii.out;
  Proc d = run({"disasm", mod("start")});
  EXPECT_EQ(d.rc, 0) << d.err;
  EXPECT_NE(d.out.find("_start"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("42"), std::string::npos) << d.out;
}

TEST_F(Cli, BatchIndexToStdout) {
  Proc r = run({"run", "--output", "-", "-n", "5", "--threads", "2", "--invoke", "add", mod("basic"), "@index", "-2"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\t-2\n1\t-1\n2\t0\n3\t1\n4\t2\n");
  EXPECT_NE(r.err.find("instances: 5  completed: 5  trapped: 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("backend=cpu threads=2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("instances/s"), std::string::npos) << r.err;
  // -q drops the summary.
  EXPECT_EQ(run({"run", "--output", "-", "-q", "-n", "2", "--invoke", "bump", mod("basic")}).err, "");
}

TEST_F(Cli, BatchInstancesAreIndependent) {
  // Every instance starts with its own fresh global, so each bump returns 1,
  // also when a thread runs many instances (and recycles its store).
  std::string out = path("bump.csv");
  Proc r = run({"run", "-n", "20000", "--threads", "1", "--invoke", "bump", "--output", out, mod("basic")});
  EXPECT_EQ(r.rc, 0) << r.err;
  auto ls = lines(slurp(out));
  ASSERT_EQ(ls.size(), 20001u);
  EXPECT_EQ(ls[0], "instance,result0,trap");
  for (size_t i = 1; i < ls.size(); ++i) ASSERT_EQ(ls[i], std::to_string(i - 1) + ",1,") << i;
}

// A CPU worker keeps one instance and returns it to the module's image
// after each input: whatever an instance wrote (memory, a global, a grown
// memory), also when it then trapped, the next one must not see.
const char* kDirtyWat = R"((module
  (memory 1 4)
  (data (i32.const 0) "\2a")
  (global $g (mut i32) (i32.const 0))
  (func (export "dirty") (param $i i32) (result i32)
    (local $old i32) (local $at i32)
    (local.set $at (i32.and (i32.mul (local.get $i) (i32.const 4)) (i32.const 0xfffc)))
    (local.set $old (i32.add (i32.add (i32.load8_u (i32.const 0)) (memory.size))
                             (i32.add (global.get $g) (i32.load (local.get $at)))))
    (i32.store8 (i32.const 0) (i32.const 0))
    (i32.store (local.get $at) (i32.const 1000))
    (global.set $g (i32.const 7))
    (drop (memory.grow (i32.const 1)))
    (if (i32.and (local.get $i) (i32.const 1)) (then unreachable))
    (local.get $old)))
)";

TEST_F(Cli, BatchInstancesStartFromTheImageAfterWritesAndTraps) {
  std::string m = write("dirty.wat", kDirtyWat);
  for (const char* tier : {"interp", "compiled"}) {
    std::string out = path(std::string("dirty-") + tier + ".csv");
    Proc r = run({"run", "--backend", "cpu", "--tier", tier, "-n", "3000", "--threads", "2", "--invoke", "dirty",
                  "--output", out, m, "@index"});
    EXPECT_EQ(r.rc, 1) << r.err;  // the odd instances trap
    auto ls = lines(slurp(out));
    ASSERT_EQ(ls.size(), 3001u) << tier;
    // 42 (the data byte) + 1 page + 0 (the global) + the word at 4i: zero,
    // but for instance 0, whose word holds the data byte.
    EXPECT_EQ(ls[1], "0,85,");
    for (size_t i = 1; i < 3000; ++i)
      ASSERT_EQ(ls[i + 1], std::to_string(i) + (i % 2 ? ",,unreachable" : ",43,")) << tier << " row " << i;
  }
}

// WASI calls this layer lacks return ENOSYS (52) and `inspect` says so; a
// pointer out of memory is EFAULT (21); proc_exit's code is the exit code.
const char* kWasiWat = R"((module
  (import "wasi_snapshot_preview1" "fd_advise" (func $advise (param i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "\18\00\00\00\03\00\00\00hi\n")
  (func (export "_start")
    (if (i32.ne (call $advise (i32.const 0) (i64.const 0) (i64.const 0) (i32.const 0)) (i32.const 52))
      (then (call $exit (i32.const 1))))
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 32)))
    (call $exit (call $write (i32.const 1) (i32.const 65534) (i32.const 1) (i32.const 32)))))
)";

// gpu.read_file / gpu.write_file reach the --dir and --dir-rw directories
// through the WASI layer's sandbox, on both CPU tiers.
TEST_F(Cli, GpuFileIntrinsicsReadAndWriteBeneathThePreopens) {
  const std::string m = std::string(WW_SOURCE_DIR) + "/tests/wasi/files/copy.wat";
  fs::create_directories(path("in"));
  write("in/data.txt", "hello");
  for (const char* tier : {"interp", "compiled"}) {
    const std::string out = path(std::string("out-") + tier), csv = path("r.csv");
    Proc r = run({"run", "--backend", "cpu", "--tier", tier, "-q", "-n", "3", "--invoke", "copy", "--dir",
                  path("in") + "::in", "--dir-rw", out + "/{i}::out", "--output", csv, m});
    ASSERT_EQ(r.rc, 0) << tier << ": " << r.err;
    EXPECT_EQ(slurp(csv), "instance,result0,trap\n0,5,\n1,5,\n2,5,\n") << tier;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(slurp(out + "/" + std::to_string(i) + "/copy.txt"), "hello" + std::to_string(i));
  }
  // A path out of its preopen, a write beneath a read-only one, and no
  // directories at all: ENOTCAPABLE (-76).
  for (const char* fn : {"escape", "readonly"}) {
    Proc r = run({"run", "--backend", "cpu", "-q", "-n", "2", "--invoke", fn, "--dir", path("in") + "::in", "--output",
                  path("e.csv"), m});
    EXPECT_EQ(slurp(path("e.csv")), "instance,result0,trap\n0,-76,\n1,-76,\n") << fn << ": " << r.err;
  }
  Proc none = run({"run", "--backend", "cpu", "-q", "-n", "1", "--invoke", "escape", "--output", path("n.csv"), m});
  EXPECT_EQ(slurp(path("n.csv")), "instance,result0,trap\n0,-76,\n") << none.err;
}

TEST_F(Cli, WasiCommandsAndTheirBadInput) {
  std::string m = write("wasi.wat", kWasiWat);
  for (const char* tier : {"interp", "compiled"}) {
    Proc r = run({"run", "--backend", "cpu", "--tier", tier, m});
    EXPECT_EQ(r.out, "hi\n") << tier << " " << r.err;
    EXPECT_EQ(r.rc, 21) << tier << " " << r.err;  // the second fd_write's iovec is out of memory
  }
  Proc i = run({"inspect", m});
  EXPECT_NE(i.out.find("fd_advise: func (i32, i64, i64, i32) -> (i32)  (not implemented: returns ENOSYS)"),
            std::string::npos)
      << i.out;
  EXPECT_EQ(i.out.find("fd_write: func (i32, i32, i32, i32) -> (i32)  (not"), std::string::npos) << i.out;
  expect_error({"run", "--backend", "cpu", "--dir", path("no-such-dir"), m}, "cannot open --dir");
  // A batch: each instance's output whole, in order; exit codes in --output.
  std::string codes = path("wasi-codes.csv");
  Proc b = run({"run", "--backend", "cpu", "-q", "-n", "3", "--output", codes, m});
  EXPECT_EQ(b.rc, 1) << b.err;  // instances exited non-zero
  EXPECT_EQ(b.out, "hi\nhi\nhi\n");
  EXPECT_EQ(slurp(codes), "instance,exit_code,trap\n0,21,\n1,21,\n2,21,\n");
  // Output past --output-cap is cut, with one line saying so.
  Proc capped = run({"run", "--backend", "cpu", "-q", "-n", "2", "--output-cap", "2", m});
  EXPECT_EQ(capped.out, "hihi");
  EXPECT_EQ(capped.rc, 1);
  EXPECT_NE(capped.err.find("2 instance(s) wrote more than --output-cap allows"), std::string::npos) << capped.err;
  expect_error({"run", "--backend", "cpu", "-n", "2", "--stdout", path("no-such-dir") + "/out{i}.txt", m},
               "cannot open stdout file");
  expect_error({"run", "--backend", "cpu", "-n", "2", "--dir-rw", path("w") + "::out", m},
               "a batch's writable directory needs {i} in its host path");
  expect_error({"run", "--backend", "cpu", "--env", "NOEQUALS", m}, "--env 'NOEQUALS': expected NAME=VALUE");
  // --timeout and --fuel stop a WASI program as they stop an export.
  std::string spin = write("spin-wasi.wat", R"((module
    (import "wasi_snapshot_preview1" "proc_exit" (func (param i32)))
    (memory (export "memory") 1) (func (export "_start") (loop (br 0)))))");
  for (const char* tier : {"interp", "compiled"}) {
    Proc t = run({"run", "--backend", "cpu", "--tier", tier, "--timeout", "0.3", spin});
    EXPECT_EQ(t.rc, 1) << tier << " " << t.err;
    EXPECT_NE(t.err.find("not finished: timeout"), std::string::npos) << tier << " " << t.err;
  }
  Proc fuel = run({"run", "--backend", "cpu", "--tier", "interp", "--fuel", "100000", spin});
  EXPECT_EQ(fuel.rc, 1) << fuel.err;
  EXPECT_NE(fuel.err.find("fuel exhausted"), std::string::npos) << fuel.err;
  std::string bad = write("badwasi.wat", R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32)))
    (memory (export "memory") 1) (func (export "_start"))))");
  expect_error({"run", "--backend", "cpu", bad}, "has type (i32) -> (i32), WASI's is (i32, i32, i32, i32) -> (i32)");
}

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
  Proc r = run({"run", "--output", "-", "-n", "3", "-q", "--invoke", "add", mod("basic"), "@col:" + pn + ":0", "@col:" + pn + ":1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\t9\n1\t18\n2\t27\n");
  // .npy f8, 1-D, bit-exact NaN payload.
  std::vector<uint64_t> f{0x3FF8000000000000ull, 0x7FF0000000000001ull};
  std::string pf = write("f.npy", npy_header("'<f8'", false, {2}) + std::string(reinterpret_cast<char*>(f.data()), 16));
  r = run({"run", "--output", "-", "-n", "2", "-q", "--invoke", "f64id", mod("basic"), "@col:" + pf});
  EXPECT_EQ(r.out, "0\t1.5\n1\tnan:0x1\n") << r.err;
  // .csv with a header row.
  std::string pc = write("c.csv", "x,y\n1,-0x1p-1\n2,inf\n3,-0\n");
  r = run({"run", "--output", "-", "-n", "3", "-q", "--invoke", "mixed", mod("basic"), "@col:" + pc + ":0", "@col:" + pc + ":1"});
  EXPECT_EQ(r.out, "0\t1\t-0.5\t1\n1\t2\tinf\t2\n2\t3\t-0\t3\n") << r.err;
  // raw little-endian i64.
  std::vector<int64_t> b{5, -6};
  std::string pb = write("b.bin", std::string(reinterpret_cast<char*>(b.data()), 16));
  r = run({"run", "--output", "-", "-n", "2", "-q", "--invoke", "add64", mod("basic"), "@col:" + pb, "@index"});
  EXPECT_EQ(r.out, "0\t5\n1\t-5\n") << r.err;
  // Too few rows, missing column, bad cell: errors before running.
  expect_error({"run", "-n", "4", "--invoke", "add", mod("basic"), "@col:" + pn + ":0", "1"}, "has 3 rows, but 4 instances");
  expect_error({"run", "-n", "3", "--invoke", "add", mod("basic"), "@col:" + pn + ":2", "1"}, "column 2 does not exist");
  expect_error({"run", "-n", "4", "--invoke", "add", mod("basic"), "@col:" + pc, "1"}, "has 3 rows");
  expect_error({"run", "-n", "3", "--invoke", "add64", mod("basic"), "@col:" + pb, "1"}, "has 2 rows");
  expect_error({"run", "-n", "1", "--invoke", "add", mod("basic"), "@col:" + pf, "1"}, "cannot feed an i32");
  expect_error({"run", "-n", "1", "--invoke", "add", mod("basic"), "@col:" + path("none.csv"), "1"}, "No such file");
  std::string bad = write("bad.csv", "1\nzz\n");
  expect_error({"run", "-n", "2", "--invoke", "f32id", mod("basic"), "@col:" + bad}, "line 2: cannot parse 'zz' as f32");
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
  r = run({"run", "-n", "3", "--invoke", "add_lanes", "--output", out, mod("lanes"), "i32x4 0 10 20 0xffffffff",
           "@index"});
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
  expect_error({"run", "-n", "2", "--invoke", "add_lanes", mod("lanes"), "@index", "1"},
               "@index cannot feed a v128");
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
  Proc r = run({"run", "-n", std::to_string(n), "--invoke", "hash", "--mem-in", "input_ptr=" + in,
               "--mem-out", "output_ptr:8=" + hashes, "--output", res, mod("hash")});
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
  r = run({"run", "--output", "-", "-n", "3", "-q", "--invoke", "hash", "--mem-in", "1024=" + longer, "--mem-in-size", "64",
           "--mem-out", "0x1000:8=" + hashes, mod("hash")});
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
  Proc r = run({"run", "-n", "4", "--invoke", "set_out", "--mem-out", "out_ptr:8=" + out, "--output", csv,
               mod("hash"), "@col:" + addrs});
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
  expect_error({"run", "--invoke", "hash", "--mem-in", "nosuch=" + msgs, mod("hash")}, "neither a number nor an export");
  expect_error({"run", "--invoke", "hash", "--mem-in", "hash=" + msgs, mod("hash")}, "need () -> (i32)");
  expect_error({"run", "--invoke", "hash", "--mem-in", msgs, mod("hash")}, "expected ADDR=FILE");
  expect_error({"run", "--invoke", "hash", "--mem-out", "4096=" + path("o.bin"), mod("hash")}, "expected ADDR:LEN=FILE");
  expect_error({"run", "--mem-in", "0=" + msgs, mod("start")}, "need a module with a memory");
}

}  // namespace

namespace {

// ------------------------------------------------------------ tiers

TEST_F(Cli, CompiledTierGivesTheInterpretersResults) {
  std::string a = path("interp.json"), b = path("compiled.json");
  for (auto [tier, out] : {std::pair{"interp", a}, std::pair{"compiled", b}}) {
    Proc r = run({"run", "--tier", tier, "-n", "30", "--invoke", "odd_traps", "--output", out, mod("basic"),
                  "@index"});
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
  Proc first = run({"run", "--output", "-", "--tier", "compiled", "-n", "2", "--invoke", "fib", mod("basic"), "@index"});
  EXPECT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.err.find("compile: cache miss"), std::string::npos) << first.err;
  Proc second = run({"run", "--output", "-", "--tier", "auto", "-n", "2", "--invoke", "fib", mod("basic"), "@index"});
  EXPECT_EQ(second.rc, 0) << second.err;
  EXPECT_NE(second.err.find("tier: compiled"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("compile: cache hit"), std::string::npos) << second.err;
  // --no-cache neither reads nor writes it.
  Proc none = run({"run", "--output", "-", "--tier", "compiled", "--no-cache", "-n", "2", "--invoke", "fib", mod("basic"), "@index"});
  EXPECT_NE(none.err.find("compile: cache miss"), std::string::npos) << none.err;
}

TEST_F(Cli, CompileCommandFillsTheCacheAndEmitsSource) {
  std::string src = path("fib.cc"), cache = path("own-cache");
  Proc c = run({"compile", "--backend", "cpu", "--invoke", "fib", "--cache-dir", cache, "--emit-source", src,
                mod("basic")});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_NE(c.out.find("compiled for the CPU (cache miss)"), std::string::npos) << c.out;
  std::string text = slurp(src);
  EXPECT_NE(text.find("sem::i32_add"), std::string::npos);
  EXPECT_NE(text.find("ww_entries"), std::string::npos);
  Proc r = run({"run", "--output", "-", "--tier", "auto", "--cache-dir", cache, "-n", "3", "--invoke", "fib", mod("basic"), "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("compile: cache hit"), std::string::npos) << r.err;
  // Compiled for every export (no --invoke): any one export's run uses it.
  std::string all = path("all-cache");
  EXPECT_EQ(run({"compile", "--backend", "cpu", "--cache-dir", all, mod("basic")}).rc, 0);
  Proc a = run({"run", "--output", "-", "--tier", "auto", "--cache-dir", all, "-n", "2", "--invoke", "add", mod("basic"), "@index", "1"});
  EXPECT_EQ(a.rc, 0) << a.err;
  EXPECT_NE(a.err.find("compile: cache hit"), std::string::npos) << a.err;
  expect_error({"compile", "--invoke", "nope", mod("basic")}, "unknown export 'nope'");
  expect_error({"compile", "--gpu-arch", "sm_5", mod("basic")}, "--gpu-arch must be");
  expect_error({"run", "--tier", "fast", "--invoke", "fib", mod("basic"), "1"}, "--tier must be interp, compiled or auto");
}

// NVRTC needs no GPU: generated GPU code (here with calls that leave for
// the host, whose leave and resume paths and the device headers come
// along) must compile wherever NVRTC loads, so CI catches what only the
// GPU machine ran before.
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
    Proc r = run({"run", "--output", "-", "--tier", "compiled", "-n", "3", "--invoke", "add", mod("basic"), "@index", "1"},
                 "CXX=" + cxx);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "0\t1\n1\t2\n2\t3\n");
    EXPECT_NE(r.err.find("compile: compiled tier unavailable (host C++ compiler"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tier: interp"), std::string::npos) << r.err;
    // -q drops the summary, not the line that says the tier asked for did not run.
    Proc q = run({"run", "-q", "--output", "-", "--tier", "compiled", "-n", "3", "--invoke", "add", mod("basic"), "@index",
                  "1"},
                 "CXX=" + cxx);
    EXPECT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.out, r.out);
    EXPECT_NE(q.err.find("wasmwarp: note: compiled tier unavailable (host C++ compiler"), std::string::npos) << q.err;
    EXPECT_EQ(q.err.find("tier: "), std::string::npos) << q.err;
  }
  // An unwritable cache directory: compiled code runs, uncached, and says so.
  std::ofstream(path("plainfile")) << "x";
  Proc r = run({"run", "--output", "-", "--tier", "compiled", "--cache-dir", path("plainfile") + "/cache", "-n", "2", "--invoke",
                "add", mod("basic"), "@index", "1"});
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

}  // namespace
