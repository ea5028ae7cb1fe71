// What a WASI batch needs of the host's file system, checked before any
// instance runs: a batch whose stdout folder is missing would otherwise
// run to its end (or fail on its first instance) before it says so.
#pragma once

#include <cstdint>

#include "batch/batch.h"
#include "common/result.h"

namespace ww::batch {

// One line naming the option and the path at fault, or Ok:
// - --stdout/--stderr patterns: the folder of the first and the last
//   instance's file exists and may be written, the file is no folder, and
//   a batch of more than one instance has {i} in them (its instances
//   would write one file);
// - --stdin pattern: the first and the last instance's file can be read;
// - preopens: --dir folders exist and can be read; --dir-rw folders exist
//   or can be made (their nearest existing parent is a folder that may be
//   written).
// `first` and `n`: the batch's instances [first, first + n) (their {i}).
Status check_wasi_paths(const WasiBatch& w, uint64_t first, uint64_t n);

}  // namespace ww::batch
