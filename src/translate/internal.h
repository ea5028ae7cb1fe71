// Pieces of the translator shared between its passes.
#pragma once

#include <cstdint>
#include <vector>

#include "translate/translator.h"
#include "wasm/instr_reader.h"

namespace ww::translate_detail {

// Prep pass for defined function `def`: signature, locals, direct callees,
// call_indirect use; sets *simd when it has a v128 instruction. max_stack
// and frame_slots are left for emission, which walks the stack anyway.
Status prep_function(const Module& m, uint32_t def, Instr& scratch, FunctionManifest* out, bool* simd);

CallGraph build_call_graph(const Module& m, const std::vector<FunctionManifest>& manifests);

// Emission pass for one defined function: appends its code to `bc` and
// fills bc.funcs[def], man->max_stack and man->frame_slots.
class Emitter;
Status emit_function(Emitter& e, uint32_t def, FunctionManifest* man);
Emitter* new_emitter(const Module& m, BytecodeModule& bc, const TranslateOptions& opts);
void delete_emitter(Emitter* e);

}  // namespace ww::translate_detail
