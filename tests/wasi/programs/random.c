// random_get's bytes, as hex: a batch with --seed repeats them, and its
// instances differ from each other.
#include <stdio.h>
#include <unistd.h>
int main(void) {
  unsigned char r[16];
  if (getentropy(r, sizeof r) != 0) return 1;
  for (int i = 0; i < 16; ++i) printf("%02x", r[i]);
  printf("\n");
  return 0;
}
