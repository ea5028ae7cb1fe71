// End-to-end tests of --trap-unknown-imports and --default-unknown-imports:
// function imports nothing provides trap when called, naming the import in
// every place a trap message shows (stderr, --output rows, CSV, JSON, the
// summary), or return zeros; a WASI command's hooks likewise; a memory
// nothing provides, or both options at once, is a usage error.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace {

using cli_e2e::Cli;
using cli_e2e::lines;
using cli_e2e::Proc;
using cli_e2e::slurp;

TEST_F(Cli, UnknownImportsTrapNamingTheImport) {
  // One call: an instance that never calls the import runs as without it.
  Proc ok = run({"run", "--trap-unknown-imports", "--invoke", "run", mod("unknown_imports"), "2"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.out, "3\n");
  Proc r = run({"run", "--trap-unknown-imports", "--invoke", "run", mod("unknown_imports"), "3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "wasm trap: unknown import called: env.foo\n");
  r = run({"run", "--trap-unknown-imports", "--invoke", "f64", mod("unknown_imports")});
  EXPECT_EQ(r.err, "wasm trap: unknown import called: env.f64s\n");

  // A batch: the rows on stdout, the summary's trap lines.
  Proc b = run({"run", "--trap-unknown-imports", "-n", "6", "--output", "-", "--invoke", "run", mod("unknown_imports"),
                "@index"});
  EXPECT_EQ(b.rc, 1);
  EXPECT_EQ(lines(b.out), (std::vector<std::string>{"0\t1", "1\ttrap: unknown import called: env.foo", "2\t3",
                                                    "3\ttrap: unknown import called: env.foo", "4\t5",
                                                    "5\ttrap: unknown import called: env.foo"}));
  EXPECT_NE(b.err.find("  trap unknown import called: 3\n"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("wasm trap: instance 1: unknown import called: env.foo (first of 3 trapped instances)"),
            std::string::npos)
      << b.err;
}

TEST_F(Cli, UnknownImportsInOutputFiles) {
  const std::string csv = path("t.csv"), json = path("t.json");
  for (const std::string& out : {csv, json}) {
    Proc r = run({"run", "--trap-unknown-imports", "-q", "-n", "4", "--output", out, "--invoke", "run",
                  mod("unknown_imports"), "@index"});
    EXPECT_EQ(r.rc, 1) << r.err;
  }
  EXPECT_EQ(lines(slurp(csv)),
            (std::vector<std::string>{"instance,result0,trap", "0,1,", "1,,unknown import called: env.foo", "2,3,",
                                      "3,,unknown import called: env.foo"}));
  auto j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["results"], nlohmann::json::parse("[1]"));
  EXPECT_EQ(j[1]["trap"], "unknown import called: env.foo");
  EXPECT_TRUE(j[1]["results"].is_null());
  // Its site is the import, not a place in the module's code.
  EXPECT_FALSE(j[1].contains("trap_offset")) << j[1].dump();
}

TEST_F(Cli, UnknownImportsDefaultToZeros) {
  Proc r = run({"run", "--default-unknown-imports", "--invoke", "run", mod("unknown_imports"), "3"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  r = run({"run", "--default-unknown-imports", "--invoke", "f64", mod("unknown_imports")});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");  // +0.0 ("-0" for the negative zero)
  r = run({"run", "--default-unknown-imports", "-n", "4", "--output", "-", "--invoke", "run", mod("unknown_imports"),
           "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"0\t1", "1\t0", "2\t3", "3\t0"}));
}

// The compiled tier on the CPU stands in the same way.
TEST_F(Cli, UnknownImportsCompiledOnTheCpu) {
  Proc r = run({"run", "--backend", "cpu", "--tier", "compiled", "--trap-unknown-imports", "-n", "4", "--output", "-",
                "--invoke", "run", mod("unknown_imports"), "@index"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("tier: compiled"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"0\t1", "1\ttrap: unknown import called: env.foo", "2\t3",
                                                    "3\ttrap: unknown import called: env.foo"}));
  r = run({"run", "--backend", "cpu", "--tier", "compiled", "--default-unknown-imports", "-n", "2", "--output", "-",
           "--invoke", "run", mod("unknown_imports"), "@index"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("tier: compiled"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"0\t1", "1\t0"}));
}

// A WASI command on the process's stdio and in a batch.
TEST_F(Cli, UnknownImportsOfWasiCommands) {
  expect_error({"run", mod("wasi_unknown_import")}, "unsatisfied import env.notify (func)");
  Proc r = run({"run", "--default-unknown-imports", mod("wasi_unknown_import")});
  EXPECT_EQ(r.rc, 3) << r.err;
  r = run({"run", "--trap-unknown-imports", mod("wasi_unknown_import")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("trap: unknown import called: env.notify"), std::string::npos) << r.err;
  r = run({"run", "--default-unknown-imports", "-n", "2", "--output", "-", mod("wasi_unknown_import")});
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"0\t3", "1\t3"})) << r.err;
  r = run({"run", "--trap-unknown-imports", "-n", "2", "--output", "-", mod("wasi_unknown_import")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(lines(r.out), (std::vector<std::string>{"0\ttrap: unknown import called: env.notify",
                                                    "1\ttrap: unknown import called: env.notify"}));
}

TEST_F(Cli, UnknownImportsUsageErrors) {
  expect_error(
      {"run", "--trap-unknown-imports", "--default-unknown-imports", "--invoke", "run", mod("unknown_imports"), "1"},
      "--trap-unknown-imports and --default-unknown-imports exclude each other");
  for (const char* opt : {"--trap-unknown-imports", "--default-unknown-imports"})
    expect_error({"run", opt, "--invoke", "run", mod("unknown_memory")},
                 "unsatisfied import env.mem (memory): only function imports can be left unknown");
  // Without either option, as before.
  expect_error({"run", "--invoke", "run", mod("unknown_imports"), "2"}, "unsatisfied import env.foo (func)");
  Proc h = run({"run", "--help"});
  EXPECT_NE(h.out.find("--trap-unknown-imports"), std::string::npos);
  EXPECT_NE(h.out.find("--default-unknown-imports"), std::string::npos);
}

}  // namespace
