#include "bytecode/disasm.h"

#include <cinttypes>
#include <cstdio>

#include "bytecode/ops.h"

namespace ww {

namespace {

// A v128 constant and a shuffle's lane mask take two pool words
// (CONST64_NEXT): the vector as one 128-bit number, the mask as its lanes.
std::string v128_immediate(const BytecodeModule& bc, const BcDecoded& d) {
  const uint32_t v = d.i[0];
  if (uint64_t(v) + 1 >= bc.consts.size()) return "<bad const " + std::to_string(v) + ">";
  const uint64_t lo = bc.consts[v], hi = bc.consts[v + 1];
  char buf[40];
  if (d.op == BcOp::V128Const) {
    std::snprintf(buf, sizeof buf, "0x%016" PRIx64 "%016" PRIx64, hi, lo);
    return buf;
  }
  std::string out = "[";
  for (int lane = 0; lane < 16; ++lane)
    out += (lane ? " " : "") + std::to_string(((lane < 8 ? lo : hi) >> (lane % 8 * 8)) & 0xff);
  return out + "]";
}

}  // namespace

std::string disassemble_function(const BytecodeModule& bc, uint32_t defined_index) {
  std::string out;
  if (defined_index >= bc.funcs.size()) return "<no such function>\n";
  const FunctionCode& fc = bc.funcs[defined_index];
  if (fc.code_begin > fc.code_end || fc.code_end > bc.code.size()) return "<bad code range>\n";
  const uint32_t* code = bc.code.data() + fc.code_begin;
  size_t n = fc.code_end - fc.code_begin;
  char buf[64];
  for (size_t pc = 0; pc < n;) {
    BcDecoded d;
    std::snprintf(buf, sizeof buf, "%04zu: ", pc);
    out += buf;
    if (!bc_decode(code + pc, n - pc, &d)) {
      std::snprintf(buf, sizeof buf, "<bad op %u>\n", code[pc] & 0xffffu);
      out += buf;
      ++pc;
      continue;
    }
    const BcOpInfo& oi = bc_op_info(d.op);
    const BcFmtInfo& fi = bc_fmt_info(oi.fmt);
    out += oi.name;
    const char* sep = " ";
    for (uint32_t k = 0; k < fi.nslots; ++k) {
      std::snprintf(buf, sizeof buf, "%ss%u", sep, d.s[k]);
      out += buf;
      sep = ", ";
    }
    if (d.op == BcOp::V128Const || d.op == BcOp::I8x16Shuffle) {
      out += sep + v128_immediate(bc, d) + "\n";
      pc += d.words;
      continue;
    }
    for (uint32_t k = 0; k < fi.nimms; ++k) {
      uint32_t v = d.i[k];
      switch (fi.imm_kinds[k]) {
        case 'T': std::snprintf(buf, sizeof buf, "%s@%04u", sep, v); break;
        case 'K':
          if (v < bc.consts.size()) std::snprintf(buf, sizeof buf, "%s0x%" PRIx64, sep, bc.consts[v]);
          else std::snprintf(buf, sizeof buf, "%s<bad const %u>", sep, v);
          break;
        default:
          // Imm forms and const32 hold i32 values; signed reads best.
          std::snprintf(buf, sizeof buf, "%s%d", sep, static_cast<int32_t>(v));
          break;
      }
      out += buf;
      sep = ", ";
    }
    if (d.op == BcOp::BrTable) {
      // List the targets instead of the raw table start and count.
      out.resize(out.rfind(" s") + 1);
      std::snprintf(buf, sizeof buf, "s%u [", d.s[0]);
      out += buf;
      for (uint32_t k = 0; k < d.i[1]; ++k) {
        uint32_t idx = d.i[0] + k;
        if (idx < bc.br_tables.size()) std::snprintf(buf, sizeof buf, "%s@%04u", k ? " " : "", bc.br_tables[idx]);
        else std::snprintf(buf, sizeof buf, "%s<bad>", k ? " " : "");
        out += buf;
      }
      out += "]";
    }
    out += "\n";
    pc += d.words;
  }
  return out;
}

std::string disassemble_module(const BytecodeModule& bc, const Module& m) {
  std::string out;
  for (uint32_t i = 0; i < bc.funcs.size(); ++i) {
    const FunctionCode& fc = bc.funcs[i];
    char buf[160];
    std::snprintf(buf, sizeof buf, "func %s: params %u, results %u, locals %u, frame %u slots\n",
                  m.func_display_name(m.num_imported_funcs + i).c_str(), fc.num_params, fc.num_results, fc.num_locals,
                  fc.frame_slots);
    out += buf;
    out += disassemble_function(bc, i);
  }
  return out;
}

}  // namespace ww
