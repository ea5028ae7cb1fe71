#include "translate/translator.h"

#include <algorithm>

#include "translate/internal.h"

namespace ww {

using namespace translate_detail;

namespace {

// SIMD is decoded and validated but not run yet: a module that uses v128
// anywhere is refused here, before anything below has to represent it.
// (prep_function refuses the instructions.)
Status refuse_v128(const Module& m) {
  auto has = [](const std::vector<ValType>& ts) { return std::find(ts.begin(), ts.end(), ValType::V128) != ts.end(); };
  const Status no = make_error(kNoOffset, "SIMD is not supported yet (the module uses v128)");
  for (const FuncType& t : m.types)
    if (has(t.params) || has(t.results)) return no;
  for (const Import& im : m.imports)
    if (im.kind == ExternKind::Global && im.global.type == ValType::V128) return no;
  for (const Global& g : m.globals)
    if (g.type.type == ValType::V128) return no;
  for (const FunctionBody& b : m.codes)
    if (has(b.locals)) return make_error(b.size_offset, "SIMD is not supported yet (a v128 local)");
  return Status::Ok();
}

}  // namespace

Result<TranslatedModule> translate_module(const Module& m, const TranslateOptions& opts) {
  WW_TRY(refuse_v128(m));
  TranslatedModule out;
  const uint32_t nfuncs = uint32_t(m.funcs.size());
  if (m.codes.size() != nfuncs) {
    return make_error(kNoOffset, "function and code section counts differ");
  }
  out.manifests.resize(nfuncs);
  Instr scratch;
  for (uint32_t i = 0; i < nfuncs; ++i) WW_TRY(prep_function(m, i, scratch, &out.manifests[i]));
  out.call_graph = build_call_graph(m, out.manifests);

  BytecodeModule& bc = out.bytecode;
  bc.funcs.resize(nfuncs);
  // Bytecode is typically ~2x the code section; reserving avoids regrowth.
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
