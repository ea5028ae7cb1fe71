#include "cli/io_formats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace ww::cli {
namespace {

namespace fs = std::filesystem;

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ww_cli_io_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  template <class T>
  std::string npy(const std::string& name, const char* descr, std::vector<uint64_t> shape, const std::vector<T>& data,
                  bool fortran = false) {
    std::string s = npy_header(descr, fortran, shape);
    s.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
    return write(name, s);
  }
  fs::path dir_;
};

TEST(NpyHeader, AlignedAndParsable) {
  std::string h = npy_header("'<i4'", false, {3});
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(h.find("'shape': (3,)"), std::string::npos);
  EXPECT_EQ(h.back(), '\n');
  std::string h2 = npy_header("'<f8'", false, {3, 2});
  EXPECT_NE(h2.find("'shape': (3,2)"), std::string::npos);
  std::vector<uint8_t> b(h2.begin(), h2.end());
  b.resize(b.size() + 48);
  auto a = parse_npy(b, "x");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->rows(), 3u);
  EXPECT_EQ(a->cols(), 2u);
  EXPECT_EQ(a->kind, 'f');
  EXPECT_EQ(a->item_size, 8u);
}

TEST(NpyParse, Errors) {
  std::vector<uint8_t> junk{'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(parse_npy(junk, "x").ok());
  std::string h = npy_header("'>i4'", false, {1});
  std::vector<uint8_t> b(h.begin(), h.end());
  b.resize(b.size() + 4);
  auto r = parse_npy(b, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("big-endian"), std::string::npos);
  h = npy_header("'<c16'", false, {1});
  b.assign(h.begin(), h.end());
  b.resize(b.size() + 16);
  EXPECT_FALSE(parse_npy(b, "x").ok());
  h = npy_header("'<i4'", false, {4});
  b.assign(h.begin(), h.end());
  b.resize(b.size() + 12);  // one element short
  r = parse_npy(b, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos);
  h = npy_header("'<i4'", false, {2, 2, 2});
  b.assign(h.begin(), h.end());
  b.resize(b.size() + 32);
  EXPECT_FALSE(parse_npy(b, "x").ok());
}

TEST(Csv, QuotesAndBlankLines) {
  auto r = parse_csv("a,b\r\n1,\"x,y\"\n\n\"he said \"\"hi\"\"\",3", "t");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*r)[1], (std::vector<std::string>{"1", "x,y"}));
  EXPECT_EQ((*r)[2], (std::vector<std::string>{"he said \"hi\"", "3"}));
  EXPECT_FALSE(parse_csv("\"open", "t").ok());
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,\"b\""), "\"a,\"\"b\"\"\"");
}

TEST_F(TempDir, NpyColumns) {
  std::string p = npy<int32_t>("a.npy", "'<i4'", {3, 2}, {1, -2, 3, -4, 5, -6});
  auto c = load_column(p, 1, ValType::I32, 3);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(uint32_t((*c)[0]), uint32_t(-2));
  EXPECT_EQ(uint32_t((*c)[2]), uint32_t(-6));
  // Fewer instances than rows: the extra rows are ignored.
  EXPECT_EQ(load_column(p, 0, ValType::I64, 2)->size(), 2u);
  auto e = load_column(p, 0, ValType::I32, 4);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("has 3 rows"), std::string::npos);
  EXPECT_FALSE(load_column(p, 2, ValType::I32, 3).ok());
  // Integers feed float parameters by value.
  auto f = load_column(p, 1, ValType::F64, 3);
  ASSERT_TRUE(f.ok());
  double d;
  std::memcpy(&d, &(*f)[1], 8);
  EXPECT_EQ(d, -4.0);
  // Fortran order: column-major storage.
  std::string pf = npy<int64_t>("f.npy", "'<i8'", {3, 2}, {1, 2, 3, 10, 20, 30}, true);
  auto cf = load_column(pf, 1, ValType::I64, 3);
  ASSERT_TRUE(cf.ok());
  EXPECT_EQ((*cf)[2], 30u);
}

TEST_F(TempDir, NpyFloatBitsAndRanges) {
  uint32_t nanbits = 0x7FA00001u;
  float nanf;
  std::memcpy(&nanf, &nanbits, 4);
  std::string p = npy<float>("f.npy", "'<f4'", {2}, {1.5f, nanf});
  auto c = load_column(p, 0, ValType::F32, 2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[1], nanbits);                            // payload kept bit for bit
  EXPECT_FALSE(load_column(p, 0, ValType::I32, 2).ok());  // floats never feed integers
  std::string u = npy<uint64_t>("u.npy", "'<u8'", {2}, {5, 1ull << 40});
  EXPECT_TRUE(load_column(u, 0, ValType::I64, 2).ok());
  auto e = load_column(u, 0, ValType::I32, 2);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("does not fit i32"), std::string::npos);
  std::string s8 = npy<int8_t>("s.npy", "'|i1'", {2}, {-3, 4});
  auto c8 = load_column(s8, 0, ValType::I32, 2);
  ASSERT_TRUE(c8.ok());
  EXPECT_EQ(uint32_t((*c8)[0]), uint32_t(-3));
}

TEST_F(TempDir, CsvColumns) {
  std::string p = write("a.csv", "id,x,name\n0,1.5,a\n1,-nan:0x1,b\n2,0x1p-1,c\n");
  auto c = load_column(p, 1, ValType::F64, 3);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ((*c)[0], 0x3FF8000000000000ull);
  EXPECT_EQ((*c)[1], 0xFFF0000000000001ull);
  EXPECT_EQ((*c)[2], 0x3FE0000000000000ull);
  // No header: every row is data.
  std::string q = write("b.csv", "7,8\n-9,10\n");
  auto d = load_column(q, 0, ValType::I32, 2);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(uint32_t((*d)[1]), uint32_t(-9));
  auto e = load_column(q, 0, ValType::I32, 3);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("has 2 rows"), std::string::npos);
  auto bad = load_column(p, 2, ValType::I32, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("line 2"), std::string::npos);
}

TEST_F(TempDir, RawColumns) {
  std::vector<int64_t> v{3, -4, 5};
  std::string p = write("a.bin", std::string(reinterpret_cast<char*>(v.data()), 24));
  auto c = load_column(p, 0, ValType::I64, 3);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(int64_t((*c)[1]), -4);
  // The same 24 bytes as i32: 6 elements.
  EXPECT_TRUE(load_column(p, 0, ValType::I32, 6).ok());
  EXPECT_FALSE(load_column(p, 0, ValType::I32, 7).ok());
  EXPECT_FALSE(load_column(p, 1, ValType::I64, 1).ok());
  std::string odd = write("odd.raw", "12345");
  EXPECT_FALSE(load_column(odd, 0, ValType::I32, 1).ok());
  std::string empty = write("e.bin", "");
  auto e = load_column(empty, 0, ValType::I32, 1);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("is empty"), std::string::npos);
  EXPECT_FALSE(load_column((dir_ / "missing.bin").string(), 0, ValType::I32, 1).ok());
  EXPECT_FALSE(load_column(dir_.string(), 0, ValType::I32, 1).ok());
}

TEST_F(TempDir, AtomicFileAppearsOnlyOnCommit) {
  std::string p = (dir_ / "out.csv").string();
  {
    AtomicFile f;
    ASSERT_TRUE(f.open(p).ok());
    ASSERT_TRUE(f.write("partial").ok());
    EXPECT_FALSE(fs::exists(p));
  }  // destroyed without commit: nothing left behind
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 0);
  AtomicFile g;
  ASSERT_TRUE(g.open(p).ok());
  ASSERT_TRUE(g.write("done\n").ok());
  ASSERT_TRUE(g.commit().ok());
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "done");
  AtomicFile h;
  EXPECT_FALSE(h.open((dir_ / "no/such/dir/x.csv").string()).ok());
  EXPECT_FALSE(h.open(dir_.string()).ok());
}

}  // namespace
}  // namespace ww::cli
