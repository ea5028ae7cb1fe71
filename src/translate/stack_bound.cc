// The interpreter's stack need of a call, from the direct-call graph.
#include <algorithm>
#include <unordered_set>

#include "translate/translator.h"

namespace ww {

std::optional<StackBound> stack_bound(const Module& m, const TranslatedModule& tm,
                                      const std::vector<uint32_t>& entries) {
  const uint32_t nimp = m.num_imported_funcs;
  std::unordered_set<uint32_t> recursive;
  for (const auto& group : tm.call_graph.recursive_groups) recursive.insert(group.begin(), group.end());
  // Slots are summed in 64 bits: a long chain of large frames must not wrap.
  struct Need {
    bool bounded = false;
    uint64_t slots = 0;
    uint32_t depth = 0;
  };
  std::vector<Need> need(m.num_funcs());
  // Callees' SCCs come before their callers' (reverse topological order),
  // so every callee is settled when its caller is reached.
  for (const auto& scc : tm.call_graph.sccs) {
    for (uint32_t f : scc) {
      Need& n = need[f];
      if (f < nimp) {  // an import runs without a frame of ours
        n.bounded = true;
        continue;
      }
      const uint32_t def = f - nimp;
      if (recursive.count(f) || def >= tm.manifests.size() || tm.manifests[def].calls_indirect) continue;
      uint64_t deepest_slots = 0;
      uint32_t deepest_depth = 0;
      n.bounded = true;
      for (uint32_t c : tm.manifests[def].callees) {
        if (c >= need.size() || !need[c].bounded) {
          n.bounded = false;
          break;
        }
        deepest_slots = std::max(deepest_slots, need[c].slots);
        deepest_depth = std::max(deepest_depth, need[c].depth + (c >= nimp ? 1u : 0u));
      }
      // A callee's frame starts inside its caller's (at the call's first
      // argument), so the caller's whole frame is an upper bound beneath it.
      n.slots = tm.bytecode.funcs[def].frame_slots + deepest_slots;
      n.depth = deepest_depth;
    }
  }
  StackBound b;
  for (uint32_t f : entries) {
    if (f >= need.size() || !need[f].bounded) return std::nullopt;
    b.slots = std::max(b.slots, need[f].slots);
    b.depth = std::max(b.depth, need[f].depth);
  }
  if (b.slots > 0xffffffffu) return std::nullopt;
  return b;
}

}  // namespace ww
