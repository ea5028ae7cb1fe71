// The code generator's class, shared by the files that emit its parts
// (generator.cc: functions, entries and kernel; indirect_calls.cc:
// call_indirect and its dispatchers). Not part of codegen's interface.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bytecode/ops.h"
#include "codegen/function_ops.h"
#include "codegen/generator.h"
#include "codegen/op_templates.h"

namespace ww::codegen::detail {

std::string hex64(uint64_t v);
std::string ret_type(uint32_t nresults);
// " return ...;" of nresults values, value k written by value(k) (a
// function of several results fills a RetT).
std::string return_of(uint32_t nresults, const std::function<std::string(uint32_t)>& value);

class Generator {
 public:
  Generator(const CompiledModule& cm, const Options& o)
      : cm_(cm),
        m_(cm.module),
        bc_(cm.code.bytecode),
        opts_(o),
        nimp_(m_.num_imported_funcs),
        gpu_(o.target == Target::Gpu),
        tmpl_(op_templates()) {}

  Result<Generated> run();

 private:
  // Slots of a call's arguments and results: a module with v128 values
  // takes two per value (BytecodeModule::slot_width).
  uint32_t nparams(uint32_t func) const { return uint32_t(m_.func_type(func).params.size()) * bc_.slot_width; }
  uint32_t nresults(uint32_t func) const { return uint32_t(m_.func_type(func).results.size()) * bc_.slot_width; }
  bool same_type(uint32_t type_index, uint32_t func) const { return m_.types[type_index] == m_.func_type(func); }

  Status analyse();
  void emit_prelude();
  void emit_declaration(uint32_t def, const char* end);
  Status emit_function(uint32_t def);
  void emit_op(const DecodedOp& o, uint32_t def);
  void emit_template(const DecodedOp& o);
  std::string jump(uint32_t target, uint32_t pc) const;
  std::string args_of(uint32_t base, uint32_t n) const;
  void emit_results(const std::string& value, uint32_t base, uint32_t n);
  // The depth check and fuel before a call of a compiled function.
  std::string call_checks(uint32_t callee_def, bool indirect) const;
  void emit_direct_call(uint32_t callee_def, uint32_t base);
  // A unit's call of a function outside it (Options::functions).
  void emit_call_other_unit(uint32_t callee_def, uint32_t base);
  // `call` (an expression; its value, if nr > 0, becomes res_), counted in
  // the chain of frames a host call may save when it `suspends`.
  void emit_call_in_chain(const std::string& call, uint32_t nr, bool suspends);
  void emit_call_import(uint32_t func, uint32_t base);
  // A call out of compiled code (an import; on the GPU another instance's
  // function too) over `np`/`nr` slots at `base`: the io_ array it passes,
  // and the results back from it. The host's calls on the CPU take the
  // caller's slots (cpu_native.cc moves them between layouts); the GPU's
  // intrinsics, WASI and call records one word per value.
  uint32_t out_stride() const { return gpu_ ? bc_.slot_width : 1; }
  std::string io_array(uint32_t np, uint32_t nr, uint32_t base) const;
  std::string io_results(uint32_t nr, uint32_t base) const;
  // A call the device serves or leaves for the host: import slot `slot`
  // (an expression), np arguments and nr results at `base`.
  void emit_call_leaving(const std::string& slot, uint32_t np, uint32_t nr, uint32_t base);
  // Whether a table may hold another instance's function (the module
  // shares a table, or takes funcref values from outside): a
  // call_indirect may then leave for the host (GPU).
  bool foreign_refs_possible() const;
  // Leaving for the host from compiled GPU code (see emit_function).
  bool host_import(uint32_t func) const { return gpu_ && func < nimp_ && intrinsic_of(func) < 0; }
  bool indirect_may_suspend(uint32_t type) const;
  bool op_suspends(const DecodedOp& o) const;
  void analyse_suspension();
  void emit_rewind_prologue(uint32_t def);
  void emit_save_frame(uint32_t def);
  void emit_call_indirect(const DecodedOp& o);
  // call_indirect goes through one dispatcher per function type
  // (indirect_calls.cc): the type's representative (its first equal
  // type's index) for each type index, and which representatives some
  // compiled call_indirect uses.
  void find_dispatchers();
  void emit_dispatchers(bool definitions);
  std::string dispatcher_name(uint32_t type) const { return "dispatch_indirect" + std::to_string(type_rep_[type]); }
  void emit_cpu_entries();
  void emit_gpu_kernel();
  // The switch that calls entry `entry` of instance I, its arguments from
  // `args` (a call's start, to which the argument's index is added).
  std::string gpu_entry_switch(const char* entry, const char* args) const;
  int intrinsic_of(uint32_t import_func) const;
  // Functions keep memory 0's size in a local (WW_MEM_LOCALS), with its
  // base on the CPU and its translation cache on the GPU, refreshed after
  // whatever may grow the memory. On the GPU every function has them: MEMV
  // names the cache, and a call that leaves for the host passes MEMV.
  bool memory_locals() const { return gpu_ || uses_memory_; }

  const CompiledModule& cm_;
  const Module& m_;
  const BytecodeModule& bc_;
  const Options& opts_;
  const uint32_t nimp_;
  const bool gpu_;
  const std::vector<OpTemplate>& tmpl_;

  std::vector<bool> compiled_;
  std::vector<bool> referenced_;  // by module function index: a table can hold it
  std::vector<uint32_t> type_rep_;
  std::vector<bool> dispatched_;                    // by type index
  std::vector<bool> global_read_, global_written_;  // by compiled code
  bool uses_memory_ = false;                        // compiled code touches memory 0
  bool miss_calls_ = false;                         // sparse-layout misses are calls (kMissCalls)
  bool foreign_refs_ = false;                       // foreign_refs_possible()
  std::vector<bool> may_trap_;
  std::vector<bool> recursive_;
  std::vector<uint32_t> entries_;  // defined indices
  std::vector<std::vector<DecodedOp>> code_;
  // Per function: the slots its code names (its locals in generated code),
  // and whether a call in it may leave for the host (GPU).
  std::vector<std::vector<uint32_t>> slots_;
  std::vector<bool> may_suspend_;
  uint64_t leave_words_ = 0;
  uint32_t cur_def_ = 0;
  int cur_resume_ = -1;  // the resume point of the op being emitted, or -1
  // Per op of the function being emitted: its arithmetic result may be
  // written uncanonicalized (codegen/nan_blind.h).
  std::vector<bool> raw_write_;
  size_t op_index_ = 0;
  bool split_ = false;
  std::string out_;
};

}  // namespace ww::codegen::detail
