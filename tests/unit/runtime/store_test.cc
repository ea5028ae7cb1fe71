// Store, instantiation and the compile pipeline. Modules are hand-checked
// wat2wasm output, with the WAT beside the bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/runtime.h"
#include "store/store.h"

namespace ww {
namespace {

using Bytes = std::vector<uint8_t>;

std::shared_ptr<const CompiledModule> compile(Bytes b) {
  auto r = compile_module(std::move(b));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : nullptr;
}

const InstantiateError* as_error(const std::variant<uint32_t, InstantiateError>& v) {
  return std::get_if<InstantiateError>(&v);
}

// (module (import "m" "f" (func (param i32))))
const Bytes kImpFunc = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60,
                        0x01, 0x7f, 0x00, 0x02, 0x07, 0x01, 0x01, 0x6d, 0x01, 0x66, 0x00, 0x00};
// (module (import "m" "t" (table 10 20 funcref)))
const Bytes kImpTable = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02, 0x0a,
                         0x01, 0x01, 0x6d, 0x01, 0x74, 0x01, 0x70, 0x01, 0x0a, 0x14};
// (module (import "m" "mem" (memory 1 2)))
const Bytes kImpMem = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02, 0x0b, 0x01,
                       0x01, 0x6d, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x01, 0x01, 0x02};
// (module (import "m" "g" (global i32)))
const Bytes kImpGlobal = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02,
                          0x08, 0x01, 0x01, 0x6d, 0x01, 0x67, 0x03, 0x7f, 0x00};
// (module
//   (import "m" "g" (global i32))
//   (func $f (export "f"))
//   (global (export "g2") i32 (global.get 0))
//   (global (export "r") funcref (ref.func $f))
//   (global (export "k") (mut i64) (i64.const -2))
//   (memory (export "mem") 1 5)
//   (table (export "tab") 3 funcref))
const Bytes kGlobals = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x02, 0x08,
                        0x01, 0x01, 0x6d, 0x01, 0x67, 0x03, 0x7f, 0x00, 0x03, 0x02, 0x01, 0x00, 0x04, 0x04, 0x01, 0x70,
                        0x00, 0x03, 0x05, 0x04, 0x01, 0x01, 0x01, 0x05, 0x06, 0x10, 0x03, 0x7f, 0x00, 0x23, 0x00, 0x0b,
                        0x70, 0x00, 0xd2, 0x00, 0x0b, 0x7e, 0x01, 0x42, 0x7e, 0x0b, 0x07, 0x1e, 0x06, 0x01, 0x66, 0x00,
                        0x00, 0x02, 0x67, 0x32, 0x03, 0x01, 0x01, 0x72, 0x03, 0x02, 0x01, 0x6b, 0x03, 0x03, 0x03, 0x6d,
                        0x65, 0x6d, 0x02, 0x00, 0x03, 0x74, 0x61, 0x62, 0x01, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b};
// (module
//   (import "m" "tab" (table 10 funcref))
//   (func $f)
//   (elem (i32.const 7) $f)
//   (elem (i32.const 9) $f $f))   ;; 9 + 2 > 10: traps before writing
const Bytes kPartialElem = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00,
                            0x02, 0x0b, 0x01, 0x01, 0x6d, 0x03, 0x74, 0x61, 0x62, 0x01, 0x70, 0x00, 0x0a, 0x03,
                            0x02, 0x01, 0x00, 0x09, 0x0e, 0x02, 0x00, 0x41, 0x07, 0x0b, 0x01, 0x00, 0x00, 0x41,
                            0x09, 0x0b, 0x02, 0x00, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b};
// (module
//   (import "m" "mem" (memory 1))
//   (data (i32.const 0) "ab")
//   (data (i32.const 65535) "cd"))   ;; one byte past the end
const Bytes kPartialData = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02, 0x0a, 0x01, 0x01, 0x6d,
                            0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x01, 0x0b, 0x11, 0x02, 0x00, 0x41, 0x00,
                            0x0b, 0x02, 0x61, 0x62, 0x00, 0x41, 0xff, 0xff, 0x03, 0x0b, 0x02, 0x63, 0x64};
// (module
//   (table 4 funcref)
//   (memory 1)
//   (func $f) (func $g)
//   (elem (i32.const 1) $f $g)
//   (elem func $g)
//   (elem declare func $f)
//   (data (i32.const 2) "xyz")
//   (data "passive"))
const Bytes kSegments = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x03,
                         0x02, 0x00, 0x00, 0x04, 0x04, 0x01, 0x70, 0x00, 0x04, 0x05, 0x03, 0x01, 0x00, 0x01, 0x09, 0x10,
                         0x03, 0x00, 0x41, 0x01, 0x0b, 0x02, 0x00, 0x01, 0x01, 0x00, 0x01, 0x01, 0x03, 0x00, 0x01, 0x00,
                         0x0a, 0x07, 0x02, 0x02, 0x00, 0x0b, 0x02, 0x00, 0x0b, 0x0b, 0x12, 0x02, 0x00, 0x41, 0x02, 0x0b,
                         0x03, 0x78, 0x79, 0x7a, 0x01, 0x07, 0x70, 0x61, 0x73, 0x73, 0x69, 0x76, 0x65};
// (module
//   (memory (export "mem") 1)
//   (func $s (i32.store (i32.const 0) (i32.const 42)))
//   (start $s)
//   (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1))))
const Bytes kStart = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x60, 0x00, 0x00,
                      0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03, 0x03, 0x02, 0x00, 0x01, 0x05, 0x03, 0x01,
                      0x00, 0x01, 0x07, 0x0d, 0x02, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x03, 0x61, 0x64,
                      0x64, 0x00, 0x01, 0x08, 0x01, 0x00, 0x0a, 0x13, 0x02, 0x09, 0x00, 0x41, 0x00, 0x41,
                      0x2a, 0x36, 0x02, 0x00, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b};
// (module
//   (import "m" "mem" (memory 1))
//   (data (i32.const 0) "hi")
//   (func $s unreachable)
//   (start $s))
const Bytes kStartTrap = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00,
                          0x00, 0x02, 0x0a, 0x01, 0x01, 0x6d, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x01,
                          0x03, 0x02, 0x01, 0x00, 0x08, 0x01, 0x00, 0x0a, 0x05, 0x01, 0x03, 0x00, 0x00,
                          0x0b, 0x0b, 0x08, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x02, 0x68, 0x69};
// (module
//   (import "m" "h" (func $h (param i32) (result i32)))
//   (func (export "run") (param i32) (result i32) (i32.add (call $h (local.get 0)) (i32.const 1))))
const Bytes kCallHost = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01,
                         0x7f, 0x01, 0x7f, 0x02, 0x07, 0x01, 0x01, 0x6d, 0x01, 0x68, 0x00, 0x00, 0x03,
                         0x02, 0x01, 0x00, 0x07, 0x07, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x01, 0x0a,
                         0x0b, 0x01, 0x09, 0x00, 0x20, 0x00, 0x10, 0x00, 0x41, 0x01, 0x6a, 0x0b};
// (module (memory 4))
const Bytes kBigMem = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x04};

// (module (func $f (export "f") call $g) (func $g call $f))
const Bytes kRecursive = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00,
                          0x00, 0x03, 0x03, 0x02, 0x00, 0x00, 0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00,
                          0x0a, 0x0b, 0x02, 0x04, 0x00, 0x10, 0x01, 0x0b, 0x04, 0x00, 0x10, 0x00, 0x0b};

// ------------------------------------------------------------ compile_file

TEST(Compile, DenyRecursion) {
  auto ok = compile_module(kRecursive);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ((*ok)->code.manifests.size(), 2u);
  CompileOptions opts;
  opts.deny_recursion = true;
  auto denied = compile_module(kRecursive, opts);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().message.rfind("recursion not supported: functions ", 0), 0u) << denied.error().message;
  // A module without cycles passes the same check.
  EXPECT_TRUE(compile_module(kStart, opts).ok());
}

TEST(Compile, InvalidModuleIsAnError) {
  // kImpFunc with its import's type index changed from 0 to 5.
  Bytes b = kImpFunc;
  b.back() = 0x05;
  auto r = compile_module(b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown type"), std::string::npos) << r.error().message;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ww_runtime_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const Bytes& b) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(TempDir, MissingFile) {
  std::string p = (dir_ / "nope.wasm").string();
  auto r = compile_file(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot open " + p + ": No such file or directory");
  EXPECT_EQ(r.error().offset, kNoOffset);
}

TEST_F(TempDir, Directory) {
  auto r = compile_file(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, dir_.string() + " is a directory");
  EXPECT_EQ(r.error().offset, kNoOffset);
}

TEST_F(TempDir, EmptyFile) {
  std::string p = write("empty.wasm", {});
  auto r = compile_file(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, p + " is empty");
  // Reading an empty file is fine; only compiling it is an error.
  auto bytes = read_file_bytes(p);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(bytes->empty());
}

TEST_F(TempDir, ValidFileCompiles) {
  std::string p = write("g.wasm", kImpGlobal);
  auto bytes = read_file_bytes(p);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, kImpGlobal);
  auto r = compile_file(p);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ((*r)->module.imports.size(), 1u);
  EXPECT_EQ((*r)->module.imports[0].field, "g");
  EXPECT_GE((*r)->decode_ms, 0.0);
}

TEST_F(TempDir, GarbageFileIsADecodeError) {
  std::string p = write("bad.wasm", {0x00, 0x61, 0x73, 0x6e, 0x01, 0x00, 0x00, 0x00});
  auto r = compile_file(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().offset, kNoOffset);  // a module error points into the bytes
}

// ------------------------------------------------------------------ linking

TEST(Link, WrongImportCount) {
  Store s;
  auto v = s.instantiate(compile(kImpGlobal), {});
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Unlinkable);
}

TEST(Link, FunctionTypesMustBeEqual) {
  Store s;
  auto m = compile(kImpFunc);
  auto nop = [](Store&, uint64_t*) { return TrapCode::None; };
  uint32_t wrong = s.add_host_func(FuncType{{}, {}}, nop);
  uint32_t extra_result = s.add_host_func(FuncType{{ValType::I32}, {ValType::I32}}, nop);
  uint32_t right = s.add_host_func(FuncType{{ValType::I32}, {}}, nop);
  for (uint32_t bad : {wrong, extra_result}) {
    auto v = s.instantiate(m, {ExternVal{ExternKind::Func, bad}});
    ASSERT_TRUE(as_error(v));
    EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Unlinkable);
    EXPECT_EQ(as_error(v)->message, "incompatible import type");
  }
  EXPECT_FALSE(as_error(s.instantiate(m, {ExternVal{ExternKind::Func, right}})));
}

TEST(Link, KindMustMatch) {
  Store s;
  uint32_t g = s.add_global(GlobalType{ValType::I32, false}, 0);
  auto v = s.instantiate(compile(kImpFunc), {ExternVal{ExternKind::Global, g}});
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->message, "incompatible import type");
}

TEST(Link, TableLimitsSubtyping) {
  Store s;
  auto m = compile(kImpTable);  // wants (table 10 20 funcref)
  auto try_table = [&](TableType t) {
    uint32_t a = s.add_table(t);
    return !as_error(s.instantiate(m, {ExternVal{ExternKind::Table, a}}));
  };
  EXPECT_TRUE(try_table({ValType::FuncRef, {10, 20}}));
  EXPECT_TRUE(try_table({ValType::FuncRef, {15, 18}}));
  EXPECT_FALSE(try_table({ValType::FuncRef, {9, 20}}));             // too small
  EXPECT_FALSE(try_table({ValType::FuncRef, {10, std::nullopt}}));  // unbounded
  EXPECT_FALSE(try_table({ValType::FuncRef, {10, 21}}));            // may grow too far
  EXPECT_FALSE(try_table({ValType::ExternRef, {10, 20}}));          // element type
}

TEST(Link, MemoryLimitsSubtyping) {
  Store s;
  auto m = compile(kImpMem);  // wants (memory 1 2)
  auto try_mem = [&](MemoryType t) {
    uint32_t a = s.add_memory(t);
    return !as_error(s.instantiate(m, {ExternVal{ExternKind::Memory, a}}));
  };
  EXPECT_TRUE(try_mem({{1, 2}}));
  EXPECT_TRUE(try_mem({{2, 2}}));
  EXPECT_TRUE(try_mem({{1, 1}}));
  EXPECT_FALSE(try_mem({{0, 2}}));
  EXPECT_FALSE(try_mem({{1, std::nullopt}}));
  EXPECT_FALSE(try_mem({{1, 3}}));
}

TEST(Link, GlobalTypeAndMutability) {
  Store s;
  auto m = compile(kImpGlobal);  // wants (global i32)
  auto try_global = [&](GlobalType t) {
    uint32_t a = s.add_global(t, 0);
    return !as_error(s.instantiate(m, {ExternVal{ExternKind::Global, a}}));
  };
  EXPECT_TRUE(try_global({ValType::I32, false}));
  EXPECT_FALSE(try_global({ValType::I32, true}));
  EXPECT_FALSE(try_global({ValType::I64, false}));
  EXPECT_FALSE(try_global({ValType::F32, false}));
}

TEST(Link, BadAddressIsAnErrorNotACrash) {
  Store s;
  auto v = s.instantiate(compile(kImpGlobal), {ExternVal{ExternKind::Global, 12345}});
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Unlinkable);
}

// ------------------------------------------------------------ instantiation

TEST(Instantiate, GlobalsExportsAndRefFunc) {
  Store s;
  auto m = compile(kGlobals);
  uint32_t g = s.add_global(GlobalType{ValType::I32, false}, uint64_t(int64_t(-5)));
  auto v = s.instantiate(m, {ExternVal{ExternKind::Global, g}});
  ASSERT_FALSE(as_error(v)) << as_error(v)->message;
  uint32_t inst = std::get<uint32_t>(v);
  EXPECT_EQ(&s.instance_module(inst), m.get());

  auto g2 = s.get_export(inst, "g2");
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->kind, ExternKind::Global);
  // Initialised from the import; the store keeps i32 in the low 32 bits.
  EXPECT_EQ(s.global_get(g2->addr).bits, 0xfffffffbu);
  EXPECT_EQ(s.global_get(g2->addr).type, ValType::I32);

  auto f = s.get_export(inst, "f");
  auto r = s.get_export(inst, "r");
  ASSERT_TRUE(f && r);
  EXPECT_EQ(f->kind, ExternKind::Func);
  EXPECT_EQ(s.global_get(r->addr).bits, uint64_t(f->addr) + 1);
  EXPECT_EQ(s.func_type(f->addr), (FuncType{{}, {}}));
  EXPECT_EQ(s.impl().funcs[f->addr].instance, inst);

  auto k = s.get_export(inst, "k");
  ASSERT_TRUE(k);
  EXPECT_EQ(s.global_get(k->addr).bits, uint64_t(-2));
  EXPECT_TRUE(s.global_type(k->addr).mut);
  EXPECT_EQ(s.global_type(k->addr).type, ValType::I64);
  EXPECT_EQ(s.impl().instances[inst].global_ptrs.size(), 4u);
  EXPECT_EQ(*s.impl().instances[inst].global_ptrs[3], uint64_t(-2));

  auto mem = s.get_export(inst, "mem");
  ASSERT_TRUE(mem);
  EXPECT_EQ(mem->kind, ExternKind::Memory);
  EXPECT_EQ(s.memory_size_bytes(mem->addr), 65536u);
  EXPECT_EQ(s.memory_type(mem->addr).limits.min, 1u);
  EXPECT_EQ(s.memory_type(mem->addr).limits.max, std::optional<uint64_t>(5));
  EXPECT_EQ(s.impl().memories[mem->addr].max_pages, 5u);

  auto tab = s.get_export(inst, "tab");
  ASSERT_TRUE(tab);
  EXPECT_EQ(s.table_type(tab->addr).limits.min, 3u);
  EXPECT_EQ(s.impl().tables[tab->addr].elems, std::vector<uint64_t>(3, 0));

  EXPECT_FALSE(s.get_export(inst, "missing"));
  EXPECT_FALSE(s.get_export(inst + 1, "f"));
}

// Extended constant expressions (3.0): arithmetic that wraps, an imported
// global, a defined global read by a later one and by a data offset
// (wat2wasm --enable-extended-const --no-check: wabt 1.0.32 predates 3.0's
// rule that defined globals are visible).
// (module
//   (import "m" "g" (global i64))
//   (global (export "a") i32 (i32.sub (i32.mul (i32.const 0x10000) (i32.const 0x10000)) (i32.const 1)))
//   (global (export "b") i64 (i64.add (global.get 0) (i64.mul (i64.const 3) (i64.const -5))))
//   (global (export "c") i32 (i32.add (global.get 1) (i32.const 2)))
//   (memory (export "mem") 1)
//   (data (i32.add (global.get 3) (i32.const 9)) "x"))
const Bytes kExtendedConst = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x02, 0x08, 0x01, 0x01, 0x6d, 0x01, 0x67, 0x03, 0x7e, 0x00, 0x05,
    0x03, 0x01, 0x00, 0x01, 0x06, 0x23, 0x03, 0x7f, 0x00, 0x41, 0x80, 0x80, 0x04, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x41,
    0x01, 0x6b, 0x0b, 0x7e, 0x00, 0x23, 0x00, 0x42, 0x03, 0x42, 0x7b, 0x7e, 0x7c, 0x0b, 0x7f, 0x00, 0x23, 0x01, 0x41,
    0x02, 0x6a, 0x0b, 0x07, 0x13, 0x04, 0x01, 0x61, 0x03, 0x01, 0x01, 0x62, 0x03, 0x02, 0x01, 0x63, 0x03, 0x03, 0x03,
    0x6d, 0x65, 0x6d, 0x02, 0x00, 0x0b, 0x0a, 0x01, 0x00, 0x23, 0x03, 0x41, 0x09, 0x6a, 0x0b, 0x01, 0x78};

TEST(Instantiate, ExtendedConstantExpressions) {
  Store s;
  uint32_t g = s.add_global(GlobalType{ValType::I64, false}, uint64_t(1000));
  auto v = s.instantiate(compile(kExtendedConst), {ExternVal{ExternKind::Global, g}});
  ASSERT_FALSE(as_error(v)) << as_error(v)->message;
  uint32_t inst = std::get<uint32_t>(v);
  auto bits = [&](const char* name) { return s.global_get(s.get_export(inst, name)->addr).bits; };
  EXPECT_EQ(bits("a"), 0xffffffffu);  // 2^32 wraps to 0, minus 1
  EXPECT_EQ(bits("b"), 985u);
  EXPECT_EQ(bits("c"), 1u);  // a + 2 wraps
  const auto& mem = s.impl().memories[s.get_export(inst, "mem")->addr].data;
  EXPECT_EQ(mem[10], 'x');
  EXPECT_EQ(mem[9], 0);
}

TEST(Store, ReleaseInstanceStorageFreesOnlyWhatItDefined) {
  Store s;
  uint32_t g = s.add_global(GlobalType{ValType::I32, false}, 1);
  auto defs = s.instantiate(compile(kGlobals), {ExternVal{ExternKind::Global, g}});
  ASSERT_FALSE(as_error(defs));
  uint32_t inst = std::get<uint32_t>(defs);
  auto mem = s.get_export(inst, "mem");
  auto tab = s.get_export(inst, "tab");
  ASSERT_TRUE(mem && tab);
  // An importer of a host memory: releasing it must leave that memory alone.
  uint32_t host_mem = s.add_memory(MemoryType{Limits{1, 2}});
  auto imp = s.instantiate(compile(kImpMem), {ExternVal{ExternKind::Memory, host_mem}});
  ASSERT_FALSE(as_error(imp));
  EXPECT_EQ(s.memory_size_bytes(mem->addr), uint64_t(kPageSize));
  EXPECT_EQ(s.table_type(tab->addr).limits.min, 3u);

  s.release_instance_storage(inst);
  s.release_instance_storage(std::get<uint32_t>(imp));
  s.release_instance_storage(9999);  // no such instance: nothing happens
  EXPECT_EQ(s.memory_size_bytes(mem->addr), 0u);
  EXPECT_EQ(s.table_type(tab->addr).limits.min, 0u);
  EXPECT_EQ(s.memory_size_bytes(host_mem), uint64_t(kPageSize));
  // Globals stay readable: they are records, not storage.
  EXPECT_EQ(s.global_get(s.get_export(inst, "k")->addr).bits, uint64_t(int64_t(-2)));
}

// Linear memory's bytes are not written with zeros when allocated
// (ZeroedAllocator): pages that come back after a memory was cut back or
// cleared within its allocation must still read as zeros, for memories of
// every allocation kind (calloc, a mapping of their own, a huge-page one).
TEST(Store, GrownPagesReadZeroAfterCutsAndClears) {
  for (uint32_t pages : {1u, 3u, 80u}) {
    MemoryInst m;
    m.resize_pages(pages);
    for (uint8_t b : m.data) ASSERT_EQ(b, 0) << pages;
    std::fill(m.data.begin(), m.data.end(), uint8_t(0xab));
    m.resize_pages(pages - 1);
    m.resize_pages(pages);
    for (size_t i = 0; i < m.data.size(); ++i)
      ASSERT_EQ(m.data[i], i < size_t(pages - 1) * kPageSize ? 0xab : 0) << pages << " " << i;
    std::fill(m.data.begin(), m.data.end(), uint8_t(0xcd));
    m.data.clear();
    m.resize_pages(pages);
    for (uint8_t b : m.data) ASSERT_EQ(b, 0) << pages;
    // Growing past the allocation keeps the bytes and zeroes the rest.
    m.data[5] = 7;
    m.resize_pages(2 * pages + 1);
    EXPECT_EQ(m.data[5], 7);
    for (size_t i = size_t(pages) * kPageSize; i < m.data.size(); ++i) ASSERT_EQ(m.data[i], 0) << pages << " " << i;
  }
}

TEST(Instantiate, SegmentsInitialiseAndDrop) {
  Store s;
  auto v = s.instantiate(compile(kSegments), {});
  ASSERT_FALSE(as_error(v)) << as_error(v)->message;
  const StoreImpl& st = s.impl();
  const InstanceRec& rec = st.instances[std::get<uint32_t>(v)];
  ASSERT_EQ(rec.funcs.size(), 2u);
  const auto& elems = st.tables[rec.tables[0]].elems;
  EXPECT_EQ(elems, (std::vector<uint64_t>{0, rec.funcs[0] + 1ull, rec.funcs[1] + 1ull, 0}));
  ASSERT_EQ(rec.elem_segments.size(), 3u);
  EXPECT_TRUE(rec.elem_segments[0].empty());                                    // active: dropped after use
  EXPECT_EQ(rec.elem_segments[1], std::vector<uint64_t>{rec.funcs[1] + 1ull});  // passive: kept
  EXPECT_TRUE(rec.elem_segments[2].empty());                                    // declarative: dropped
  EXPECT_EQ(rec.data_dropped, (std::vector<uint8_t>{1, 0}));
  const auto& mem = st.memories[rec.memories[0]].data;
  EXPECT_EQ(std::string(mem.begin() + 1, mem.begin() + 6), std::string("\0xyz\0", 5));
}

TEST(Instantiate, ElemTrapKeepsEarlierWrites) {
  Store s;
  uint32_t tab = s.add_table(TableType{ValType::FuncRef, {10, std::nullopt}});
  auto v = s.instantiate(compile(kPartialElem), {ExternVal{ExternKind::Table, tab}});
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Trap);
  EXPECT_EQ(as_error(v)->message, "out of bounds table access");
  const auto& elems = s.impl().tables[tab].elems;
  ASSERT_EQ(elems.size(), 10u);
  // The first segment's write stays; the second wrote nothing, not even
  // the element that was in bounds.
  ASSERT_NE(elems[7], 0u);
  EXPECT_EQ(elems[9], 0u);
  // The function it points to belongs to an instance that still exists.
  const FuncInst& f = s.impl().funcs[elems[7] - 1];
  ASSERT_LT(f.instance, s.impl().instances.size());
  EXPECT_EQ(f.defined_index, 0u);
}

TEST(Instantiate, DataTrapKeepsEarlierWrites) {
  Store s;
  uint32_t mem = s.add_memory(MemoryType{{1, std::nullopt}});
  auto v = s.instantiate(compile(kPartialData), {ExternVal{ExternKind::Memory, mem}});
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Trap);
  EXPECT_EQ(as_error(v)->message, "out of bounds memory access");
  const uint8_t* d = s.memory_data(mem);
  EXPECT_EQ(d[0], 'a');
  EXPECT_EQ(d[1], 'b');
  EXPECT_EQ(d[65535], 0);
}

TEST(Instantiate, MemoryAboveStoreCapIsUnlinkable) {
  StoreLimits lim;
  lim.max_memory_pages = 3;
  Store s(lim);
  auto v = s.instantiate(compile(kBigMem), {});  // (memory 4)
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Unlinkable);
  EXPECT_TRUE(s.impl().instances.empty());  // nothing half-made
  // Under the cap, the module's own max is lowered to the cap.
  auto v2 = s.instantiate(compile(kGlobals), {ExternVal{ExternKind::Global, s.add_global({ValType::I32, false}, 1)}});
  ASSERT_FALSE(as_error(v2));
  auto mem = s.get_export(std::get<uint32_t>(v2), "mem");
  EXPECT_EQ(s.impl().memories[mem->addr].max_pages, 3u);
  EXPECT_EQ(s.memory_type(mem->addr).limits.max, std::optional<uint64_t>(5));
}

TEST(Store, InternTypeIsStructural) {
  Store s;
  auto nop = [](Store&, uint64_t*) { return TrapCode::None; };
  uint32_t a = s.add_host_func(FuncType{{ValType::I32}, {ValType::F64}}, nop);
  uint32_t b = s.add_host_func(FuncType{{ValType::I32}, {ValType::F64}}, nop);
  uint32_t c = s.add_host_func(FuncType{{ValType::F64}, {ValType::I32}}, nop);
  EXPECT_EQ(s.impl().funcs[a].type_id, s.impl().funcs[b].type_id);
  EXPECT_NE(s.impl().funcs[a].type_id, s.impl().funcs[c].type_id);
  EXPECT_EQ(s.impl().funcs[a].instance, kHostInstance);
}

TEST(Store, InvokeChecksArguments) {
  Store s;
  auto nop = [](Store&, uint64_t*) { return TrapCode::None; };
  uint32_t f = s.add_host_func(FuncType{{ValType::I32}, {}}, nop);
  EXPECT_EQ(s.invoke(f, {}).trap, TrapCode::HostError);
  EXPECT_EQ(s.invoke(f, {Value::i64(1)}).trap, TrapCode::HostError);
  EXPECT_EQ(s.invoke(f, {Value::i32(1), Value::i32(2)}).trap, TrapCode::HostError);
  EXPECT_EQ(s.invoke(999, {}).trap, TrapCode::HostError);
  EXPECT_EQ(s.last_trap().code, TrapCode::HostError);
}

// ----------------------------------------------- these run the interpreter

TEST(Run, StartFunctionRunsAndInvoke) {
  Store s;
  auto v = s.instantiate(compile(kStart), {});
  ASSERT_FALSE(as_error(v)) << as_error(v)->message;
  uint32_t inst = std::get<uint32_t>(v);
  auto mem = s.get_export(inst, "mem");
  ASSERT_TRUE(mem);
  EXPECT_EQ(s.memory_data(mem->addr)[0], 42);
  auto add = s.get_export(inst, "add");
  ASSERT_TRUE(add);
  InvokeResult r = s.invoke(add->addr, {Value::i32(-3), Value::i32(10)});
  ASSERT_TRUE(r.ok()) << trap_message(r.trap);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].type, ValType::I32);
  EXPECT_EQ(r.results[0].bits, 7u);
  r = s.invoke(add->addr, {Value::i32(0x7fffffff), Value::i32(1)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 0x80000000u);  // wraps, upper half stays zero
}

TEST(Run, StartTrapKeepsDataWrites) {
  Store s;
  uint32_t mem = s.add_memory(MemoryType{{1, std::nullopt}});
  auto v = s.instantiate(compile(kStartTrap), {ExternVal{ExternKind::Memory, mem}});
  ASSERT_TRUE(as_error(v));
  EXPECT_EQ(as_error(v)->kind, InstantiateErrorKind::Trap);
  EXPECT_EQ(as_error(v)->message, "unreachable");
  EXPECT_EQ(s.memory_data(mem)[0], 'h');
  EXPECT_EQ(s.memory_data(mem)[1], 'i');
}

TEST(Run, HostFunctionsAndReentry) {
  Store s;
  // h(x) = x * 2, and for x == 100 it re-enters the store to call run(5)
  // (= 11) and returns that: the nested call must not clobber the frame of
  // the outer one.
  uint32_t run_addr = 0;
  uint32_t h = s.add_host_func(FuncType{{ValType::I32}, {ValType::I32}}, [&run_addr](Store& st, uint64_t* slots) {
    uint32_t x = uint32_t(slots[0]);
    if (x == 100) {
      InvokeResult in = st.invoke(run_addr, {Value::i32(5)});
      if (!in.ok()) return in.trap;
      slots[0] = in.results[0].bits;
      return TrapCode::None;
    }
    slots[0] = uint32_t(x * 2);
    return TrapCode::None;
  });
  auto v = s.instantiate(compile(kCallHost), {ExternVal{ExternKind::Func, h}});
  ASSERT_FALSE(as_error(v)) << as_error(v)->message;
  run_addr = s.get_export(std::get<uint32_t>(v), "run")->addr;

  InvokeResult r = s.invoke(run_addr, {Value::i32(20)});
  ASSERT_TRUE(r.ok()) << trap_message(r.trap);
  EXPECT_EQ(r.results[0].bits, 41u);
  r = s.invoke(run_addr, {Value::i32(100)});
  ASSERT_TRUE(r.ok()) << trap_message(r.trap);
  EXPECT_EQ(r.results[0].bits, 12u);  // run(5) + 1
  // Calling the host function directly goes through the same path.
  r = s.invoke(h, {Value::i32(21)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 42u);

  // A host function invoked directly that re-enters: its own slots must
  // survive the nested call. run(7) = h(7) + 1 = 15.
  uint32_t outer = s.add_host_func(FuncType{{ValType::I32}, {ValType::I32}}, [&run_addr](Store& st, uint64_t* slots) {
    InvokeResult in = st.invoke(run_addr, {Value::i32(7)});
    if (!in.ok()) return in.trap;
    slots[0] = uint32_t(slots[0] + in.results[0].bits);
    return TrapCode::None;
  });
  r = s.invoke(outer, {Value::i32(1000)});
  ASSERT_TRUE(r.ok()) << trap_message(r.trap);
  EXPECT_EQ(r.results[0].bits, 1015u);
}

TEST(Run, HostTrapIsReported) {
  Store s;
  uint32_t h =
      s.add_host_func(FuncType{{ValType::I32}, {ValType::I32}}, [](Store&, uint64_t*) { return TrapCode::HostError; });
  auto v = s.instantiate(compile(kCallHost), {ExternVal{ExternKind::Func, h}});
  ASSERT_FALSE(as_error(v));
  uint32_t run = s.get_export(std::get<uint32_t>(v), "run")->addr;
  InvokeResult r = s.invoke(run, {Value::i32(1)});
  EXPECT_EQ(r.trap, TrapCode::HostError);
  EXPECT_EQ(s.last_trap().code, TrapCode::HostError);
  EXPECT_EQ(s.impl().depth, 0u);  // unwound
}

}  // namespace
}  // namespace ww
