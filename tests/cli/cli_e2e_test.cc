// End-to-end tests: run the built `wasmwarp` binary as a subprocess and
// check its exit code, stdout, stderr and output files (columns, output
// formats and the compiled tier: cli_outputs_test.cc).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace {

using cli_e2e::Cli;
using cli_e2e::lines;
using cli_e2e::Proc;
using cli_e2e::quote;
using cli_e2e::slurp;
namespace fs = std::filesystem;

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
  // No arguments: the usage, with a first command to try, on stderr.
  Proc none = run({});
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("examples:\n  wasmwarp run prog.wasm"), std::string::npos) << none.err;
}

TEST_F(Cli, RunPrintsIntegers) {
  Proc r = run({"run", "--invoke", "add", mod("basic"), "-5", "3"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "-2\n");
  EXPECT_EQ(r.err, "");
  // Negative numbers right after the module, and unsigned spellings.
  EXPECT_EQ(run({"run", "--invoke", "add", mod("basic"), "4294967295", "0x10"}).out, "15\n");
  EXPECT_EQ(run({"run", "--invoke=add64", mod("basic"), "-9223372036854775808", "-1"}).out, "9223372036854775807\n");
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
    const std::vector<std::string> args = {"run",  "--backend", "cpu", "--tier",    tier,    "--timeout",
                                           "0.5",  "-n",        "6",   "--threads", "2",     "--invoke",
                                           "spin", "--output",  csv,   spin,        "@index"};
    // The compiled tier's code comes from the test's cache: a host compile
    // under CI's load can outlast the whole timeout before any instance
    // runs.
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

// A WASI program that never ends, on compiled CPU code: SIGTERM stops its
// running instances (its code looks at the interrupt byte), and a single
// run's compile serves the batch (one request for both).
TEST_F(Cli, SignalStopsCompiledWasiInstances) {
  const std::string prog = write("forever.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (loop $l (br $l))))
)");
  const std::string cache = path("wasi-cache");
  // The single run fills the cache; its own Ctrl-C path is the timeout's.
  Proc one = run({"run", "--tier", "compiled", "--cache-dir", cache, "--timeout", "0.5", prog});
  EXPECT_EQ(one.rc, 1) << one.err;
  const std::string cmd = quote(WW_CLI_BIN) + " run --backend cpu --tier compiled --cache-dir " + quote(cache) +
                          " -n 2 --threads 2 " + quote(prog) + " >/dev/null 2>" + quote(path("werr.txt")) +
                          " </dev/null & p=$!; sleep 1; kill -TERM $p; wait $p; echo $? >" + quote(path("wrc.txt"));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(std::system(("sh -c " + quote(cmd)).c_str()), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = slurp(path("werr.txt"));
  EXPECT_EQ(slurp(path("wrc.txt")), "143\n") << err;
  EXPECT_LT(seconds, 20) << err;
  EXPECT_NE(err.find("compile: cache hit"), std::string::npos) << err;
  EXPECT_NE(err.find("not finished: 2"), std::string::npos) << err;
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
    r = run({"run", "--backend", backend, "--init", "set_ready:1", "--output", "-", "-n", "2", "--invoke", "lookup", m,
             "@index"});
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
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "add:0:1", m, "1"},
               "the count after ':' must be a positive number");
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "nope", m, "1"}, "unknown export 'nope'");
  expect_error({"run", "-n", "2", "--invoke", "init", "--then", "add:1:@col:x.npy", m, "1"},
               "arguments of chained calls are constants or @index");
}

// The text format is read as well as the binary one, whatever the name.
TEST_F(Cli, TextFormatModulesRun) {
  std::string wat = write("add.wat",
                          ";; adds\n(module (func (export \"add\") (param i32 i32) (result i32)\n"
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
  Proc c =
      run({"run", "--backend", "cpu", "--gpus", "2", "--output", "-", "-n", "3", "--invoke", "add", m, "@index", "1"});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(c.out, "0\t1\n1\t2\n2\t3\n");
}

TEST_F(Cli, ValidateInspectDisasm) {
  Proc v = run({"validate", mod("basic")});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out, "valid\n");
  Proc i = run({"inspect", mod("basic")});
  EXPECT_EQ(i.rc, 0) << i.err;
  for (const char* s :
       {"exports: 19", "add: func 0 (i32, i32) -> (i32)", "fib: (i32) -> (i32)", "callees [fib]", "recursive groups: 1",
        "  [fib]", "frame slots", "max stack", "code section:", "ratio", "times: decode"})
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

// A WASI name this layer does not know returns ENOSYS (52) and `inspect`
// says so; a
// pointer out of memory is EFAULT (21); proc_exit's code is the exit code.
const char* kWasiWat = R"((module
  (import "wasi_snapshot_preview1" "fd_nonesuch" (func $advise (param i32 i64 i64 i32) (result i32)))
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
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(slurp(out + "/" + std::to_string(i) + "/copy.txt"), "hello" + std::to_string(i));
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

// A single WASI run on the GPU (a batch of one): the program's stdout and
// its exit code, as on the CPU. Skipped without a GPU.
TEST_F(Cli, WasiSingleRunOnTheGpu) {
  std::string m = write("wasi-gpu.wat", kWasiWat);
  for (const char* tier : {"interp", "compiled"}) {
    Proc r = run({"run", "--backend", "gpu", "--tier", tier, "--cache-dir", path("gpu-cache"), m});
    if (r.rc == 2 && r.err.find("the GPU backend was asked for") != std::string::npos) GTEST_SKIP() << r.err;
    EXPECT_EQ(r.out, "hi\n") << tier << " " << r.err;
    EXPECT_EQ(r.rc, 21) << tier << " " << r.err;
  }
}

// A WASI batch whose instances write nothing still gives each its
// --stdout and --stderr files, empty, on every backend and tier (the GPU
// serves such instances whole on the device, with no call to the host).
TEST_F(Cli, SilentWasiInstancesGetTheirOutputFiles) {
  std::string m = write("silent.wat", R"((module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const 0)))))");
  for (const char* backend : {"cpu", "gpu"}) {
    for (const char* tier : {"interp", "compiled"}) {
      const std::string dir = path(std::string("silent-") + backend + "-" + tier);
      std::filesystem::create_directories(dir);
      Proc r = run({"run", "--backend", backend, "--tier", tier, "--cache-dir", path("silent-cache"), "-q", "-n", "3",
                    "--stdout", dir + "/{i}.out", "--stderr", dir + "/{i}.err", m});
      if (r.rc == 2 && r.err.find("the GPU backend was asked for") != std::string::npos) continue;
      EXPECT_EQ(r.rc, 0) << backend << " " << tier << " " << r.err;
      for (int i = 0; i < 3; ++i) {
        for (const char* ext : {".out", ".err"}) {
          const std::string f = dir + "/" + std::to_string(i) + ext;
          EXPECT_TRUE(std::filesystem::exists(f)) << f;
          EXPECT_EQ(slurp(f), "") << f;
        }
      }
    }
  }
}

TEST_F(Cli, WasiCommandsAndTheirBadInput) {
  std::string m = write("wasi.wat", kWasiWat);
  for (const char* tier : {"interp", "compiled"}) {
    Proc r = run({"run", "--backend", "cpu", "--tier", tier, m});
    EXPECT_EQ(r.out, "hi\n") << tier << " " << r.err;
    EXPECT_EQ(r.rc, 21) << tier << " " << r.err;  // the second fd_write's iovec is out of memory
  }
  Proc i = run({"inspect", m});
  EXPECT_NE(i.out.find("fd_nonesuch: func (i32, i64, i64, i32) -> (i32)  (not implemented: returns ENOSYS)"),
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
  // Paths checked before any instance runs.
  expect_error({"run", "--backend", "cpu", "-n", "2", "--stdout", path("no-such-dir") + "/out{i}.txt", m},
               "--stdout '" + path("no-such-dir") + "/out{i}.txt': " + path("no-such-dir") + " does not exist");
  expect_error({"run", "--backend", "cpu", "-n", "2", "--stdout", path("same.txt"), m},
               "a batch's instances would all write this one file");
  expect_error({"run", "--backend", "cpu", "-n", "2", "--stdin", path("no-such-dir") + "/in{i}.txt", m},
               "--stdin '" + path("no-such-dir") + "/in{i}.txt': cannot read");
  expect_error({"run", "--backend", "cpu", "-n", "2", "--dir", path("no-such-dir"), m}, "no such folder");
  expect_error({"run", "--backend", "cpu", "-n", "2", "--stats", path("no-such-dir") + "/s.json", m},
               "--stats " + path("no-such-dir") + "/s.json: no such folder");
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

}  // namespace
