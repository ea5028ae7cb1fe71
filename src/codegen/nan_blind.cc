#include "codegen/nan_blind.h"

#include <algorithm>
#include <unordered_map>

#include "codegen/op_templates.h"

namespace ww::codegen {
namespace {

bool writes_canonically(BcOp op) {
  for (const TemplatePiece& p : op_templates()[int(op)].pieces)
    if (p.kind == TemplatePiece::CanonWrite) return true;
  return false;
}

}  // namespace

std::vector<bool> raw_float_writes(const Module& m, const BytecodeModule& bc, const std::vector<DecodedOp>& ops,
                                   uint32_t func_index) {
  std::vector<bool> raw(ops.size(), false);
  if (ops.size() > kMaxOpsForNanAnalysis) return raw;
  std::unordered_map<uint32_t, size_t> index_of_pc;
  for (size_t i = 0; i < ops.size(); ++i) index_of_pc[ops[i].pc] = i;
  std::vector<SlotEffects> fx(ops.size());
  std::vector<std::vector<size_t>> succ(ops.size());
  std::vector<uint32_t> targets;
  for (size_t i = 0; i < ops.size(); ++i) {
    fx[i] = slot_effects(m, ops[i], func_index);
    targets.clear();
    branch_targets(bc, ops[i], targets);
    for (uint32_t t : targets)
      if (auto it = index_of_pc.find(t); it != index_of_pc.end()) succ[i].push_back(it->second);
    if (falls_through(ops[i].d.op) && i + 1 < ops.size()) succ[i].push_back(i + 1);
  }
  // For each canonicalizing write, walk forward from it until every path
  // has overwritten the slot, left the function, or met an observer.
  std::vector<uint32_t> seen(ops.size(), 0);
  uint32_t stamp = 0;
  std::vector<size_t> work;
  for (size_t d = 0; d < ops.size(); ++d) {
    if (!writes_canonically(ops[d].d.op)) continue;
    const uint32_t s = ops[d].d.s[0];
    ++stamp;
    bool observed = false;
    work.assign(succ[d].begin(), succ[d].end());
    while (!work.empty() && !observed) {
      size_t i = work.back();
      work.pop_back();
      if (seen[i] == stamp) continue;
      seen[i] = stamp;
      bool reads = false;
      for (const SlotRange& r : fx[i].reads) reads |= s >= r.first && s - r.first < r.count;
      if (reads && !(bc_op_info(ops[i].d.op).flags & kNanBlind)) observed = true;
      if (fx[i].writes == s) continue;  // overwritten: this value ends here
      work.insert(work.end(), succ[i].begin(), succ[i].end());
    }
    raw[d] = !observed;
  }
  return raw;
}

}  // namespace ww::codegen
