// Runs fn(0) .. fn(count - 1) on up to one thread per core, each thread
// taking the next index as it finishes one: for a handful of long,
// uneven jobs (compiling a module's units), not for fine-grained loops:
// short copies around a batch use host_workers.h, whose threads stay (and
// which a long compile must not hold while a batch waits to copy).
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "common/cores.h"

namespace ww {

template <class Fn>
void parallel_for(size_t count, Fn&& fn) {
  std::mutex mu;
  size_t next = 0;
  const size_t jobs = std::max<size_t>(1, std::min<size_t>(count, usable_cores()));
  std::vector<std::thread> pool;
  for (size_t w = 0; w < jobs; ++w)
    pool.emplace_back([&] {
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> g(mu);
          if (next >= count) return;
          i = next++;
        }
        fn(i);
      }
    });
  for (auto& t : pool) t.join();
}

}  // namespace ww
