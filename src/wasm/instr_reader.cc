#include "wasm/instr_reader.h"

namespace ww {

Result<ValType> read_valtype(ByteReader& r) {
  uint64_t off = r.offset();
  WW_ASSIGN_OR_RETURN(uint8_t b, r.u8());
  switch (b) {
    case 0x7F:
    case 0x7E:
    case 0x7D:
    case 0x7C:
    case 0x7B:
    case 0x70:
    case 0x6F: return static_cast<ValType>(b);
    default: return make_error(off, "malformed value type");
  }
}

Result<ValType> read_reftype(ByteReader& r) {
  uint64_t off = r.offset();
  WW_ASSIGN_OR_RETURN(uint8_t b, r.u8());
  if (b == 0x70 || b == 0x6F) return static_cast<ValType>(b);
  return make_error(off, "malformed reference type");
}

static Status read_index(ByteReader& r, uint32_t& out) {
  WW_ASSIGN_OR_RETURN(out, r.u32());
  return Status::Ok();
}

// In WebAssembly 2.0 the memory index of memory instructions is a single
// reserved zero byte, not a LEB index.
static Status read_zero_byte(ByteReader& r, uint32_t& out) {
  uint64_t off = r.offset();
  WW_ASSIGN_OR_RETURN(uint8_t b, r.u8());
  if (b != 0) return make_error(off, "zero byte expected");
  out = 0;
  return Status::Ok();
}

Status read_instr(ByteReader& r, Instr& in) {
  in.offset = r.offset();
  WW_ASSIGN_OR_RETURN(uint8_t b, r.u8());
  uint8_t prefix = 0;
  uint32_t code = b;
  if (b == 0xFC || b == 0xFD) {
    prefix = b;
    WW_ASSIGN_OR_RETURN(code, r.u32());
  }
  if (!lookup_opcode(prefix, code, &in.op)) {
    return make_error(in.offset, prefix ? "illegal opcode" : "illegal opcode");
  }
  const OpcodeInfo& info = opcode_info(in.op);
  in.a = in.b = 0;
  in.imm = 0;
  switch (info.imm) {
    case Imm::None: break;
    case Imm::Block: {
      uint64_t off = r.offset();
      if (r.at_end()) return r.error("unexpected end");
      uint8_t first = *r.pos();
      if (first == 0x40) {
        WW_TRY(r.skip(1));
        in.block.kind = BlockType::Void;
      } else if (first & 0x40 && !(first & 0x80)) {
        // A single negative byte: a value type.
        WW_ASSIGN_OR_RETURN(in.block.type, read_valtype(r));
        in.block.kind = BlockType::Value;
      } else {
        WW_ASSIGN_OR_RETURN(int64_t idx, r.s33());
        if (idx < 0) return make_error(off, "malformed block type");
        in.block.kind = BlockType::Index;
        in.block.index = static_cast<uint32_t>(idx);
      }
      break;
    }
    case Imm::Label:
    case Imm::Func:
    case Imm::Local:
    case Imm::Global:
    case Imm::Table:
    case Imm::Data:
    case Imm::Elem: WW_TRY(read_index(r, in.a)); break;
    case Imm::LabelTable: {
      WW_ASSIGN_OR_RETURN(uint32_t n, r.u32());
      // Each target takes at least one byte: a count past the remaining bytes
      // is malformed and must not drive a huge allocation.
      if (n > r.remaining()) return r.error("unexpected end");
      in.targets.resize(size_t(n) + 1);
      for (uint32_t i = 0; i <= n; ++i) WW_TRY(read_index(r, in.targets[i]));
      break;
    }
    case Imm::CallIndirect:
      WW_TRY(read_index(r, in.a));
      WW_TRY(read_index(r, in.b));
      break;
    case Imm::SelectT: {
      WW_ASSIGN_OR_RETURN(uint32_t n, r.u32());
      if (n > r.remaining()) return r.error("unexpected end");
      in.select_types.resize(n);
      for (uint32_t i = 0; i < n; ++i) {
        WW_ASSIGN_OR_RETURN(in.select_types[i], read_valtype(r));
      }
      break;
    }
    case Imm::Mem:
    case Imm::MemLane: {
      WW_TRY(read_index(r, in.a));
      WW_ASSIGN_OR_RETURN(uint32_t off, r.u32());
      in.imm = off;
      if (info.imm == Imm::MemLane) {
        WW_ASSIGN_OR_RETURN(in.lane, r.u8());
      }
      break;
    }
    case Imm::Lane: {
      WW_ASSIGN_OR_RETURN(in.lane, r.u8());
      break;
    }
    case Imm::V128Const:
    case Imm::Shuffle:
      for (uint8_t& byte : in.bytes) {
        WW_ASSIGN_OR_RETURN(byte, r.u8());
      }
      break;
    case Imm::MemIdx: WW_TRY(read_zero_byte(r, in.a)); break;
    case Imm::I32: {
      WW_ASSIGN_OR_RETURN(int32_t v, r.s32());
      in.imm = static_cast<uint64_t>(static_cast<int64_t>(v));
      break;
    }
    case Imm::I64: {
      WW_ASSIGN_OR_RETURN(int64_t v, r.s64());
      in.imm = static_cast<uint64_t>(v);
      break;
    }
    case Imm::F32: {
      WW_ASSIGN_OR_RETURN(uint32_t bits, r.f32_bits());
      in.imm = bits;
      break;
    }
    case Imm::F64: {
      WW_ASSIGN_OR_RETURN(in.imm, r.f64_bits());
      break;
    }
    case Imm::RefType: {
      WW_ASSIGN_OR_RETURN(in.ref_type, read_reftype(r));
      break;
    }
    case Imm::MemoryInit:
      WW_TRY(read_index(r, in.a));
      WW_TRY(read_zero_byte(r, in.b));
      break;
    case Imm::MemoryCopy:
      WW_TRY(read_zero_byte(r, in.a));
      WW_TRY(read_zero_byte(r, in.b));
      break;
    case Imm::TableInit:
    case Imm::TableCopy:
      WW_TRY(read_index(r, in.a));
      WW_TRY(read_index(r, in.b));
      break;
  }
  return Status::Ok();
}

}  // namespace ww
