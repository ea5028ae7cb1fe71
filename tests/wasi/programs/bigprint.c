// Megabytes of output, in writes of every size.
#include <stdio.h>
int main(void) {
  unsigned x = 12345;
  for (int i = 0; i < 60000; ++i) {
    x = x * 1103515245u + 12345u;
    printf("%06d %.*s\n", i, (int)(x >> 26), "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ");
  }
  return 0;
}
