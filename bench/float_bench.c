/* Float benchmark: n-body, spectral norm and a Mandelbrot count, all in f64
 * (the n-body energy also in f32). `run()` returns a checksum over the exact
 * bit patterns, so the wasm result must equal the native one bit for bit:
 * WebAssembly float arithmetic is IEEE-754 with round-to-nearest, like the
 * native build with -ffp-contract=off (no FMA contraction).
 * SCALE sets the work (bench default 4; the ctest uses 1). */
#include "ww_guest.h"

#ifndef SCALE
#define SCALE 4
#endif

#define PI 3.141592653589793
#define SOLAR_MASS (4 * PI * PI)
#define DAYS_PER_YEAR 365.24
#define NBODIES 5

typedef struct {
  double x, y, z, vx, vy, vz, mass;
} Body;

static Body bodies[NBODIES];

static void nbody_init(void) {
  static const Body init[NBODIES] = {{0, 0, 0, 0, 0, 0, SOLAR_MASS},
                                     {4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
                                      1.66007664274403694e-03 * DAYS_PER_YEAR, 7.69901118419740425e-03 * DAYS_PER_YEAR,
                                      -6.90460016972063023e-05 * DAYS_PER_YEAR, 9.54791938424326609e-04 * SOLAR_MASS},
                                     {8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
                                      -2.76742510726862411e-03 * DAYS_PER_YEAR, 4.99852801234917238e-03 * DAYS_PER_YEAR,
                                      2.30417297573763929e-05 * DAYS_PER_YEAR, 2.85885980666130812e-04 * SOLAR_MASS},
                                     {1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
                                      2.96460137564761618e-03 * DAYS_PER_YEAR, 2.37847173959480950e-03 * DAYS_PER_YEAR,
                                      -2.96589568540237556e-05 * DAYS_PER_YEAR, 4.36624404335156298e-05 * SOLAR_MASS},
                                     {1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
                                      2.68067772490389322e-03 * DAYS_PER_YEAR, 1.62824170038242295e-03 * DAYS_PER_YEAR,
                                      -9.51592254519715870e-05 * DAYS_PER_YEAR, 5.15138902046611451e-05 * SOLAR_MASS}};
  for (int i = 0; i < NBODIES; i++) bodies[i] = init[i];
  double px = 0, py = 0, pz = 0;
  for (int i = 0; i < NBODIES; i++) {
    px += bodies[i].vx * bodies[i].mass;
    py += bodies[i].vy * bodies[i].mass;
    pz += bodies[i].vz * bodies[i].mass;
  }
  bodies[0].vx = -px / SOLAR_MASS;
  bodies[0].vy = -py / SOLAR_MASS;
  bodies[0].vz = -pz / SOLAR_MASS;
}

static void nbody_advance(double dt) {
  for (int i = 0; i < NBODIES; i++) {
    Body* a = &bodies[i];
    for (int j = i + 1; j < NBODIES; j++) {
      Body* b = &bodies[j];
      double dx = a->x - b->x, dy = a->y - b->y, dz = a->z - b->z;
      double d2 = dx * dx + dy * dy + dz * dz;
      double mag = dt / (d2 * ww_sqrt(d2));
      a->vx -= dx * b->mass * mag;
      a->vy -= dy * b->mass * mag;
      a->vz -= dz * b->mass * mag;
      b->vx += dx * a->mass * mag;
      b->vy += dy * a->mass * mag;
      b->vz += dz * a->mass * mag;
    }
  }
  for (int i = 0; i < NBODIES; i++) {
    bodies[i].x += dt * bodies[i].vx;
    bodies[i].y += dt * bodies[i].vy;
    bodies[i].z += dt * bodies[i].vz;
  }
}

static double nbody_energy(void) {
  double e = 0;
  for (int i = 0; i < NBODIES; i++) {
    Body* a = &bodies[i];
    e += 0.5 * a->mass * (a->vx * a->vx + a->vy * a->vy + a->vz * a->vz);
    for (int j = i + 1; j < NBODIES; j++) {
      Body* b = &bodies[j];
      double dx = a->x - b->x, dy = a->y - b->y, dz = a->z - b->z;
      e -= a->mass * b->mass / ww_sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  return e;
}

/* f32 path: the same energy accumulated in single precision, to exercise
 * f32 arithmetic and f64 -> f32 demotion. */
static float nbody_energy_f32(void) {
  float e = 0;
  for (int i = 0; i < NBODIES; i++) {
    float m = (float)bodies[i].mass;
    float vx = (float)bodies[i].vx, vy = (float)bodies[i].vy, vz = (float)bodies[i].vz;
    e += 0.5f * m * (vx * vx + vy * vy + vz * vz);
  }
  return e;
}

#define SN 200
static double su[SN], sv[SN], stmp[SN];

static double eval_a(int i, int j) { return 1.0 / ((i + j) * (i + j + 1) / 2 + i + 1); }

static void mul_av(const double* v, double* out) {
  for (int i = 0; i < SN; i++) {
    double s = 0;
    for (int j = 0; j < SN; j++) s += eval_a(i, j) * v[j];
    out[i] = s;
  }
}

static void mul_atv(const double* v, double* out) {
  for (int i = 0; i < SN; i++) {
    double s = 0;
    for (int j = 0; j < SN; j++) s += eval_a(j, i) * v[j];
    out[i] = s;
  }
}

static double spectral_norm(void) {
  for (int i = 0; i < SN; i++) su[i] = 1;
  for (int k = 0; k < 10; k++) {
    mul_av(su, stmp);
    mul_atv(stmp, sv);
    mul_av(sv, stmp);
    mul_atv(stmp, su);
  }
  double vbv = 0, vv = 0;
  for (int i = 0; i < SN; i++) {
    vbv += su[i] * sv[i];
    vv += sv[i] * sv[i];
  }
  return ww_sqrt(vbv / vv);
}

static uint64_t mandel(int size, int max_iter) {
  uint64_t inside = 0, iters = 0;
  for (int py = 0; py < size; py++) {
    double ci = 2.0 * py / size - 1.0;
    for (int px = 0; px < size; px++) {
      double cr = 2.5 * px / size - 2.0;
      double zr = 0, zi = 0;
      int k = 0;
      while (k < max_iter && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        k++;
      }
      iters += (uint64_t)k;
      if (k == max_iter) inside++;
    }
  }
  return ww_mix(inside, iters);
}

WW_EXPORT("run") int64_t run(void) {
  uint64_t h = 0;
  nbody_init();
  h = ww_mix(h, ww_f64_bits(nbody_energy()));
  for (int s = 0; s < SCALE * 50000; s++) nbody_advance(0.01);
  h = ww_mix(h, ww_f64_bits(nbody_energy()));
  h = ww_mix(h, (uint64_t)ww_f64_bits((double)nbody_energy_f32()));
  for (int r = 0; r < SCALE; r++) h = ww_mix(h, ww_f64_bits(spectral_norm()));
  h = ww_mix(h, mandel(128 * SCALE, 200));
  return (int64_t)(h & 0x7FFFFFFFFFFFFFFFULL);
}

#ifdef WW_NATIVE_MAIN
#include <stdio.h>
int main(void) {
  printf("%lld\n", (long long)run());
  return 0;
}
#endif
