;; Integer and float arithmetic on parameters and locals: slots become
;; C++ locals, constants fold into immediate forms, local.set/tee fuse into
;; their producers, and float results are canonicalised only where a NaN's
;; bits can be seen.
(module
  (func (export "mix32") (param $a i32) (param $b i32) (result i32) (local $t i32)
    (local.set $t (i32.add (local.get $a) (i32.const 7)))
    (local.set $t (i32.xor (i32.mul (local.get $t) (local.get $b)) (i32.shl (local.get $a) (i32.const 3))))
    (i32.sub (i32.rotl (local.get $t) (local.get $b)) (i32.clz (local.get $a))))
  (func (export "mix64") (param $a i64) (param $b i64) (result i64)
    (i64.or (i64.shr_u (local.get $a) (i64.const 17))
            (i64.and (i64.mul (local.get $a) (local.get $b)) (i64.const 0xff00ff00ff00ff00))))
  (func (export "hypot") (param $x f64) (param $y f64) (result f64)
    (f64.sqrt (f64.add (f64.mul (local.get $x) (local.get $x)) (f64.mul (local.get $y) (local.get $y)))))
  (func (export "bits") (param $x f32) (param $y f32) (result i32)
    (i32.reinterpret_f32 (f32.neg (f32.add (local.get $x) (local.get $y)))))
  (func (export "convert") (param $x i32) (result f32) (local $d f64)
    (local.set $d (f64.convert_i32_s (local.get $x)))
    (f32.demote_f64 (f64.div (local.get $d) (f64.const 3))))
  (func (export "pick") (param $a i32) (param $b i32) (param $c i32) (result i32)
    (select (local.get $a) (local.get $b) (i32.lt_s (local.get $c) (i32.const 0)))))
