/* A small C module as clang builds it by default (a 64 KiB shadow stack at
 * the bottom of memory, so 2 pages): each instance keeps a 64-byte array on
 * that stack and touches nothing else. wasmwarp's sparse memory gives each
 * instance only the chunk its stack frame lands in.
 *   clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry stack_mix.c
 *   cc -O2 -DNATIVE_MAIN stack_mix.c   (prints mix(i) as raw little-endian u32s) */
#include <stdint.h>

__attribute__((export_name("mix"))) uint32_t mix(uint32_t i) {
  volatile uint32_t buf[16];
  for (int k = 0; k < 16; k++) buf[k] = i * 2654435761u + (uint32_t)k;
  uint32_t h = 2166136261u;
  for (int k = 0; k < 16; k++) h = (h ^ buf[k]) * 16777619u;
  return h;
}

#ifdef NATIVE_MAIN
#include <stdio.h>
#include <stdlib.h>
/* stack_mix N: mix(0) .. mix(N-1), 4 bytes each, to stdout. */
int main(int argc, char** argv) {
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], 0, 10) : 16;
  static uint32_t block[1 << 16];
  for (uint32_t i = 0; i < n;) {
    uint32_t k = 0;
    for (; k < (1u << 16) && i < n; ++k, ++i) block[k] = mix(i);
    fwrite(block, 4, k, stdout);
  }
  return 0;
}
#endif
