/* Guest (d): a divergent integer workload. Instance i counts the Collatz
 * steps of base + i, so neighbouring GPU threads run loops of very
 * different lengths. */
#include "algos.h"

__attribute__((export_name("collatz"))) int collatz(long long base, int index) {
  return collatz_steps((bu64)base + (bu64)(bu32)index);
}
