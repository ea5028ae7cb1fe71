;; Instance i paints pixel (i % 40, i / 40) of a 40x25 canvas with a colour
;; made of its index (gpu.set_pixel); under mpirun each rank paints its own
;; instances' pixels and rank 0 writes the merged canvas.
(module
  (import "gpu" "set_pixel" (func $set_pixel (param i32 i32 f32 f32 f32 f32)))
  (func (export "paint") (param $i i32)
    (call $set_pixel
      (i32.rem_u (local.get $i) (i32.const 40))
      (i32.div_u (local.get $i) (i32.const 40))
      (f32.div (f32.convert_i32_u (i32.rem_u (local.get $i) (i32.const 7))) (f32.const 6))
      (f32.div (f32.convert_i32_u (i32.rem_u (local.get $i) (i32.const 13))) (f32.const 12))
      (f32.const 0.5)
      (f32.const 1))))
