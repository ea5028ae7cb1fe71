/* Guest (c): each instance prices a European call by Monte Carlo in f64
 * from its own random stream (seed = its index, passed as @index). */
#include "algos.h"

__attribute__((export_name("price"))) double price(int seed, int samples) { return mc_price((bu32)seed, samples); }
