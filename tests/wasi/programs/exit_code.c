// proc_exit from deep inside the program, with a code from argv.
#include <stdio.h>
#include <stdlib.h>
static void leave(int depth, int code) {
  if (depth == 0) {
    printf("leaving with %d\n", code);
    fflush(stdout);
    exit(code);
  }
  leave(depth - 1, code);
}
int main(int argc, char** argv) {
  leave(50, argc > 1 ? atoi(argv[1]) : 0);
  printf("not reached\n");
  return 9;
}
