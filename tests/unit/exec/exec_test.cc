// Runs modules through the public API (compile_module, Store, instantiate,
// invoke) to check the translator and the CPU executors together: control
// flow, calls, multi-value, call_indirect traps, memory bounds and growth,
// the call-depth trap, fuel and trap locations. Every test runs twice: on
// the interpreter and on the module compiled by the code generator (the
// compiled CPU tier), which must behave identically, trap locations
// included. ResetTest returns a used instance to its image
// (Store::reset_instance) after every kind of write, on both tiers.
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "compiled/compiled_tier.h"
#include "runtime/runtime.h"
#include "store/store.h"

namespace ww {
namespace {

// exec.wat:
//   (module
//     (type $ii (func (param i32) (result i32)))
//     (type $v (func))
//     (import "env" "double" (func $double (param i32) (result i32)))
//     (memory 1 2)
//     (table 4 funcref)
//     (elem (i32.const 0) $inc $dec $noargs)
//     (global $g (mut i32) (i32.const 0))
//     (func $inc (type $ii) local.get 0 i32.const 1 i32.add)
//     (func $dec (type $ii) local.get 0 i32.const 1 i32.sub)
//     (func $noargs (type $v))
//     (func (export "fib") (param i32) (result i32) (local i32 i32 i32)
//       i32.const 0 local.set 1
//       i32.const 1 local.set 2
//       block
//         loop
//           local.get 0 i32.eqz br_if 1
//           local.get 1 local.get 2 i32.add local.set 3
//           local.get 2 local.set 1
//           local.get 3 local.set 2
//           local.get 0 i32.const 1 i32.sub local.set 0
//           br 0
//         end
//       end
//       local.get 1)
//     (func $rfib (export "rfib") (param i32) (result i32)
//       local.get 0 i32.const 2 i32.lt_u
//       if (result i32)
//         local.get 0
//       else
//         local.get 0 i32.const 1 i32.sub call $rfib
//         local.get 0 i32.const 2 i32.sub call $rfib
//         i32.add
//       end)
//     (func (export "switch") (param i32) (result i32)
//       block block block
//         local.get 0 br_table 0 1 2
//       end i32.const 100 return
//       end i32.const 200 return
//       end i32.const 300)
//     (func $pair (param i32 i32) (result i32 i32) local.get 1 local.get 0)
//     (func (export "multi") (param i32 i32) (result i32)
//       local.get 0 local.get 1 call $pair i32.sub)
//     (func (export "block_params") (param i32) (result i32)
//       local.get 0 i32.const 5 block (param i32 i32) (result i32) i32.mul end)
//     (func (export "loop_params") (param i32) (result i32)
//       i32.const 0
//       loop (param i32) (result i32)
//         local.get 0 i32.add
//         local.get 0 i32.const 1 i32.sub local.tee 0
//         br_if 0
//       end)
//     (func (export "indirect") (param i32 i32) (result i32)
//       local.get 1 local.get 0 call_indirect (type $ii))
//     (func (export "host") (param i32) (result i32) local.get 0 call $double i32.const 1 i32.add)
//     (func (export "load") (param i32) (result i32) local.get 0 i32.load)
//     (func (export "load_off") (param i32) (result i32) local.get 0 i32.load offset=4)
//     (func (export "store") (param i32 i32) local.get 0 local.get 1 i32.store)
//     (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
//     (func (export "size") (result i32) memory.size)
//     (func $inf (export "infinite") (param i32) (result i32) local.get 0 call $inf)
//     (func (export "spin") loop br 0 end)
//     (func $div (export "div") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_s)
//     (func (export "select") (param i32 i32 i32) (result i32) local.get 0 local.get 1 local.get 2 select)
//     (func (export "global_inc") (result i32)
//       global.get $g i32.const 1 i32.add global.set $g global.get $g)
//     (func (export "set_under_lazy_get") (param i32 i32) (result i32)
//       local.get 0 local.get 1 local.set 0 local.get 0 i32.sub)
//     (func (export "br_if_value") (param i32) (result i32)
//       block (result i32)
//         i32.const 7 local.get 0 br_if 0
//         drop i32.const 9
//       end))
const std::vector<uint8_t> kExec = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x26, 0x07, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00,
    0x60, 0x02, 0x7f, 0x7f, 0x02, 0x7f, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x60,
    0x00, 0x01, 0x7f, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, 0x02, 0x0e, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x64,
    0x6f, 0x75, 0x62, 0x6c, 0x65, 0x00, 0x00, 0x03, 0x19, 0x18, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x03, 0x00,
    0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x05, 0x00, 0x01, 0x03, 0x06, 0x05, 0x03, 0x00, 0x04, 0x04, 0x01, 0x70,
    0x00, 0x04, 0x05, 0x04, 0x01, 0x01, 0x01, 0x02, 0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x07, 0xc7, 0x01,
    0x14, 0x03, 0x66, 0x69, 0x62, 0x00, 0x04, 0x04, 0x72, 0x66, 0x69, 0x62, 0x00, 0x05, 0x06, 0x73, 0x77, 0x69, 0x74,
    0x63, 0x68, 0x00, 0x06, 0x05, 0x6d, 0x75, 0x6c, 0x74, 0x69, 0x00, 0x08, 0x0c, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x5f,
    0x70, 0x61, 0x72, 0x61, 0x6d, 0x73, 0x00, 0x09, 0x0b, 0x6c, 0x6f, 0x6f, 0x70, 0x5f, 0x70, 0x61, 0x72, 0x61, 0x6d,
    0x73, 0x00, 0x0a, 0x08, 0x69, 0x6e, 0x64, 0x69, 0x72, 0x65, 0x63, 0x74, 0x00, 0x0b, 0x04, 0x68, 0x6f, 0x73, 0x74,
    0x00, 0x0c, 0x04, 0x6c, 0x6f, 0x61, 0x64, 0x00, 0x0d, 0x08, 0x6c, 0x6f, 0x61, 0x64, 0x5f, 0x6f, 0x66, 0x66, 0x00,
    0x0e, 0x05, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x00, 0x0f, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x10, 0x04, 0x73, 0x69,
    0x7a, 0x65, 0x00, 0x11, 0x08, 0x69, 0x6e, 0x66, 0x69, 0x6e, 0x69, 0x74, 0x65, 0x00, 0x12, 0x04, 0x73, 0x70, 0x69,
    0x6e, 0x00, 0x13, 0x03, 0x64, 0x69, 0x76, 0x00, 0x14, 0x06, 0x73, 0x65, 0x6c, 0x65, 0x63, 0x74, 0x00, 0x15, 0x0a,
    0x67, 0x6c, 0x6f, 0x62, 0x61, 0x6c, 0x5f, 0x69, 0x6e, 0x63, 0x00, 0x16, 0x12, 0x73, 0x65, 0x74, 0x5f, 0x75, 0x6e,
    0x64, 0x65, 0x72, 0x5f, 0x6c, 0x61, 0x7a, 0x79, 0x5f, 0x67, 0x65, 0x74, 0x00, 0x17, 0x0b, 0x62, 0x72, 0x5f, 0x69,
    0x66, 0x5f, 0x76, 0x61, 0x6c, 0x75, 0x65, 0x00, 0x18, 0x09, 0x09, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x03, 0x01, 0x02,
    0x03, 0x0a, 0xb3, 0x02, 0x18, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01,
    0x6b, 0x0b, 0x02, 0x00, 0x0b, 0x31, 0x01, 0x03, 0x7f, 0x41, 0x00, 0x21, 0x01, 0x41, 0x01, 0x21, 0x02, 0x02, 0x40,
    0x03, 0x40, 0x20, 0x00, 0x45, 0x0d, 0x01, 0x20, 0x01, 0x20, 0x02, 0x6a, 0x21, 0x03, 0x20, 0x02, 0x21, 0x01, 0x20,
    0x03, 0x21, 0x02, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x01, 0x0b, 0x1c, 0x00,
    0x20, 0x00, 0x41, 0x02, 0x49, 0x04, 0x7f, 0x20, 0x00, 0x05, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x05, 0x20, 0x00,
    0x41, 0x02, 0x6b, 0x10, 0x05, 0x6a, 0x0b, 0x0b, 0x1d, 0x00, 0x02, 0x40, 0x02, 0x40, 0x02, 0x40, 0x20, 0x00, 0x0e,
    0x02, 0x00, 0x01, 0x02, 0x0b, 0x41, 0xe4, 0x00, 0x0f, 0x0b, 0x41, 0xc8, 0x01, 0x0f, 0x0b, 0x41, 0xac, 0x02, 0x0b,
    0x06, 0x00, 0x20, 0x01, 0x20, 0x00, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x10, 0x07, 0x6b, 0x0b, 0x0a, 0x00,
    0x20, 0x00, 0x41, 0x05, 0x02, 0x03, 0x6c, 0x0b, 0x0b, 0x13, 0x00, 0x41, 0x00, 0x03, 0x00, 0x20, 0x00, 0x6a, 0x20,
    0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b, 0x0b, 0x09, 0x00, 0x20, 0x01, 0x20, 0x00, 0x11, 0x00, 0x00,
    0x0b, 0x09, 0x00, 0x20, 0x00, 0x10, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x28, 0x02, 0x00, 0x0b,
    0x07, 0x00, 0x20, 0x00, 0x28, 0x02, 0x04, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x36, 0x02, 0x00, 0x0b, 0x06,
    0x00, 0x20, 0x00, 0x40, 0x00, 0x0b, 0x04, 0x00, 0x3f, 0x00, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x10, 0x12, 0x0b, 0x07,
    0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6d, 0x0b, 0x09, 0x00, 0x20, 0x00,
    0x20, 0x01, 0x20, 0x02, 0x1b, 0x0b, 0x0b, 0x00, 0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, 0x23, 0x00, 0x0b, 0x0b,
    0x00, 0x20, 0x00, 0x20, 0x01, 0x21, 0x00, 0x20, 0x00, 0x6b, 0x0b, 0x0e, 0x00, 0x02, 0x7f, 0x41, 0x07, 0x20, 0x00,
    0x0d, 0x00, 0x1a, 0x41, 0x09, 0x0b, 0x0b,
};

// other.wat:
//   (module
//     (import "a" "rfib" (func $f (param i32) (result i32)))
//     (func (export "call_other") (param i32) (result i32)
//       local.get 0 call $f i32.const 1 i32.add))
const std::vector<uint8_t> kOther = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x02, 0x0a, 0x01, 0x01, 0x61, 0x04, 0x72, 0x66, 0x69, 0x62, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00,
    0x07, 0x0e, 0x01, 0x0a, 0x63, 0x61, 0x6c, 0x6c, 0x5f, 0x6f, 0x74, 0x68, 0x65, 0x72, 0x00, 0x01,
    0x0a, 0x0b, 0x01, 0x09, 0x00, 0x20, 0x00, 0x10, 0x00, 0x41, 0x01, 0x6a, 0x0b,
};

// Compiled code for `cm` (metered or not), or a failed assertion.
std::shared_ptr<const NativeCode> compile_for_test(const std::shared_ptr<const CompiledModule>& cm, bool metered) {
  compiled::Request req;
  req.module = cm;
  req.metered = metered;
  req.cache.dir = WW_BINARY_DIR "/test-code-cache";
  auto r = compiled::compile_cpu(req, nullptr);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : nullptr;
}

class ExecTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { start(StoreLimits{}); }
  bool compiled() const { return GetParam(); }

  void start(StoreLimits limits) {
    store_ = std::make_unique<Store>(limits);
    auto cm = compile_module(kExec);
    ASSERT_TRUE(cm.ok()) << cm.error().to_string();
    module_ = *cm;
    if (compiled()) {
      auto native = compile_for_test(module_, limits.fuel != 0);
      ASSERT_TRUE(native);
      store_->impl().native_for = [native](const std::shared_ptr<const CompiledModule>& m) {
        return m->module.bytes.size() > 100 ? native : nullptr;  // kExec, not kOther
      };
    }
    FuncType t{{ValType::I32}, {ValType::I32}};
    uint32_t dbl = store_->add_host_func(t, [](Store&, uint64_t* slots) {
      slots[0] = uint32_t(slots[0]) * 2u;
      return TrapCode::None;
    });
    auto inst = store_->instantiate(module_, {ExternVal{ExternKind::Func, dbl}});
    ASSERT_EQ(inst.index(), 0u);
    inst_ = std::get<0>(inst);
  }

  InvokeResult call(const char* name, std::vector<Value> args) {
    auto e = store_->get_export(inst_, name);
    EXPECT_TRUE(e.has_value()) << name;
    if (!e) return InvokeResult{TrapCode::HostError, {}};
    // The tier under test really runs the call.
    const StoreImpl& S = store_->impl();
    const FuncInst& f = S.funcs[e->addr];
    const InstanceRec& rec = S.instances[f.instance];
    EXPECT_EQ(compiled(), rec.native != nullptr && rec.native->has(S, f.defined_index)) << name;
    return store_->invoke(e->addr, args);
  }
  int32_t i32(const char* name, std::vector<Value> args) {
    InvokeResult r = call(name, std::move(args));
    EXPECT_TRUE(r.ok()) << name << ": " << trap_message(r.trap);
    if (!r.ok() || r.results.size() != 1) return INT32_MIN;
    return int32_t(uint32_t(r.results[0].bits));
  }
  TrapCode trap(const char* name, std::vector<Value> args) { return call(name, std::move(args)).trap; }

  std::unique_ptr<Store> store_;
  std::shared_ptr<const CompiledModule> module_;
  uint32_t inst_ = 0;
};

Value I(int32_t v) { return Value::i32(v); }

TEST_P(ExecTest, Loops) {
  EXPECT_EQ(i32("fib", {I(0)}), 0);
  EXPECT_EQ(i32("fib", {I(10)}), 55);
  EXPECT_EQ(i32("fib", {I(40)}), 102334155);
}

TEST_P(ExecTest, RecursiveCalls) {
  EXPECT_EQ(i32("rfib", {I(1)}), 1);
  EXPECT_EQ(i32("rfib", {I(20)}), 6765);
}

TEST_P(ExecTest, BrTable) {
  EXPECT_EQ(i32("switch", {I(0)}), 100);
  EXPECT_EQ(i32("switch", {I(1)}), 200);
  EXPECT_EQ(i32("switch", {I(2)}), 300);
  EXPECT_EQ(i32("switch", {I(3)}), 300);
  EXPECT_EQ(i32("switch", {I(-1)}), 300);  // unsigned: far past the end
}

TEST_P(ExecTest, MultiValueAndBlockParams) {
  EXPECT_EQ(i32("multi", {I(7), I(3)}), 3 - 7);
  EXPECT_EQ(i32("block_params", {I(6)}), 30);
  EXPECT_EQ(i32("loop_params", {I(4)}), 10);
  EXPECT_EQ(i32("br_if_value", {I(1)}), 7);
  EXPECT_EQ(i32("br_if_value", {I(0)}), 9);
}

TEST_P(ExecTest, LazyLocalGetSeesTheOldValue) { EXPECT_EQ(i32("set_under_lazy_get", {I(10), I(3)}), 7); }

TEST_P(ExecTest, SelectAndGlobals) {
  EXPECT_EQ(i32("select", {I(1), I(2), I(1)}), 1);
  EXPECT_EQ(i32("select", {I(1), I(2), I(0)}), 2);
  EXPECT_EQ(i32("global_inc", {}), 1);
  EXPECT_EQ(i32("global_inc", {}), 2);
}

TEST_P(ExecTest, CallIndirect) {
  EXPECT_EQ(i32("indirect", {I(0), I(5)}), 6);
  EXPECT_EQ(i32("indirect", {I(1), I(5)}), 4);
  EXPECT_EQ(trap("indirect", {I(2), I(5)}), TrapCode::IndirectCallTypeMismatch);
  EXPECT_EQ(trap("indirect", {I(3), I(5)}), TrapCode::UninitializedElement);
  EXPECT_EQ(trap("indirect", {I(4), I(5)}), TrapCode::UndefinedElement);
  EXPECT_EQ(trap("indirect", {I(-1), I(5)}), TrapCode::UndefinedElement);
}

TEST_P(ExecTest, HostImport) { EXPECT_EQ(i32("host", {I(5)}), 11); }

TEST_P(ExecTest, CrossInstanceCall) {
  auto other = compile_module(kOther);
  ASSERT_TRUE(other.ok()) << other.error().to_string();
  auto rfib = store_->get_export(inst_, "rfib");
  ASSERT_TRUE(rfib.has_value());
  auto inst = store_->instantiate(*other, {*rfib});
  ASSERT_EQ(inst.index(), 0u);
  auto f = store_->get_export(std::get<0>(inst), "call_other");
  ASSERT_TRUE(f.has_value());
  InvokeResult r = store_->invoke(f->addr, {I(10)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.results[0].bits, 56u);
}

TEST_P(ExecTest, MemoryBounds) {
  ASSERT_TRUE(call("store", {I(65532), I(42)}).ok());
  EXPECT_EQ(i32("load", {I(65532)}), 42);
  EXPECT_EQ(trap("load", {I(65533)}), TrapCode::MemoryOutOfBounds);
  EXPECT_EQ(i32("load_off", {I(65528)}), 42);
  EXPECT_EQ(trap("load_off", {I(65529)}), TrapCode::MemoryOutOfBounds);
  // address + offset does not wrap around 2^32.
  EXPECT_EQ(trap("load_off", {I(-2)}), TrapCode::MemoryOutOfBounds);
  EXPECT_EQ(trap("store", {I(65533), I(1)}), TrapCode::MemoryOutOfBounds);
}

TEST_P(ExecTest, MemoryGrow) {
  EXPECT_EQ(i32("size", {}), 1);
  EXPECT_EQ(trap("load", {I(70000)}), TrapCode::MemoryOutOfBounds);
  EXPECT_EQ(i32("grow", {I(1)}), 1);
  EXPECT_EQ(i32("size", {}), 2);
  // The interpreter's cached memory size follows the growth.
  ASSERT_TRUE(call("store", {I(131068), I(-5)}).ok());
  EXPECT_EQ(i32("load", {I(131068)}), -5);
  EXPECT_EQ(i32("grow", {I(1)}), -1);  // past the declared max of 2
  EXPECT_EQ(i32("grow", {I(0)}), 2);
  EXPECT_EQ(i32("size", {}), 2);
}

TEST_P(ExecTest, DivisionTrapsAndTheirLocation) {
  EXPECT_EQ(i32("div", {I(-7), I(2)}), -3);
  EXPECT_EQ(trap("div", {I(1), I(0)}), TrapCode::IntegerDivideByZero);
  const TrapInfo& t = store_->last_trap();
  EXPECT_EQ(t.code, TrapCode::IntegerDivideByZero);
  EXPECT_EQ(module_->module.func_display_name(t.func_index), "div");
  EXPECT_EQ(t.pc, 0u);  // the first op of the function
  EXPECT_EQ(trap("div", {I(INT32_MIN), I(-1)}), TrapCode::IntegerOverflow);
}

TEST_P(ExecTest, InfiniteRecursionTrapsQuickly) {
  EXPECT_EQ(trap("infinite", {I(1)}), TrapCode::CallStackExhausted);
  // The store is still usable afterwards.
  EXPECT_EQ(i32("fib", {I(10)}), 55);
}

TEST_P(ExecTest, SmallCallDepthLimit) {
  StoreLimits limits;
  limits.max_call_depth = 10;
  start(limits);
  EXPECT_EQ(i32("rfib", {I(5)}), 5);  // depth 5
  EXPECT_EQ(trap("rfib", {I(12)}), TrapCode::CallStackExhausted);
}

TEST_P(ExecTest, SmallValueStack) {
  StoreLimits limits;
  limits.stack_slots = 64;
  start(limits);
  EXPECT_EQ(trap("infinite", {I(1)}), TrapCode::CallStackExhausted);
}

TEST_P(ExecTest, FuelStopsAnInfiniteLoop) {
  StoreLimits limits;
  limits.fuel = 100000;
  start(limits);
  EXPECT_EQ(trap("spin", {}), TrapCode::FuelExhausted);
  EXPECT_EQ(i32("fib", {I(10)}), 55);  // fuel is per invoke
}

INSTANTIATE_TEST_SUITE_P(Tiers, ExecTest, ::testing::Values(false, true), [](const ::testing::TestParamInfo<bool>& i) {
  return i.param ? std::string("Compiled") : std::string("Interpreter");
});

// reset.wat: every way an instance changes its own state, for
// Store::reset_instance (a batch's reused instances).
//   (module
//     (memory 1 3)
//     (global $g (mut i64) (i64.const 7))
//     (table $t 2 10 funcref)
//     (elem (i32.const 0) $f)
//     (elem $e funcref (ref.func $f))
//     (data (i32.const 16) "image")
//     (data $d "passive")
//     (func $f (result i32) i32.const 1)
//     (func (export "store64") (param i32 i64) local.get 0 local.get 1 i64.store)
//     (func (export "store8") (param i32 i32) local.get 0 local.get 1 i32.store8)
//     (func (export "fill") (param i32 i32 i32) local.get 0 local.get 1 local.get 2 memory.fill)
//     (func (export "copy") (param i32 i32 i32) local.get 0 local.get 1 local.get 2 memory.copy)
//     (func (export "init") (param i32) local.get 0 i32.const 0 i32.const 7 memory.init $d)
//     (func (export "drops") data.drop $d elem.drop $e)
//     (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
//     (func (export "set_global") (param i64) local.get 0 global.set $g)
//     (func (export "tables")
//       (table.set $t (i32.const 1) (ref.func $f))
//       (drop (table.grow $t (ref.null func) (i32.const 3))))
//     (func (export "store_then_trap") (param i32)
//       local.get 0 i64.const -1 i64.store
//       i32.const 1 i32.const 0 i32.div_u drop))
const std::vector<uint8_t> kReset = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x25, 0x08, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7e,
    0x00, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x00, 0x00,
    0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7e, 0x00, 0x03, 0x0c, 0x0b, 0x00, 0x01, 0x02, 0x03, 0x03, 0x04, 0x05,
    0x06, 0x07, 0x05, 0x04, 0x04, 0x05, 0x01, 0x70, 0x01, 0x02, 0x0a, 0x05, 0x04, 0x01, 0x01, 0x01, 0x03, 0x06, 0x06,
    0x01, 0x7e, 0x01, 0x42, 0x07, 0x0b, 0x07, 0x60, 0x0a, 0x07, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x36, 0x34, 0x00, 0x01,
    0x06, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x38, 0x00, 0x02, 0x04, 0x66, 0x69, 0x6c, 0x6c, 0x00, 0x03, 0x04, 0x63, 0x6f,
    0x70, 0x79, 0x00, 0x04, 0x04, 0x69, 0x6e, 0x69, 0x74, 0x00, 0x05, 0x05, 0x64, 0x72, 0x6f, 0x70, 0x73, 0x00, 0x06,
    0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x07, 0x0a, 0x73, 0x65, 0x74, 0x5f, 0x67, 0x6c, 0x6f, 0x62, 0x61, 0x6c, 0x00,
    0x08, 0x06, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x73, 0x00, 0x09, 0x0f, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x5f, 0x74, 0x68,
    0x65, 0x6e, 0x5f, 0x74, 0x72, 0x61, 0x70, 0x00, 0x0a, 0x09, 0x0b, 0x02, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00, 0x01,
    0x00, 0x01, 0x00, 0x0c, 0x01, 0x02, 0x0a, 0x78, 0x0b, 0x04, 0x00, 0x41, 0x01, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20,
    0x01, 0x37, 0x03, 0x00, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x3a, 0x00, 0x00, 0x0b, 0x0b, 0x00, 0x20, 0x00,
    0x20, 0x01, 0x20, 0x02, 0xfc, 0x0b, 0x00, 0x0b, 0x0c, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfc, 0x0a, 0x00,
    0x00, 0x0b, 0x0c, 0x00, 0x20, 0x00, 0x41, 0x00, 0x41, 0x07, 0xfc, 0x08, 0x01, 0x00, 0x0b, 0x08, 0x00, 0xfc, 0x09,
    0x01, 0xfc, 0x0d, 0x01, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x40, 0x00, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x24, 0x00, 0x0b,
    0x10, 0x00, 0x41, 0x01, 0xd2, 0x00, 0x26, 0x00, 0xd0, 0x70, 0x41, 0x03, 0xfc, 0x0f, 0x00, 0x1a, 0x0b, 0x0f, 0x00,
    0x20, 0x00, 0x42, 0x7f, 0x37, 0x03, 0x00, 0x41, 0x01, 0x41, 0x00, 0x6e, 0x1a, 0x0b, 0x0b, 0x14, 0x02, 0x00, 0x41,
    0x10, 0x0b, 0x05, 0x69, 0x6d, 0x61, 0x67, 0x65, 0x01, 0x07, 0x70, 0x61, 0x73, 0x73, 0x69, 0x76, 0x65,
};

// An instance made from the snapshot of a fresh one, as a batch worker
// keeps it; each test changes it, resets it, and compares a new snapshot
// with the image: memory bytes and size, globals, tables, segments.
class ResetTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto cm = compile_module(kReset);
    ASSERT_TRUE(cm.ok()) << cm.error().to_string();
    module_ = *cm;
    if (GetParam()) {
      auto native = compile_for_test(module_, false);
      ASSERT_TRUE(native);
      store_.impl().native_for = [native](const std::shared_ptr<const CompiledModule>&) { return native; };
    }
    auto first = store_.instantiate(module_, {});
    ASSERT_EQ(first.index(), 0u);
    auto snap = store_.snapshot(std::get<0>(first));
    ASSERT_TRUE(snap.ok()) << snap.error().message;
    image_ = std::move(*snap);
    auto inst = store_.instantiate(module_, {}, image_);
    ASSERT_EQ(inst.index(), 0u);
    inst_ = std::get<0>(inst);
  }

  TrapCode call(const char* name, std::vector<Value> args) {
    auto e = store_.get_export(inst_, name);
    EXPECT_TRUE(e.has_value()) << name;
    return e ? store_.invoke(e->addr, args).trap : TrapCode::HostError;
  }
  void run(const char* name, std::vector<Value> args) {
    EXPECT_EQ(call(name, std::move(args)), TrapCode::None) << name;
  }

  // Resets, then checks that nothing differs from the image.
  void expect_reset_to_image() {
    ASSERT_TRUE(store_.reset_instance(inst_, image_).ok());
    auto now = store_.snapshot(inst_);
    ASSERT_TRUE(now.ok()) << now.error().message;
    ASSERT_EQ(now->memories.size(), 1u);
    EXPECT_EQ(now->memories[0].pages, image_.memories[0].pages);
    EXPECT_TRUE(now->memories[0].bytes == image_.memories[0].bytes) << "memory differs";
    EXPECT_EQ(now->globals, image_.globals);
    EXPECT_EQ(now->tables, image_.tables);
    EXPECT_EQ(now->elem_segments, image_.elem_segments);
    EXPECT_EQ(now->data_dropped, image_.data_dropped);
  }
  uint8_t byte_at(uint64_t addr) {
    const auto& rec = store_.impl().instances[inst_];
    return store_.memory_data(rec.memories[0])[addr];
  }

  Store store_;
  std::shared_ptr<const CompiledModule> module_;
  InstanceSnapshot image_;
  uint32_t inst_ = 0;
};

Value L(int64_t v) { return Value::i64(v); }

TEST_P(ResetTest, StoresAtGranuleEdgesAndTheImageComeBack) {
  constexpr uint64_t kGranule = uint64_t(1) << MemoryInst::kWrittenShift;
  // Stores that spill into the next granule, one over the image's data,
  // one at the very end of the memory.
  for (uint64_t at : {kGranule - 1, kGranule - 7, 3 * kGranule - 4, uint64_t(16), uint64_t(65528)})
    run("store64", {Value::i32(int32_t(at)), L(-1)});
  run("store8", {Value::i32(40000), Value::i32(9)});
  EXPECT_EQ(byte_at(kGranule), 0xff);
  expect_reset_to_image();
  EXPECT_EQ(byte_at(16), 'i');
}

TEST_P(ResetTest, BulkMemoryOpsAndGrowComeBack) {
  run("fill", {Value::i32(100), Value::i32(0xab), Value::i32(5000)});
  run("copy", {Value::i32(30000), Value::i32(16), Value::i32(5)});
  run("init", {Value::i32(60000)});
  EXPECT_EQ(call("grow", {Value::i32(2)}), TrapCode::None);
  run("store64", {Value::i32(65536 * 2 + 8), L(42)});
  expect_reset_to_image();
  // Pages a cut-back memory gains again start zero.
  EXPECT_EQ(call("grow", {Value::i32(2)}), TrapCode::None);
  EXPECT_EQ(byte_at(65536 * 2 + 8), 0);
  expect_reset_to_image();
}

TEST_P(ResetTest, GlobalsTablesAndDroppedSegmentsComeBack) {
  run("set_global", {L(-3)});
  run("tables", {});
  run("drops", {});
  EXPECT_EQ(call("init", {Value::i32(0)}), TrapCode::MemoryOutOfBounds);  // dropped
  expect_reset_to_image();
  run("init", {Value::i32(0)});  // the segment is back
  expect_reset_to_image();
}

TEST_P(ResetTest, WritesBeforeATrapComeBack) {
  EXPECT_EQ(call("store_then_trap", {Value::i32(5000)}), TrapCode::IntegerDivideByZero);
  EXPECT_EQ(byte_at(5000), 0xff);
  expect_reset_to_image();
}

TEST_P(ResetTest, AnImageOfAnotherModuleIsRefused) {
  InstanceSnapshot other;
  EXPECT_FALSE(store_.reset_instance(inst_, other).ok());
  EXPECT_FALSE(store_.reset_instance(inst_ + 100, image_).ok());
}

INSTANTIATE_TEST_SUITE_P(Tiers, ResetTest, ::testing::Values(false, true), [](const ::testing::TestParamInfo<bool>& i) {
  return i.param ? std::string("Compiled") : std::string("Interpreter");
});

}  // namespace
}  // namespace ww
