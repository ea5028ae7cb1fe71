// --output files of `wasmwarp run`: one row per instance.
#pragma once

#include "batch/batch.h"
#include "cli/io_formats.h"

namespace ww::cli {

enum class OutFormat { None, Csv, Json, Npy };

// numpy's descr of a result type, or null for types .npy cannot hold.
const char* npy_descr(ValType t);

// Writes every instance's results (or its trap) to `out`; for .npy with
// --allow-traps, `trap_file` gets the trap codes.
Status write_results(const batch::BatchResult& r, const Module& m, OutFormat fmt, AtomicFile& out,
                     AtomicFile* trap_file);

}  // namespace ww::cli
