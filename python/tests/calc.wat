(module
  (func (export "collatz_steps") (param $n i64) (result i32)
    (local $steps i32)
    (block $done
      (loop $l
        (br_if $done (i64.le_u (local.get $n) (i64.const 1)))
        (local.set $n (if (result i64) (i64.eqz (i64.and (local.get $n) (i64.const 1)))
          (then (i64.shr_u (local.get $n) (i64.const 1)))
          (else (i64.add (i64.mul (local.get $n) (i64.const 3)) (i64.const 1)))))
        (local.set $steps (i32.add (local.get $steps) (i32.const 1)))
        (br $l)))
    (local.get $steps))
  (func (export "affine") (param $a f64) (param $x f32) (param $i i32) (result f64)
    (f64.add (f64.mul (local.get $a) (f64.promote_f32 (local.get $x))) (f64.convert_i32_s (local.get $i))))
  (func (export "divmod") (param i32 i32) (result i32 i32)
    (i32.div_s (local.get 0) (local.get 1)) (i32.rem_s (local.get 0) (local.get 1)))
  (func (export "spin") (param i32) (result i32) (loop $l (br $l)) (i32.const 0))
  (func (export "nothing")))
