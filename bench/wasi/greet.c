// A small WASI program for batch benchmarks: reads its argument, does a
// little work, prints two lines.
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 0, h = 1469598103934665603ul;
  for (int k = 0; k < 1000; ++k) h = (h ^ (n + k)) * 1099511628211ul;
  printf("instance %lu\n", n);
  printf("hash %016lx\n", h);
  return 0;
}
