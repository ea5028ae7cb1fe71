// One Monte Carlo path of a European call option under geometric Brownian
// motion: the discounted payoff of path `path` at volatility `sigma`.
// Paths draw from a counter-based generator (splitmix64 of the path's
// index), so any instance can compute any path, in any order.
//   clang --target=wasm32-wasi -O2 -nostartfiles -Wl,--no-entry option.c -lm -o option.wasm
#include <math.h>
#include <stdint.h>

#define S0 100.0  // spot
#define STRIKE 105.0
#define RATE 0.03  // risk-free rate
#define YEARS 1.0

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1): 53 random bits, shifted off zero.
static double uniform(uint64_t k) { return ((double)(splitmix64(k) >> 11) + 0.5) * 0x1.0p-53; }

__attribute__((export_name("payoff"))) double payoff(int64_t path, double sigma) {
  const double u1 = uniform(2 * (uint64_t)path), u2 = uniform(2 * (uint64_t)path + 1);
  const double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);  // Box-Muller
  const double st = S0 * exp((RATE - 0.5 * sigma * sigma) * YEARS + sigma * sqrt(YEARS) * z);
  return exp(-RATE * YEARS) * (st > STRIKE ? st - STRIKE : 0.0);
}
