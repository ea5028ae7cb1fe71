/* wasmwarp guest SDK for C and C++: the `gpu` import module.
 *
 * Build a guest with clang's wasm32 target, e.g.
 *   clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry -I sdk/c prog.c -o prog.wasm
 * and export entry points with WW_EXPORT("main").
 *
 * gpu.texture_sample returns four f32 values (a multi-value result). C can
 * only declare that import under clang's experimental multi-value ABI:
 *   -mmultivalue -Xclang -target-abi -Xclang experimental-mv
 * Without those flags ww_texture_sample is marked unavailable (clang would lower a struct return to a hidden pointer
 * argument, giving an import of type (i32, i32, f32, f32) -> () that wasmwarp rejects). The target-abi flag cannot be
 * detected by the preprocessor; -mmultivalue (which defines __wasm_multivalue__) is what this header checks, so pass
 * both.
 *
 * clang 14 (Debian 12) crashes in its WebAssembly register stackifier when
 * a function that receives a multi-value call result is optimised. The
 * wrapper below is therefore `optnone` and not inlined: it is compiled
 * without optimisation even in an -O2 build, and the rest of the program is
 * optimised normally. The wrapper's own signature has no struct return, so
 * its ABI is the same under either target-abi.
 */
#ifndef WASMWARP_H
#define WASMWARP_H

#ifdef __cplusplus
extern "C" {
#endif

#define WW_GPU_IMPORT(name) __attribute__((import_module("gpu"), import_name(name)))
#define WW_EXPORT(name) __attribute__((export_name(name)))

/* The instance index, 0 .. instance_count()-1. */
WW_GPU_IMPORT("get_thread_id") int ww_thread_id(void);
WW_GPU_IMPORT("instance_count") int ww_instance_count(void);
/* Seconds since the batch started. */
WW_GPU_IMPORT("get_time") float ww_time(void);
/* Channels 0..1, clamped, NaN -> 0; pixels outside the image are ignored
 * (and counted by the host). */
WW_GPU_IMPORT("set_pixel") void ww_set_pixel(int x, int y, float r, float g, float b, float a);
/* The batch's shared state buffer; an index out of range traps
 * ("state index out of range"). atomic_add returns the old value and wraps. */
WW_GPU_IMPORT("read_state") int ww_read_state(int idx);
WW_GPU_IMPORT("write_state") void ww_write_state(int idx, int val);
WW_GPU_IMPORT("atomic_add") int ww_atomic_add(int idx, int val);

typedef struct ww_rgba {
  float r, g, b, a;
} ww_rgba;

#if defined(__wasm_multivalue__)
/* Raw import: only valid under -Xclang -target-abi -Xclang experimental-mv. */
WW_GPU_IMPORT("texture_sample") ww_rgba ww_texture_sample_raw(int unit, float u, float v);

/* Samples texture `unit` at (u, v) (0..1, clamp-to-edge; nearest or bilinear
 * as the host chose). An unbound unit traps ("texture unit not bound"). */
__attribute__((optnone, noinline)) static void ww_texture_sample_into(int unit, float u, float v, ww_rgba* out) {
  *out = ww_texture_sample_raw(unit, u, v);
}
__attribute__((always_inline)) static inline ww_rgba ww_texture_sample(int unit, float u, float v) {
  ww_rgba c;
  ww_texture_sample_into(unit, u, v, &c);
  return c;
}
#else
/* Declared only so that a use explains itself instead of being an implicit
 * declaration. */
ww_rgba ww_texture_sample(int unit, float u, float v) __attribute__((
    unavailable("gpu.texture_sample returns 4 values: compile with -mmultivalue -Xclang -target-abi -Xclang "
                "experimental-mv (see wasmwarp.h)")));
#endif

#ifdef __cplusplus
}
#endif

#endif /* WASMWARP_H */
