;; v128: each value takes two slots (low and high words); loads, stores,
;; lane arithmetic, shuffles, lane extraction and a v128 global.
(module
  (memory 1)
  (global $bias (mut v128) (v128.const i32x4 1 2 3 4))
  (func (export "saxpy4") (param $a f32) (param $x i32) (param $y i32)
    (v128.store (local.get $y)
      (f32x4.add (f32x4.mul (f32x4.splat (local.get $a)) (v128.load (local.get $x)))
                 (v128.load (local.get $y)))))
  (func (export "dot") (param $p i32) (result i32) (local $v v128)
    (local.set $v (i32x4.add (i32x4.mul (v128.load (local.get $p)) (v128.load offset=16 (local.get $p)))
                             (global.get $bias)))
    (local.set $v (i32x4.add (local.get $v) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
    (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v))))
  (func (export "rebias") (param $k i32)
    (global.set $bias (i32x4.replace_lane 3 (i8x16.swizzle (global.get $bias) (i8x16.splat (local.get $k))) (local.get $k))))
  (func (export "any_negative") (param $p i32) (result i32)
    (v128.any_true (i16x8.lt_s (v128.load (local.get $p)) (v128.const i16x8 0 0 0 0 0 0 0 0)))))
