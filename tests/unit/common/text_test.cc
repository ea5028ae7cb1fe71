// Small text helpers.
#include <gtest/gtest.h>

#include "common/text.h"

namespace ww {
namespace {

TEST(Text, ReplaceAllReplacesEveryOccurrenceOnce) {
  EXPECT_EQ(replace_all("out/{i}/x{i}.txt", "{i}", "12"), "out/12/x12.txt");
  EXPECT_EQ(replace_all("arg @index", "@index", "7"), "arg 7");
  EXPECT_EQ(replace_all("no mark", "{i}", "1"), "no mark");
  // A replacement holding the mark is not replaced again.
  EXPECT_EQ(replace_all("{i}{i}", "{i}", "{i}"), "{i}{i}");
  EXPECT_EQ(replace_all("out/{i}", "{i}", ""), "out/");
  EXPECT_EQ(replace_all("abc", "", "x"), "abc");
}

}  // namespace
}  // namespace ww
