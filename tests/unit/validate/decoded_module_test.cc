// Decoder + validator together on whole binaries (bytes from wat2wasm).
#include <gtest/gtest.h>

#include "decode/decoder.h"
#include "validate/validator.h"

namespace ww {
namespace {

Status decode_and_validate(std::vector<uint8_t> bytes) {
  auto m = decode_module(std::move(bytes));
  if (!m.ok()) return m.status();
  return validate_module(*m);
}

TEST(DecodedModule, MultiValueBlocksBrTableBulkMemoryAndRefs) {
  // (module
  //   (type $bin (func (param i32 i32) (result i32)))
  //   (memory 1)
  //   (table 1 funcref)
  //   (elem declare func $f)
  //   (data $d "hi")
  //   (func $f (param i32) (result i32)
  //     (local.get 0) (i32.const 2)
  //     (block (type $bin) (i32.add))
  //     (block (result i32)
  //       (br_table 0 0 (i32.const 1) (local.get 0)))
  //     (i32.add)
  //     (memory.init $d (i32.const 0) (i32.const 0) (i32.const 2))
  //     (drop (select (result funcref) (ref.func $f) (ref.null func) (i32.const 1)))))
  std::vector<uint8_t> wasm = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x02, 0x60, 0x02, 0x7f, 0x7f,
                               0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x01, 0x04, 0x04, 0x01, 0x70,
                               0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x09, 0x05, 0x01, 0x03, 0x00, 0x01, 0x00, 0x0c,
                               0x01, 0x01, 0x0a, 0x2c, 0x01, 0x2a, 0x00, 0x20, 0x00, 0x41, 0x02, 0x02, 0x00, 0x6a, 0x0b,
                               0x02, 0x7f, 0x41, 0x01, 0x20, 0x00, 0x0e, 0x01, 0x00, 0x00, 0x0b, 0x6a, 0x41, 0x00, 0x41,
                               0x00, 0x41, 0x02, 0xfc, 0x08, 0x00, 0x00, 0xd2, 0x00, 0xd0, 0x70, 0x41, 0x01, 0x1c, 0x01,
                               0x70, 0x1a, 0x0b, 0x0b, 0x05, 0x01, 0x01, 0x02, 0x68, 0x69};
  Status s = decode_and_validate(wasm);
  EXPECT_TRUE(s.ok()) << s.error().to_string();

  // Without the declarative segment (its section bytes 0x09 0x05 ... become a
  // custom section), ref.func $f is undeclared.
  std::vector<uint8_t> undeclared = wasm;
  undeclared[37] = 0x00;  // section id 9 -> 0 (custom)
  undeclared[39] = 0x01;  // custom section name: 1 byte ("\03")
  s = decode_and_validate(undeclared);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "undeclared function reference");
}

TEST(DecodedModule, TypeMismatchAtBlockEnd) {
  // (module (func (result i32) (block (result i32) (i64.const 1))))
  std::vector<uint8_t> wasm = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05,
                               0x01, 0x60, 0x00, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x0a,
                               0x09, 0x01, 0x07, 0x00, 0x02, 0x7f, 0x42, 0x01, 0x0b, 0x0b};
  Status s = decode_and_validate(wasm);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "type mismatch");
  EXPECT_EQ(s.error().offset, 28u);  // the block's `end`
}

}  // namespace
}  // namespace ww
