// The fixture of the CLI's end-to-end tests: runs the built `wasmwarp`
// binary as a subprocess in a directory of the test's own.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli_e2e {

namespace fs = std::filesystem;

struct Proc {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string l;
  while (std::getline(ss, l)) out.push_back(l);
  return out;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ww_cli_e2e_" + std::to_string(getpid()) + "_" +
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

}  // namespace cli_e2e
