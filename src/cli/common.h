// Small helpers shared by the CLI commands.
#pragma once

#include <cstdio>
#include <string>

#include "cli/mpi_world.h"
#include "common/result.h"

namespace ww::cli {

// The one error line every failure prints (under mpirun, saying which rank).
inline void print_error(const std::string& msg) {
  if (mpi_world().active()) std::fprintf(stderr, "wasmwarp: error: rank %d: %s\n", mpi_world().rank, msg.c_str());
  else std::fprintf(stderr, "wasmwarp: error: %s\n", msg.c_str());
}

}  // namespace ww::cli
