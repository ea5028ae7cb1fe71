// A fresh directory under the build tree for a test of the compiled tier
// (its cache, its scratch), emptied first.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ww {

inline std::string scratch_dir(const std::string& name) {
  std::string d = std::string(WW_BINARY_DIR) + "/test-scratch/" + name;
  std::string cmd = "rm -rf '" + d + "' && mkdir -p '" + d + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return d;
}

}  // namespace ww
