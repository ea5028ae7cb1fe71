// A chain's guest (bench/chain): each instance is one particle, damped in a
// harmonic well and kicked by its own random noise. init(seed) starts it,
// step(dt) advances it kSubsteps times, result() reads its position. The
// state lives in linear memory at state_ptr(), so that a pipeline without
// resident instances can carry it from one batch to the next
// (--mem-out / --mem-in). Built natively with -DNATIVE, main() runs the
// same chain for the reference answers.
#include <stdint.h>

typedef struct {
  double x, v;
  uint64_t s;
} State;

enum { kSubsteps = 4 };

static State st;

#ifdef NATIVE
#define EXPORT(name)
#else
#define EXPORT(name) __attribute__((export_name(name)))
#endif

EXPORT("state_ptr") State* state_ptr(void) { return &st; }

EXPORT("init") void init(int64_t seed) {
  st.x = 0;
  st.v = 0;
  st.s = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
}

static double noise(void) {
  st.s ^= st.s << 13;
  st.s ^= st.s >> 7;
  st.s ^= st.s << 17;
  return (double)(st.s >> 11) * 0x1p-53 - 0.5;
}

EXPORT("step") void step(double dt) {
  for (int k = 0; k < kSubsteps; ++k) {
    double f = -st.x - 0.1 * st.v + noise();
    st.v += f * dt;
    st.x += st.v * dt;
  }
}

EXPORT("result") double result(void) { return st.x; }

#ifdef NATIVE
#include <stdio.h>
#include <stdlib.h>
// particle_ref N STEPS DT OUT: result() of instances 0..N-1 as raw f64.
int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: particle_ref N STEPS DT OUT\n");
    return 2;
  }
  long n = atol(argv[1]), steps = atol(argv[2]);
  double dt = atof(argv[3]);
  FILE* f = fopen(argv[4], "wb");
  if (!f) return 1;
  for (long i = 0; i < n; ++i) {
    init(i);
    for (long k = 0; k < steps; ++k) step(dt);
    double r = result();
    fwrite(&r, 8, 1, f);
  }
  return fclose(f) != 0;
}
#endif
