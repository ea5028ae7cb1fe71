// The cores this process may run on: its CPU affinity, which a launcher
// may narrow (mpirun binds each of two ranks to one core by default,
// taskset, Slurm's --cpus-per-task), not the machine's count that
// std::thread::hardware_concurrency gives. Sixteen workers on the one core
// a rank is bound to make its host-side copies several times slower, not
// faster.
#pragma once

namespace ww {

unsigned usable_cores();  // at least 1

}  // namespace ww
