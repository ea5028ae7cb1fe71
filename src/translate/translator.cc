#include "translate/translator.h"

#include <algorithm>

#include "translate/internal.h"

namespace ww {

using namespace translate_detail;

namespace {

// Whether the module holds a v128 value anywhere: in a type, a global, a
// local (its instructions are found by prep_function).
bool declares_v128(const Module& m) {
  for (const FuncType& t : m.types)
    if (has_v128(t)) return true;
  if (m.has_v128_global()) return true;
  for (const FunctionBody& b : m.codes)
    if (has_v128(b.locals)) return true;
  return false;
}

}  // namespace

Result<TranslatedModule> translate_module(const Module& m, const TranslateOptions& opts) {
  TranslatedModule out;
  const uint32_t nfuncs = uint32_t(m.funcs.size());
  if (m.codes.size() != nfuncs) {
    return make_error(kNoOffset, "function and code section counts differ");
  }
  out.manifests.resize(nfuncs);
  Instr scratch;
  bool simd = declares_v128(m);
  for (uint32_t i = 0; i < nfuncs; ++i) WW_TRY(prep_function(m, i, scratch, &out.manifests[i], &simd));
  out.call_graph = build_call_graph(m, out.manifests);

  BytecodeModule& bc = out.bytecode;
  bc.funcs.resize(nfuncs);
  bc.slot_width = simd ? 2 : 1;
  // Bytecode is typically about twice the code section's bytes
  // (bench/translate.sh reports the ratio); reserving that avoids regrowth.
  bc.code.reserve(size_t(m.code_section_size) / 2 + 16);
  Emitter* e = new_emitter(m, bc, opts);
  for (uint32_t i = 0; i < nfuncs; ++i) {
    Status s = emit_function(*e, i, &out.manifests[i]);
    if (!s.ok()) {
      delete_emitter(e);
      return s.error();
    }
  }
  delete_emitter(e);
  return out;
}

}  // namespace ww
