// The binary decoder follows the reference interpreter's reading model so
// that malformed modules fail with the spec tests' messages: a section's
// contents are read from the module-wide cursor (not a reader clipped to the
// section), and only afterwards is the position compared with the declared
// size ("section size mismatch"). A section whose contents run past its
// declared end therefore reports what the reference reports (for example
// "length out of bounds" when a name length is read from the next section).
// Every read is still bounds-checked against the end of the module.
#include "decode/decoder.h"

#include <limits>

#include "common/byte_reader.h"
#include "decode/decoder_internal.h"
#include "wasm/instr_reader.h"

namespace ww {

namespace {

constexpr uint32_t kMagic = 0x6d736100;  // "\0asm"
constexpr uint32_t kVersion = 1;
constexpr const char* kEndOfSection = "unexpected end of section or function";

enum SectionId : uint8_t {
  kCustom = 0,
  kType = 1,
  kImport = 2,
  kFunction = 3,
  kTable = 4,
  kMemory = 5,
  kGlobal = 6,
  kExport = 7,
  kStart = 8,
  kElem = 9,
  kCode = 10,
  kData = 11,
  kDataCount = 12,
};

// Position of each known section in the required order; data count sits
// between element and code.
int section_rank(uint8_t id) {
  switch (id) {
    case kDataCount: return 10;
    case kCode: return 11;
    case kData: return 12;
    default: return id;  // 1..9 keep their id
  }
}

class Decoder {
 public:
  Decoder(Module& m, const DecodeOptions& opts) : m_(m), opts_(opts), r_(m.bytes.data(), m.bytes.size()) {}

  Status run();

 private:
  Status section(uint8_t id, uint32_t size);
  Status custom_section(uint64_t start, uint32_t size);

  Result<uint32_t> len32();
  Result<std::string> name();
  Status limits(Limits& out);
  Status table_type(TableType& out);
  Status global_type(GlobalType& out);
  Status const_expr(ConstExpr& out);

  Status type_section();
  Status import_section();
  Status function_section();
  Status table_section();
  Status memory_section();
  Status global_section();
  Status export_section();
  Status start_section();
  Status elem_section();
  Status data_count_section();
  Status code_section(uint64_t section_end);
  Status data_section();

  Module& m_;
  const DecodeOptions& opts_;
  ByteReader r_;
  bool seen_function_ = false, seen_code_ = false;
  uint64_t function_offset_ = 0, code_offset_ = 0, data_count_offset_ = 0;
  uint32_t code_count_ = 0;
  uint64_t total_locals_ = 0;  // across all bodies, against opts_.max_total_locals
};

// Reads a length (of a vector, name or sized region) like the reference
// interpreter's len32: a length larger than what is left of the module,
// counted from the length field itself, is "length out of bounds". Since
// every vector element takes at least one byte, this also keeps hostile
// counts from driving any large allocation.
Result<uint32_t> Decoder::len32() {
  uint64_t off = r_.offset();
  WW_ASSIGN_OR_RETURN(uint32_t n, r_.u32());
  if (uint64_t(n) > m_.bytes.size() - off) return make_error(off, "length out of bounds");
  return n;
}

Result<std::string> Decoder::name() {
  uint64_t off = r_.offset();
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  const uint8_t* p;
  WW_TRY(r_.bytes(n, &p));
  if (!is_valid_utf8(p, n)) return make_error(off, "malformed UTF-8 encoding");
  return std::string(reinterpret_cast<const char*>(p), n);
}

// The flag is a one-bit LEB128 (the reference's vu1), hence the LEB wording
// for a flag of 2 or a flag with a continuation bit.
Status Decoder::limits(Limits& out) {
  uint64_t off = r_.offset();
  WW_ASSIGN_OR_RETURN(uint8_t flag, r_.u8());
  if ((flag & 0x7f) > 1) return make_error(off, "integer too large");
  if (flag & 0x80) return make_error(off + 1, "integer representation too long");
  WW_ASSIGN_OR_RETURN(uint32_t min, r_.u32());
  out.min = min;
  out.max.reset();
  if (flag == 1) {
    WW_ASSIGN_OR_RETURN(uint32_t max, r_.u32());
    out.max = max;
  }
  return Status::Ok();
}

Status Decoder::table_type(TableType& out) {
  WW_ASSIGN_OR_RETURN(out.elem, read_reftype(r_));
  return limits(out.limits);
}

Status Decoder::global_type(GlobalType& out) {
  WW_ASSIGN_OR_RETURN(out.type, read_valtype(r_));
  uint64_t off = r_.offset();
  WW_ASSIGN_OR_RETURN(uint8_t mut, r_.u8());
  if (mut > 1) return make_error(off, "malformed mutability");
  out.mut = mut == 1;
  return Status::Ok();
}

// Reads instructions up to the first `end`. Their contents (one constant
// instruction of the right type) are the validator's to check; each read
// consumes at least one byte, so the loop is bounded by the input.
Status Decoder::const_expr(ConstExpr& out) {
  out.offset = r_.offset();
  out.instrs.clear();
  for (;;) {
    Instr in;
    WW_TRY(read_instr(r_, in));
    if (in.op == Opcode::End) return Status::Ok();
    out.instrs.push_back(std::move(in));
  }
}

Status Decoder::type_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t off = r_.offset();
    WW_ASSIGN_OR_RETURN(uint8_t form, r_.u8());
    if (form != 0x60) {
      // The form is a one-byte signed LEB128 in the reference interpreter.
      if (form & 0x80) return make_error(off + 1, "integer representation too long");
      return make_error(off, "malformed function type");
    }
    FuncType ft;
    for (auto* list : {&ft.params, &ft.results}) {
      WW_ASSIGN_OR_RETURN(uint32_t k, len32());
      for (uint32_t j = 0; j < k; ++j) {
        WW_ASSIGN_OR_RETURN(ValType t, read_valtype(r_));
        list->push_back(t);
      }
    }
    m_.types.push_back(std::move(ft));
  }
  return Status::Ok();
}

Status Decoder::import_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    Import imp;
    imp.offset = r_.offset();
    WW_ASSIGN_OR_RETURN(imp.module, name());
    WW_ASSIGN_OR_RETURN(imp.field, name());
    uint64_t kind_off = r_.offset();
    WW_ASSIGN_OR_RETURN(uint8_t kind, r_.u8());
    switch (kind) {
      case 0: {
        WW_ASSIGN_OR_RETURN(imp.func_type, r_.u32());
        ++m_.num_imported_funcs;
        break;
      }
      case 1:
        WW_TRY(table_type(imp.table));
        ++m_.num_imported_tables;
        break;
      case 2:
        WW_TRY(limits(imp.memory.limits));
        ++m_.num_imported_memories;
        break;
      case 3:
        WW_TRY(global_type(imp.global));
        ++m_.num_imported_globals;
        break;
      default: return make_error(kind_off, "malformed import kind");
    }
    imp.kind = static_cast<ExternKind>(kind);
    m_.imports.push_back(std::move(imp));
  }
  return Status::Ok();
}

Status Decoder::function_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    WW_ASSIGN_OR_RETURN(uint32_t t, r_.u32());
    m_.funcs.push_back(t);
  }
  return Status::Ok();
}

Status Decoder::table_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    TableType t;
    WW_TRY(table_type(t));
    m_.tables.push_back(t);
  }
  return Status::Ok();
}

Status Decoder::memory_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    MemoryType t;
    WW_TRY(limits(t.limits));
    m_.memories.push_back(t);
  }
  return Status::Ok();
}

Status Decoder::global_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    Global g;
    WW_TRY(global_type(g.type));
    WW_TRY(const_expr(g.init));
    m_.globals.push_back(std::move(g));
  }
  return Status::Ok();
}

Status Decoder::export_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    Export e;
    e.offset = r_.offset();
    WW_ASSIGN_OR_RETURN(e.name, name());
    uint64_t kind_off = r_.offset();
    WW_ASSIGN_OR_RETURN(uint8_t kind, r_.u8());
    if (kind > 3) return make_error(kind_off, "malformed export kind");
    e.kind = static_cast<ExternKind>(kind);
    WW_ASSIGN_OR_RETURN(e.index, r_.u32());
    m_.exports.push_back(std::move(e));
  }
  return Status::Ok();
}

Status Decoder::start_section() {
  WW_ASSIGN_OR_RETURN(uint32_t f, r_.u32());
  m_.start = f;
  return Status::Ok();
}

// Element segment flags: bit 0 = passive or declarative, bit 1 = explicit
// table index (active) or declarative (otherwise), bit 2 = elements are
// expressions rather than function indices.
Status Decoder::elem_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    ElemSegment seg;
    seg.offset_in_module = r_.offset();
    WW_ASSIGN_OR_RETURN(uint32_t flags, r_.u32());
    if (flags > 7) return make_error(seg.offset_in_module, "malformed elements segment kind");
    const bool passive_or_decl = flags & 1;
    const bool explicit_or_decl = flags & 2;
    const bool exprs = flags & 4;
    if (passive_or_decl) {
      seg.mode = explicit_or_decl ? SegmentMode::Declarative : SegmentMode::Passive;
    } else {
      seg.mode = SegmentMode::Active;
      if (explicit_or_decl) {
        WW_ASSIGN_OR_RETURN(seg.table, r_.u32());
      }
      WW_TRY(const_expr(seg.offset));
    }
    // Forms 0 and 4 have an implicit funcref type; the others spell it out,
    // as an elemkind byte (index forms) or a reference type (expr forms).
    seg.type = ValType::FuncRef;
    if (flags & 3) {
      if (exprs) {
        WW_ASSIGN_OR_RETURN(seg.type, read_reftype(r_));
      } else {
        uint64_t kind_off = r_.offset();
        WW_ASSIGN_OR_RETURN(uint8_t kind, r_.u8());
        if (kind != 0x00) return make_error(kind_off, "malformed element kind");
      }
    }
    WW_ASSIGN_OR_RETURN(uint32_t count, len32());
    for (uint32_t j = 0; j < count; ++j) {
      ConstExpr e;
      if (exprs) {
        WW_TRY(const_expr(e));
      } else {
        Instr in;
        in.op = Opcode::RefFunc;
        in.offset = e.offset = r_.offset();
        WW_ASSIGN_OR_RETURN(in.a, r_.u32());
        e.instrs.push_back(std::move(in));
      }
      seg.init.push_back(std::move(e));
    }
    m_.elems.push_back(std::move(seg));
  }
  return Status::Ok();
}

Status Decoder::data_count_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, r_.u32());
  m_.data_count = n;
  return Status::Ok();
}

Status Decoder::code_section(uint64_t section_end) {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  code_count_ = n;
  const uint64_t module_end = m_.bytes.size();
  for (uint32_t i = 0; i < n; ++i) {
    FunctionBody fb;
    fb.size_offset = r_.offset();
    WW_ASSIGN_OR_RETURN(uint32_t size, len32());
    const uint64_t body_start = r_.offset();
    const uint64_t body_end = body_start + size;
    // Instructions are left to the validator, but the body must close with
    // `end`. Messages follow what the reference interpreter, which reads on
    // past a body that lacks it, reports in each situation.
    auto missing_end = [&]() -> Status {
      if (i + 1 < n) return make_error(body_end, "END opcode expected");
      if (section_end >= module_end) return make_error(module_end, kEndOfSection);
      return make_error(body_start, "section size mismatch");
    };
    if (size == 0) return missing_end();

    const uint64_t locals_off = r_.offset();
    WW_ASSIGN_OR_RETURN(uint32_t groups, len32());
    struct Group {
      uint32_t count;
      ValType type;
    };
    std::vector<Group> decl;
    uint64_t total = 0;
    for (uint32_t g = 0; g < groups; ++g) {
      WW_ASSIGN_OR_RETURN(uint32_t count, r_.u32());
      WW_ASSIGN_OR_RETURN(ValType t, read_valtype(r_));
      total += count;  // at most 2^32 groups of < 2^32: no u64 overflow
      decl.push_back({count, t});
    }
    if (total > std::numeric_limits<uint32_t>::max() || total > opts_.max_locals_per_function ||
        total > opts_.max_total_locals - total_locals_)
      return make_error(locals_off, "too many locals");
    total_locals_ += total;
    if (r_.offset() > body_end) return make_error(body_start, "section size mismatch");

    // len32 allows a size up to the LEB's own length past the module end.
    if (body_end > module_end) return make_error(module_end, kEndOfSection);
    if (r_.offset() == body_end || m_.bytes[body_end - 1] != 0x0B) return missing_end();
    fb.body_offset = static_cast<uint32_t>(r_.offset());
    fb.body_end = static_cast<uint32_t>(body_end);
    fb.locals.reserve(total);
    for (const Group& g : decl) fb.locals.insert(fb.locals.end(), g.count, g.type);
    WW_TRY(r_.skip(body_end - r_.offset()));
    m_.codes.push_back(std::move(fb));
  }
  return Status::Ok();
}

Status Decoder::data_section() {
  WW_ASSIGN_OR_RETURN(uint32_t n, len32());
  for (uint32_t i = 0; i < n; ++i) {
    DataSegment seg;
    seg.offset_in_module = r_.offset();
    WW_ASSIGN_OR_RETURN(uint32_t flags, r_.u32());
    switch (flags) {
      case 0:
        seg.mode = SegmentMode::Active;
        WW_TRY(const_expr(seg.offset));
        break;
      case 1: seg.mode = SegmentMode::Passive; break;
      case 2: {
        seg.mode = SegmentMode::Active;
        WW_ASSIGN_OR_RETURN(seg.memory, r_.u32());
        WW_TRY(const_expr(seg.offset));
        break;
      }
      default: return make_error(seg.offset_in_module, "malformed data segment kind");
    }
    WW_ASSIGN_OR_RETURN(seg.size, len32());
    seg.bytes_offset = static_cast<uint32_t>(r_.offset());
    WW_TRY(r_.skip(seg.size));
    m_.datas.push_back(std::move(seg));
  }
  return Status::Ok();
}

Status Decoder::section(uint8_t id, uint32_t size) {
  switch (id) {
    case kType: return type_section();
    case kImport: return import_section();
    case kFunction: return function_section();
    case kTable: return table_section();
    case kMemory: return memory_section();
    case kGlobal: return global_section();
    case kExport: return export_section();
    case kStart: return start_section();
    case kElem: return elem_section();
    case kDataCount: return data_count_section();
    case kCode: return code_section(r_.offset() + size);
    case kData: return data_section();
    default: return r_.error("malformed section id");  // unreachable: checked by run()
  }
}

// Custom sections are skipped; only "name" is read, and never rejected.
Status Decoder::custom_section(uint64_t start, uint32_t size) {
  WW_ASSIGN_OR_RETURN(std::string n, name());
  uint64_t used = r_.offset() - start;
  if (used > size) return make_error(start + size, "unexpected end");
  const uint8_t* contents = r_.pos();
  size_t len = size - used;
  if (!r_.skip(len).ok()) return make_error(m_.bytes.size(), "unexpected end");
  if (n == "name") decode_internal::parse_name_section(contents, len, start + used, m_);
  return Status::Ok();
}

Status Decoder::run() {
  if (m_.bytes.size() > std::numeric_limits<uint32_t>::max()) return make_error(0, "module too large");
  WW_ASSIGN_OR_RETURN(uint32_t magic, r_.fixed_u32());
  if (magic != kMagic) return make_error(0, "magic header not detected");
  WW_ASSIGN_OR_RETURN(uint32_t version, r_.fixed_u32());
  if (version != kVersion) return make_error(4, "unknown binary version");

  int last_rank = 0;
  while (!r_.at_end()) {
    const uint64_t id_off = r_.offset();
    WW_ASSIGN_OR_RETURN(uint8_t id, r_.u8());
    if (id > kDataCount) return make_error(id_off, "malformed section id");
    WW_ASSIGN_OR_RETURN(uint32_t size, len32());
    const uint64_t start = r_.offset();
    if (id == kCustom) {
      WW_TRY(custom_section(start, size));
      continue;
    }
    // A repeated or out-of-order section is, to the reference decoder
    // (which reads sections in their fixed order), junk after the last one.
    int rank = section_rank(id);
    if (rank <= last_rank) return make_error(id_off, "unexpected content after last section");
    last_rank = rank;
    if (id == kFunction) {
      seen_function_ = true;
      function_offset_ = id_off;
    } else if (id == kCode) {
      seen_code_ = true;
      code_offset_ = id_off;
      m_.code_section_size = size;
    } else if (id == kDataCount) {
      data_count_offset_ = id_off;
    }

    Status st = section(id, size);
    if (!st.ok()) {
      Error e = st.error();
      if (e.message == "unexpected end") e.message = kEndOfSection;
      return e;
    }
    if (r_.offset() != start + size) return make_error(start, "section size mismatch");
  }

  if (m_.funcs.size() != code_count_) {
    return make_error(seen_code_       ? code_offset_
                      : seen_function_ ? function_offset_
                                       : r_.offset(),
                      "function and code section have inconsistent lengths");
  }
  if (m_.data_count && *m_.data_count != m_.datas.size())
    return make_error(data_count_offset_, "data count and data section have inconsistent lengths");
  return Status::Ok();
}

}  // namespace

Result<Module> decode_module(std::vector<uint8_t> bytes, const DecodeOptions& opts) {
  Module m;
  m.bytes = std::move(bytes);
  Decoder d(m, opts);
  WW_TRY(d.run());
  return m;
}

}  // namespace ww
