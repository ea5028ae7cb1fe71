// Input files: the whole file or its first bytes, from a regular file (read
// in pieces on the host workers) and from a pipe (read in order), with the
// whole file's size either way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "common/file_read.h"

namespace ww {
namespace {

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char(i * 131 + (i >> 9));
  return s;
}

TEST(FileRead, APrefixOfARegularFileAndTheWholeSize) {
  // Large enough to be read in pieces on the workers (pieces of 4 MiB).
  const std::string bytes = pattern((size_t(9) << 20) + 12345);
  const std::string path = temp_file("prefix.bin", bytes);
  uint64_t size = 0;
  auto part = read_file_prefix(path, (size_t(5) << 20) + 7, &size);
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_EQ(size, bytes.size());
  ASSERT_EQ(part->size(), (size_t(5) << 20) + 7);
  EXPECT_EQ(std::string(part->begin(), part->end()), bytes.substr(0, part->size()));
  // More than the file holds: the whole file.
  auto all = read_file_prefix(path, UINT64_MAX, &size);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(std::string(all->begin(), all->end()), bytes);
  auto whole = read_whole_file(path);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->size(), bytes.size());
  std::remove(path.c_str());
}

TEST(FileRead, APrefixOfAPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string bytes = pattern(300000);
  std::thread writer([&] {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(fds[1], bytes.data() + at, bytes.size() - at);
      if (n <= 0) break;
      at += size_t(n);
    }
    ::close(fds[1]);
  });
  uint64_t size = 0;
  auto part = read_file_prefix("/dev/fd/" + std::to_string(fds[0]), 1000, &size);
  writer.join();
  ::close(fds[0]);
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_EQ(size, bytes.size());  // a pipe's size is what it held
  EXPECT_EQ(std::string(part->begin(), part->end()), bytes.substr(0, 1000));
}

TEST(FileRead, AMissingFileIsAnErrorThatNamesIt) {
  auto r = read_file_prefix(::testing::TempDir() + "/no-such-file.bin", 10);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no-such-file.bin"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ww
