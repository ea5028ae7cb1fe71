// The prep pass: manifests and the call graph.
#include <algorithm>

#include "common/byte_reader.h"
#include "translate/internal.h"

namespace ww::translate_detail {

Status prep_function(const Module& m, uint32_t def, Instr& in, FunctionManifest* out, bool* simd) {
  const FunctionBody& body = m.codes[def];
  out->func_index = m.num_imported_funcs + def;
  out->type_index = m.funcs[def];
  if (out->type_index >= m.types.size() || def >= m.codes.size()) {
    return make_error(kNoOffset, "cannot translate unvalidated code");
  }
  const FuncType& ft = m.types[out->type_index];
  out->num_params = uint32_t(ft.params.size());
  out->num_results = uint32_t(ft.results.size());
  out->num_locals = out->num_params + uint32_t(body.locals.size());
  out->callees.clear();
  out->calls_indirect = false;
  ByteReader r(m.bytes.data() + body.body_offset, body.body_end - body.body_offset, body.body_offset);
  while (!r.at_end()) {
    WW_TRY(read_instr(r, in));
    if (opcode_info(in.op).prefix == 0xFD) *simd = true;
    if (in.op == Opcode::Call) {
      out->callees.push_back(in.a);
    } else if (in.op == Opcode::CallIndirect) {
      out->calls_indirect = true;
    }
  }
  std::sort(out->callees.begin(), out->callees.end());
  out->callees.erase(std::unique(out->callees.begin(), out->callees.end()), out->callees.end());
  return Status::Ok();
}

// Tarjan's algorithm with an explicit stack, so a long call chain in the
// input cannot overflow the host stack.
CallGraph build_call_graph(const Module& m, const std::vector<FunctionManifest>& mans) {
  const uint32_t n = m.num_funcs();
  const uint32_t nimp = m.num_imported_funcs;
  constexpr uint32_t kUnvisited = ~0u;
  std::vector<uint32_t> index(n, kUnvisited), low(n, 0);
  std::vector<uint8_t> on_stack(n, 0);
  std::vector<uint32_t> scc_stack;
  struct Walk {
    uint32_t v;
    uint32_t next_edge;
  };
  std::vector<Walk> walk;
  uint32_t counter = 0;
  CallGraph g;
  auto edges = [&](uint32_t v) -> const std::vector<uint32_t>* {
    static const std::vector<uint32_t> kNone;
    return v < nimp ? &kNone : &mans[v - nimp].callees;
  };
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    walk.push_back({root, 0});
    index[root] = low[root] = counter++;
    scc_stack.push_back(root);
    on_stack[root] = 1;
    while (!walk.empty()) {
      Walk& w = walk.back();
      const std::vector<uint32_t>& es = *edges(w.v);
      if (w.next_edge < es.size()) {
        uint32_t u = es[w.next_edge++];
        if (u >= n) continue;  // invalid index; the validator rejects these
        if (index[u] == kUnvisited) {
          index[u] = low[u] = counter++;
          scc_stack.push_back(u);
          on_stack[u] = 1;
          walk.push_back({u, 0});
        } else if (on_stack[u]) {
          low[w.v] = std::min(low[w.v], index[u]);
        }
        continue;
      }
      uint32_t v = w.v;
      walk.pop_back();
      if (!walk.empty()) low[walk.back().v] = std::min(low[walk.back().v], low[v]);
      if (low[v] == index[v]) {
        std::vector<uint32_t> scc;
        uint32_t u;
        do {
          u = scc_stack.back();
          scc_stack.pop_back();
          on_stack[u] = 0;
          scc.push_back(u);
        } while (u != v);
        std::sort(scc.begin(), scc.end());
        bool recursive = scc.size() > 1;
        if (!recursive) {
          const std::vector<uint32_t>& es2 = *edges(v);
          recursive = std::binary_search(es2.begin(), es2.end(), v);
        }
        if (recursive) g.recursive_groups.push_back(scc);
        g.sccs.push_back(std::move(scc));
      }
    }
  }
  return g;
}

}  // namespace ww::translate_detail

namespace ww {

Status check_no_recursion(const Module& m, const CallGraph& g) {
  if (g.recursive_groups.empty()) return Status::Ok();
  std::string names;
  for (uint32_t f : g.recursive_groups.front()) {
    if (!names.empty()) names += ", ";
    names += m.func_display_name(f);
  }
  if (g.recursive_groups.front().size() == 1)
    return Error{"recursion not supported: function " + names + " calls itself", kNoOffset};
  return Error{"recursion not supported: functions " + names + " form a cycle", kNoOffset};
}

}  // namespace ww
