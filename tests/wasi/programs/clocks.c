// Clocks, sleeping and random bytes: only what every correct host prints
// (checked against clocks.expected).
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(void) {
  struct timespec a, b, res, real;
  clock_gettime(CLOCK_MONOTONIC, &a);
  struct timespec nap = {0, 2000000};
  nanosleep(&nap, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  long long ns = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
  printf("slept at least 2 ms: %d\n", ns >= 2000000);
  clock_gettime(CLOCK_REALTIME, &real);
  printf("realtime after 2020: %d\n", real.tv_sec > 1577836800);
  printf("resolution positive: %d\n", clock_getres(CLOCK_MONOTONIC, &res) == 0 && (res.tv_sec > 0 || res.tv_nsec > 0));
  struct timespec cpu;
  printf("process cpu time: %d\n", clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0);
  unsigned char r1[32], r2[32], zero[32] = {0};
  getentropy(r1, 32);
  getentropy(r2, 32);
  printf("random differs: %d, not zero: %d\n", memcmp(r1, r2, 32) != 0, memcmp(r1, zero, 32) != 0);
  return 0;
}
