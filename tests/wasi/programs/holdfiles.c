// Opens one file N times (argv[1]) and keeps every descriptor open: a
// program that holds many files at once, for tests/wasi/gpu-compare.sh's
// case of a process out of descriptors. Prints how many opens succeeded.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 8;
  int ok = 0;
  for (int i = 0; i < n; ++i) ok += open("data/sub/nested.txt", O_RDONLY) >= 0;
  printf("%d of %d open\n", ok, n);
  return 0;
}
