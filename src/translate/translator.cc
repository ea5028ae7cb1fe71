#include "translate/translator.h"

#include "translate/internal.h"

namespace ww {

using namespace translate_detail;

Result<TranslatedModule> translate_module(const Module& m, const TranslateOptions& opts) {
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
