#include "codegen/op_templates.h"

#include <cctype>
#include <string_view>

namespace ww::codegen {
namespace {

const char* const kBodies[] = {
#define WW_OP(Name, text, fmt, flags, ...) #__VA_ARGS__,
#include "bytecode/ops.def"
#undef WW_OP
};
static_assert(sizeof(kBodies) / sizeof(kBodies[0]) == kBcOpCount);

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// s0..s3 and i0..i2: the names the WW_DEC_* decoders give the operands.
int operand_index(std::string_view id, char prefix) {
  if (id.size() == 2 && id[0] == prefix && id[1] >= '0' && id[1] <= '3') return id[1] - '0';
  return -1;
}

// s0_hi..s3_hi: the slot after the operand (see v128_accessors_spelled_out).
int operand_hi_index(std::string_view id) {
  return id.size() == 5 && id.substr(2) == "_hi" ? operand_index(id.substr(0, 2), 's') : -1;
}

// A v128 body's accessors reach the slot after an operand, (sK) + 1, which
// generated code (slots are locals rK) cannot compute at preprocessing:
// they are spelled out over sK and sK_hi, which the parser then fills in.
// (Scanned by hand: std::regex over every op's body is slow enough to show
// in the wall time of each process's first compiled batch.)
std::string v128_accessors_spelled_out(std::string_view body) {
  // `open` sK `close` becomes make(sK).
  auto spell = [](std::string_view in, std::string_view open, std::string_view close, auto make) {
    std::string out;
    size_t from = 0;
    for (size_t at = in.find(open); at != std::string_view::npos; at = in.find(open, at + 1)) {
      const size_t k = at + open.size();
      if (operand_index(in.substr(k, 2), 's') < 0 || in.substr(k + 2, close.size()) != close) continue;
      out.append(in.substr(from, at - from));
      out += make(std::string(in.substr(k, 2)));
      from = k + 2 + close.size();
      at = from - 1;
    }
    out.append(in.substr(from));
    return out;
  };
  if (body.find("V128") == std::string_view::npos && body.find(") + 1") == std::string_view::npos)
    return std::string(body);
  std::string s = spell(body, "RV128(", ")",
                        [](const std::string& r) { return "::ww::sem::v128_of(SLOT(" + r + "), SLOT(" + r + "_hi))"; });
  s = spell(s, "WV128(", ",", [](const std::string& r) { return "WV128_2(" + r + ", " + r + "_hi,"; });
  return spell(s, "(", ") + 1", [](const std::string& r) { return r + "_hi"; });
}

void push_text(std::vector<TemplatePiece>& out, std::string_view t) {
  if (t.empty()) return;
  if (!out.empty() && out.back().kind == TemplatePiece::Text) out.back().text += t;
  else out.push_back({TemplatePiece::Text, std::string(t), 0});
}

// MACRO(iK) at `pos` (just after the macro name): the index K, and the end.
bool macro_of_imm(std::string_view s, size_t pos, uint8_t* k, size_t* end) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  if (pos >= s.size() || s[pos] != '(') return false;
  ++pos;
  while (pos < s.size() && s[pos] == ' ') ++pos;
  size_t b = pos;
  while (pos < s.size() && is_ident_char(s[pos])) ++pos;
  int idx = operand_index(s.substr(b, pos - b), 'i');
  while (pos < s.size() && s[pos] == ' ') ++pos;
  if (idx < 0 || pos >= s.size() || s[pos] != ')') return false;
  *k = uint8_t(idx);
  *end = pos + 1;
  return true;
}

OpTemplate parse(std::string_view raw) {
  const std::string spelled = v128_accessors_spelled_out(raw);
  const std::string_view body = spelled;
  OpTemplate t;
  size_t text_start = 0, i = 0;
  while (i < body.size()) {
    if (!is_ident_start(body[i]) || (i > 0 && is_ident_char(body[i - 1]))) {
      ++i;
      continue;
    }
    size_t b = i;
    while (i < body.size() && is_ident_char(body[i])) ++i;
    std::string_view id = body.substr(b, i - b);
    TemplatePiece p;
    size_t end = i;
    uint8_t k = 0;
    if ((id == "JUMP" || id == "CONST64" || id == "CONST64_NEXT") && macro_of_imm(body, i, &k, &end)) {
      p.kind = id == "JUMP" ? TemplatePiece::Jump : id == "CONST64" ? TemplatePiece::Const64 : TemplatePiece::Const64Hi;
      p.index = k;
      if (id == "JUMP") t.jumps = true;
    } else if (id == "WF32C" || id == "WF64C") {
      p.kind = TemplatePiece::CanonWrite;
      p.text = std::string(id);
    } else if (int s = operand_index(id, 's'); s >= 0) {
      p.kind = TemplatePiece::Slot;
      p.index = uint8_t(s);
    } else if (int h = operand_hi_index(id); h >= 0) {
      p.kind = TemplatePiece::SlotHi;
      p.index = uint8_t(h);
    } else if (int m = operand_index(id, 'i'); m >= 0) {
      p.kind = TemplatePiece::Imm;
      p.index = uint8_t(m);
    } else {
      if (id == "TRAP" || id == "TRAP_IF") t.traps = true;
      if (id == "BR_TABLE" || id == "RETURN" || id == "CALL" || id == "CALL_IMPORT" || id == "CALL_INDIRECT")
        t.special = true;
      continue;
    }
    push_text(t.pieces, body.substr(text_start, b - text_start));
    t.pieces.push_back(p);
    text_start = i = end;
  }
  push_text(t.pieces, body.substr(text_start));
  return t;
}

}  // namespace

const std::vector<OpTemplate>& op_templates() {
  static const std::vector<OpTemplate> all = [] {
    std::vector<OpTemplate> v;
    for (int op = 0; op < kBcOpCount; ++op) v.push_back(parse(kBodies[op]));
    return v;
  }();
  return all;
}

const char* op_body_text(BcOp op) { return kBodies[int(op)]; }

}  // namespace ww::codegen
