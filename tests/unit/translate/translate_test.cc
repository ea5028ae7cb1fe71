// Translator tests: golden disassembly of small functions (the peepholes
// are part of the contract: lazy local.get, local.set/tee fusion, immediate
// forms, compare-and-branch) and the prep pass (manifests, call graph).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bytecode/disasm.h"
#include "bytecode/op_effects.h"
#include "bytecode/ops.h"
#include "decode/decoder.h"
#include "translate/internal.h"
#include "translate/translator.h"
#include "validate/validator.h"

namespace ww {
namespace {

// golden.wat:
//   (module
//     (func $add (param i32 i32) (result i32)
//       local.get 0 local.get 1 i32.add)
//     (func $tee (param i32) (result i32) (local i32)
//       local.get 0 i32.const 5 i32.add local.tee 1
//       local.get 1 i32.mul)
//     (func $sum (param $n i32) (result i32) (local $acc i32)
//       block $done
//         loop $top
//           local.get $n i32.eqz br_if $done
//           local.get $acc local.get $n i32.add local.set $acc
//           local.get $n i32.const 1 i32.sub local.set $n
//           br $top
//         end
//       end
//       local.get $acc)
//     (func $max (param i32 i32) (result i32)
//       local.get 0 local.get 1 i32.gt_s
//       if (result i32) local.get 0 else local.get 1 end)
//     (func $sw (param i32) (result i32)
//       block $b2
//         block $b1
//           block $b0
//             local.get 0
//             br_table $b0 $b1 $b2
//           end
//           i32.const 10
//           return
//         end
//         i32.const 20
//         return
//       end
//       i32.const 30)
//     (func $swap (param i32 i32) (result i32 i32) local.get 1 local.get 0)
//     (func $use (param i32) (result i32)
//       i32.const 7 local.get 0 call $swap i32.sub))
const std::vector<uint8_t> kGolden = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x13, 0x03, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60,
    0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x02, 0x7f, 0x7f, 0x03, 0x08, 0x07, 0x00, 0x01, 0x01, 0x00,
    0x01, 0x02, 0x01, 0x0a, 0x76, 0x07, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b, 0x0e, 0x01, 0x01, 0x7f,
    0x20, 0x00, 0x41, 0x05, 0x6a, 0x22, 0x01, 0x20, 0x01, 0x6c, 0x0b, 0x21, 0x01, 0x01, 0x7f, 0x02, 0x40, 0x03,
    0x40, 0x20, 0x00, 0x45, 0x0d, 0x01, 0x20, 0x01, 0x20, 0x00, 0x6a, 0x21, 0x01, 0x20, 0x00, 0x41, 0x01, 0x6b,
    0x21, 0x00, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x01, 0x0b, 0x0f, 0x00, 0x20, 0x00, 0x20, 0x01, 0x4a, 0x04, 0x7f,
    0x20, 0x00, 0x05, 0x20, 0x01, 0x0b, 0x0b, 0x1a, 0x00, 0x02, 0x40, 0x02, 0x40, 0x02, 0x40, 0x20, 0x00, 0x0e,
    0x02, 0x00, 0x01, 0x02, 0x0b, 0x41, 0x0a, 0x0f, 0x0b, 0x41, 0x14, 0x0f, 0x0b, 0x41, 0x1e, 0x0b, 0x06, 0x00,
    0x20, 0x01, 0x20, 0x00, 0x0b, 0x09, 0x00, 0x41, 0x07, 0x20, 0x00, 0x10, 0x05, 0x6b, 0x0b,
};

// prep.wat:
//   (module
//     (type $t (func (param i32) (result i32)))
//     (import "env" "h" (func $h (param i32) (result i32)))
//     (table 1 funcref)
//     (func $a (param i32) (result i32) (local i64 i64)
//       local.get 0 call $b local.get 0 call $c i32.add
//       local.get 0 call $b i32.add
//       call $h)
//     (func $b (param i32) (result i32)
//       local.get 0 call $c)
//     (func $c (param i32) (result i32)
//       local.get 0 local.get 0 local.get 0 i32.add i32.add)
//     (func $d (param i32) (result i32)
//       local.get 0 local.get 0 call_indirect (type $t)))
const std::vector<uint8_t> kPrep = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x02, 0x09, 0x01,
    0x03, 0x65, 0x6e, 0x76, 0x01, 0x68, 0x00, 0x00, 0x03, 0x05, 0x04, 0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x01, 0x70,
    0x00, 0x01, 0x0a, 0x32, 0x04, 0x14, 0x01, 0x02, 0x7e, 0x20, 0x00, 0x10, 0x02, 0x20, 0x00, 0x10, 0x03, 0x6a, 0x20,
    0x00, 0x10, 0x02, 0x6a, 0x10, 0x00, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x10, 0x03, 0x0b, 0x0a, 0x00, 0x20, 0x00, 0x20,
    0x00, 0x20, 0x00, 0x6a, 0x6a, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x00, 0x11, 0x00, 0x00, 0x0b,
};

// rec.wat:
//   (module
//     (func $even (export "even") (param i32) (result i32)
//       local.get 0 i32.eqz if (result i32) i32.const 1 else local.get 0 i32.const 1 i32.sub call $odd end)
//     (func $odd (export "odd") (param i32) (result i32)
//       local.get 0 i32.eqz if (result i32) i32.const 0 else local.get 0 i32.const 1 i32.sub call $even end)
//     (func $fact (export "fact") (param i32) (result i32)
//       local.get 0 i32.eqz if (result i32) i32.const 1 else local.get 0 local.get 0 i32.const 1 i32.sub call $fact
//       i32.mul end)
//     (func $leaf (export "leaf") (result i32) i32.const 3))
const std::vector<uint8_t> kRec = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00,
    0x01, 0x7f, 0x03, 0x05, 0x04, 0x00, 0x00, 0x00, 0x01, 0x07, 0x1c, 0x04, 0x04, 0x65, 0x76, 0x65, 0x6e, 0x00,
    0x00, 0x03, 0x6f, 0x64, 0x64, 0x00, 0x01, 0x04, 0x66, 0x61, 0x63, 0x74, 0x00, 0x02, 0x04, 0x6c, 0x65, 0x61,
    0x66, 0x00, 0x03, 0x0a, 0x42, 0x04, 0x12, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x20, 0x00,
    0x41, 0x01, 0x6b, 0x10, 0x01, 0x0b, 0x0b, 0x12, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x00, 0x05, 0x20,
    0x00, 0x41, 0x01, 0x6b, 0x10, 0x00, 0x0b, 0x0b, 0x15, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x01, 0x05,
    0x20, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x02, 0x6c, 0x0b, 0x0b, 0x04, 0x00, 0x41, 0x03, 0x0b,
};

// Not valid (wat2wasm --no-check): pops an empty stack, branches too far.
// invalid.wat:
//   (module
//     (func (result i32)
//       i32.add
//       br 5))
const std::vector<uint8_t> kInvalid = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01,
    0x7f, 0x03, 0x02, 0x01, 0x00, 0x0a, 0x07, 0x01, 0x05, 0x00, 0x6a, 0x0c, 0x05, 0x0b,
};

struct Translated {
  Module module;
  TranslatedModule code;
};

Translated translate_ok(const std::vector<uint8_t>& bytes, TranslateOptions opts = {}) {
  Translated t;
  auto m = decode_module(bytes);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
  t.module = std::move(*m);
  Status v = validate_module(t.module);
  EXPECT_TRUE(v.ok()) << v.error().to_string();
  auto r = translate_module(t.module, opts);
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  if (r.ok()) t.code = std::move(*r);
  return t;
}

std::string dis(const Translated& t, uint32_t def) { return disassemble_function(t.code.bytecode, def); }

// Which ops write linear memory is read off their bodies: every store
// (fused forms included), the bulk ops that write, and nothing else.
TEST(OpEffects, StoresAndBulkWritesWriteMemory) {
  for (BcOp op : {BcOp::I32Store, BcOp::I64Store8, BcOp::F64Store, BcOp::V128Store, BcOp::V128Store64Lane,
                  BcOp::MemoryFill, BcOp::MemoryCopy, BcOp::MemoryInit})
    EXPECT_TRUE(bc_op_writes_memory(op)) << bc_op_info(op).name;
  for (BcOp op : {BcOp::I32Load, BcOp::V128Load, BcOp::MemoryGrow, BcOp::DataDrop, BcOp::TableFill, BcOp::I32Add})
    EXPECT_FALSE(bc_op_writes_memory(op)) << bc_op_info(op).name;
  int writers = 0;
  for (int op = 0; op < kBcOpCount; ++op) {
    const std::string name = kBcOpInfo[op].name;
    const bool store = name.find("store") != std::string::npos;
    if (store) {
      EXPECT_TRUE(bc_op_writes_memory(BcOp(op))) << name;
    }
    writers += bc_op_writes_memory(BcOp(op));
  }
  EXPECT_EQ(writers, 17);  // 14 stores (10 plain, 4 lanes), memory.fill, .copy, .init
}

TEST(Golden, LazyLocalsFeedTheOpAndTheResultGoesToSlotZero) {
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 0),
            "0000: i32.add s0, s0, s1\n"
            "0002: return\n");
}

TEST(Golden, ImmediateFormAndTeeFusion) {
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 1),
            "0000: i32.add_imm s1, s0, 5\n"
            "0003: i32.mul s0, s1, s1\n"
            "0005: return\n");
}

TEST(Golden, LoopWithEqzBranchAndSetFusion) {
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 2),
            "0000: br_unless s0, @0009\n"
            "0002: i32.add s1, s1, s0\n"
            "0004: i32.sub_imm s0, s0, 1\n"
            "0007: br @0000\n"
            "0009: copy s0, s1\n"
            "0011: return\n");
}

TEST(Golden, IfElseWithFusedCompare) {
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 3),
            "0000: br_unless.i32.gt_s s0, s1, @0007\n"
            "0003: copy s2, s0\n"
            "0005: br @0009\n"
            "0007: copy s2, s1\n"
            "0009: copy s0, s2\n"
            "0011: return\n");
}

TEST(Golden, BrTableTargets) {
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 4),
            "0000: br_table s0 [@0003 @0006 @0009]\n"
            "0003: const32 s0, 10\n"
            "0005: return\n"
            "0006: const32 s0, 20\n"
            "0008: return\n"
            "0009: const32 s0, 30\n"
            "0011: return\n");
}

TEST(Golden, ReturningSwappedLocalsGoesThroughHomeSlots) {
  // Returning (local 1, local 0) into slots 0 and 1 is a swap: copying
  // directly would clobber local 0 before it is read.
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 5),
            "0000: copy s2, s1\n"
            "0002: copy s3, s0\n"
            "0004: copy s0, s2\n"
            "0006: copy s1, s3\n"
            "0008: return\n");
}

TEST(Golden, CallFrameStartsAtFirstArgument) {
  Translated t = translate_ok(kGolden);
  EXPECT_EQ(dis(t, 6),
            "0000: const32 s1, 7\n"
            "0002: copy s2, s0\n"
            "0004: call s1, 5\n"
            "0006: i32.sub s0, s1, s2\n"
            "0008: return\n");
  EXPECT_EQ(t.code.bytecode.funcs[6].frame_slots, 3u);
}

TEST(Bytecode, EncodeDecodeRoundTrip) {
  std::vector<uint32_t> code;
  bc_emit(code, BcOp::TableCopy, 1, 2, 3, 0, 40, 50);
  bc_emit(code, BcOp::Select, 9, 8, 7, 6);
  BcDecoded d;
  ASSERT_TRUE(bc_decode(code.data(), code.size(), &d));
  EXPECT_EQ(d.op, BcOp::TableCopy);
  EXPECT_EQ(d.words, 4u);
  EXPECT_EQ(d.s[0], 1u);
  EXPECT_EQ(d.s[1], 2u);
  EXPECT_EQ(d.s[2], 3u);
  EXPECT_EQ(d.i[0], 40u);
  EXPECT_EQ(d.i[1], 50u);
  ASSERT_TRUE(bc_decode(code.data() + 4, code.size() - 4, &d));
  EXPECT_EQ(d.op, BcOp::Select);
  EXPECT_EQ(d.s[3], 6u);
  // Cut off: not enough words for the format.
  EXPECT_FALSE(bc_decode(code.data(), 2, &d));
  uint32_t bad = 0xffff;
  EXPECT_FALSE(bc_decode(&bad, 1, &d));
}

TEST(Prep, Manifests) {
  Translated t = translate_ok(kPrep);
  ASSERT_EQ(t.code.manifests.size(), 4u);
  const FunctionManifest& a = t.code.manifests[0];
  EXPECT_EQ(a.func_index, 1u);  // after the import
  EXPECT_EQ(a.num_params, 1u);
  EXPECT_EQ(a.num_results, 1u);
  EXPECT_EQ(a.num_locals, 3u);
  EXPECT_EQ(a.max_stack, 2u);
  EXPECT_EQ(a.frame_slots, 5u);
  EXPECT_EQ(a.callees, (std::vector<uint32_t>{0, 2, 3}));  // sorted, unique
  EXPECT_FALSE(a.calls_indirect);
  const FunctionManifest& c = t.code.manifests[2];
  EXPECT_EQ(c.max_stack, 3u);
  EXPECT_EQ(c.frame_slots, 4u);
  EXPECT_TRUE(c.callees.empty());
  const FunctionManifest& d = t.code.manifests[3];
  EXPECT_TRUE(d.calls_indirect);
  EXPECT_TRUE(d.callees.empty());
  EXPECT_EQ(t.code.bytecode.funcs[0].frame_slots, a.frame_slots);
}

TEST(Prep, DagHasNoRecursiveGroups) {
  Translated t = translate_ok(kPrep);
  const CallGraph& g = t.code.call_graph;
  EXPECT_EQ(g.sccs.size(), 5u);  // every function alone, the import included
  EXPECT_TRUE(g.recursive_groups.empty());
  // Reverse topological order: a callee's SCC comes before its callers'.
  auto pos = [&](uint32_t f) {
    for (size_t i = 0; i < g.sccs.size(); ++i)
      for (uint32_t x : g.sccs[i])
        if (x == f) return i;
    return g.sccs.size();
  };
  EXPECT_LT(pos(3), pos(2));  // c before b
  EXPECT_LT(pos(2), pos(1));  // b before a
  EXPECT_LT(pos(0), pos(1));  // h before a
  EXPECT_TRUE(check_no_recursion(t.module, g).ok());
}

TEST(Prep, MutualAndSelfRecursion) {
  Translated t = translate_ok(kRec);
  const CallGraph& g = t.code.call_graph;
  EXPECT_EQ(g.sccs.size(), 3u);
  ASSERT_EQ(g.recursive_groups.size(), 2u);
  std::vector<std::vector<uint32_t>> groups = g.recursive_groups;
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups[0], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(groups[1], (std::vector<uint32_t>{2}));
  Status s = check_no_recursion(t.module, g);
  ASSERT_FALSE(s.ok());
  const std::string& msg = s.error().message;
  EXPECT_TRUE(msg == "recursion not supported: functions even, odd form a cycle" ||
              msg == "recursion not supported: function fact calls itself")
      << msg;
}

// prep.wat's frames: $a 5 slots, $b 2, $c 4. $a calls $b (which calls $c),
// $c and the import; $d calls through the table.
TEST(StackBound, SumsFramesAlongTheDeepestDirectPath) {
  Translated t = translate_ok(kPrep);
  const uint32_t fa = t.code.bytecode.funcs[0].frame_slots, fb = t.code.bytecode.funcs[1].frame_slots,
                 fc = t.code.bytecode.funcs[2].frame_slots;
  ASSERT_EQ(fa, 5u);
  ASSERT_EQ(fc, 4u);
  auto c = stack_bound(t.module, t.code, {3});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->slots, fc);
  EXPECT_EQ(c->depth, 0u);
  auto b = stack_bound(t.module, t.code, {2});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->slots, fb + fc);
  EXPECT_EQ(b->depth, 1u);
  // $a -> $b -> $c is the deepest; the import takes no frame of ours.
  auto a = stack_bound(t.module, t.code, {1});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->slots, fa + fb + fc);
  EXPECT_EQ(a->depth, 2u);
  // Several entries: the largest of each.
  auto ac = stack_bound(t.module, t.code, {3, 1});
  ASSERT_TRUE(ac.has_value());
  EXPECT_EQ(ac->slots, fa + fb + fc);
  EXPECT_EQ(ac->depth, 2u);
}

TEST(StackBound, UnboundedThroughATableOrACycle) {
  Translated p = translate_ok(kPrep);
  EXPECT_FALSE(stack_bound(p.module, p.code, {4}).has_value());     // $d: call_indirect
  EXPECT_FALSE(stack_bound(p.module, p.code, {1, 4}).has_value());  // one unbounded entry is enough
  Translated r = translate_ok(kRec);
  EXPECT_FALSE(stack_bound(r.module, r.code, {0}).has_value());  // even <-> odd
  EXPECT_FALSE(stack_bound(r.module, r.code, {2}).has_value());  // fact calls itself
  auto leaf = stack_bound(r.module, r.code, {3});
  ASSERT_TRUE(leaf.has_value());
  EXPECT_EQ(leaf->slots, r.code.bytecode.funcs[3].frame_slots);
  EXPECT_EQ(leaf->depth, 0u);
}

TEST(Prep, LongCallChainDoesNotRecurseOnTheHostStack) {
  // 300000 functions, each calling the next, the last calling the first: a
  // recursive Tarjan would need that many host frames and crash.
  const uint32_t n = 300000;
  Module m;
  m.types.push_back(FuncType{});
  m.funcs.assign(n, 0);
  std::vector<FunctionManifest> mans(n);
  for (uint32_t i = 0; i < n; ++i) mans[i].callees.push_back((i + 1) % n);
  CallGraph g = translate_detail::build_call_graph(m, mans);
  ASSERT_EQ(g.sccs.size(), 1u);
  EXPECT_EQ(g.sccs[0].size(), n);
  ASSERT_EQ(g.recursive_groups.size(), 1u);
  EXPECT_EQ(g.recursive_groups[0].front(), 0u);
  EXPECT_EQ(g.recursive_groups[0].back(), n - 1);
}

TEST(Translate, FrameLimitNamesTheFunction) {
  TranslateOptions opts;
  opts.max_frame_slots = 3;
  auto m = decode_module(kGolden);
  ASSERT_TRUE(m.ok());
  auto r = translate_module(*m, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("func[0]"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("frame of 4 slots"), std::string::npos) << r.error().message;
}

TEST(Translate, UnvalidatedCodeIsAnErrorNotACrash) {
  auto m = decode_module(kInvalid);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_FALSE(validate_module(*m).ok());
  auto r = translate_module(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot translate unvalidated code");
}

TEST(Translate, ModuleListingNamesFunctions) {
  Translated t = translate_ok(kRec);
  std::string s = disassemble_module(t.code.bytecode, t.module);
  EXPECT_NE(s.find("func even: params 1, results 1"), std::string::npos) << s;
  EXPECT_NE(s.find("func leaf:"), std::string::npos) << s;
}

/* wat2wasm of:
(module
  (func (export "f") (result v128) (v128.const i32x4 1 2 3 4))
  (func (export "g") (param v128 v128) (result v128)
    (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get 0) (local.get 1))))
*/
const std::vector<uint8_t> kV128Immediates = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0b, 0x02, 0x60, 0x00, 0x01, 0x7b, 0x60, 0x02, 0x7b,
    0x7b, 0x01, 0x7b, 0x03, 0x03, 0x02, 0x00, 0x01, 0x07, 0x09, 0x02, 0x01, 0x66, 0x00, 0x00, 0x01, 0x67, 0x00,
    0x01, 0x0a, 0x2f, 0x02, 0x14, 0x00, 0xfd, 0x0c, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00,
    0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x0b, 0x18, 0x00, 0x20, 0x00, 0x20, 0x01, 0xfd, 0x0d, 0x00, 0x01, 0x02,
    0x03, 0x04, 0x05, 0x06, 0x07, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x0b};

// The listing shows a v128 constant as one 128-bit number and a shuffle's
// mask as its lanes (both are two words of the constant pool).
TEST(Translate, ListingShowsV128Immediates) {
  Translated t = translate_ok(kV128Immediates);
  EXPECT_EQ(dis(t, 0),
            "0000: v128.const s0, 0x00000004000000030000000200000001\n"
            "0002: return\n");
  EXPECT_EQ(dis(t, 1),
            "0000: i8x16.shuffle s0, s0, s2, [0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23]\n"
            "0003: return\n");
}

}  // namespace
}  // namespace ww
