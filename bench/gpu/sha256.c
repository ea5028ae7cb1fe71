/* Guest (b): SHA-256 of one 64-byte message per instance, no intrinsics.
 * The host writes the message at input_ptr() (wasmwarp run --mem-in
 * input_ptr=messages.bin), hash() digests it, and the host reads 32 bytes
 * at output_ptr() (--mem-out output_ptr:32=digests.bin). */
#include "algos.h"

static bu8 input[64];
static bu8 output[32];

__attribute__((export_name("input_ptr"))) int input_ptr(void) { return (int)(unsigned long)input; }
__attribute__((export_name("output_ptr"))) int output_ptr(void) { return (int)(unsigned long)output; }
__attribute__((export_name("hash"))) void hash(void) { sha256_64(input, output); }
