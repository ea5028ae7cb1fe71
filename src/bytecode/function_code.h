// A function's place and frame in the bytecode. Plain enough for device
// code and NVRTC: generated code and the GPU kernels read these records.
#pragma once

#include <stdint.h>

namespace ww {

struct FunctionCode {
  uint32_t code_begin = 0;  // word index into BytecodeModule::code
  uint32_t code_end = 0;    // one past the last word
  uint32_t type_index = 0;
  uint32_t num_params = 0;
  uint32_t num_results = 0;
  uint32_t num_locals = 0;   // params + declared locals
  uint32_t frame_slots = 0;  // total slots the frame needs
};

}  // namespace ww
