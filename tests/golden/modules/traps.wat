;; Ops that trap: integer division by zero and overflow, float-to-int
;; truncation out of range, unreachable, and a trap in a callee that
;; unwinds its caller. A trap records the function and the bytecode offset.
(module
  (func (export "div") (param $a i32) (param $b i32) (result i32)
    (i32.div_s (local.get $a) (local.get $b)))
  (func (export "rem64") (param $a i64) (param $b i64) (result i64)
    (i64.rem_u (local.get $a) (local.get $b)))
  (func (export "trunc") (param $x f64) (result i32)
    (i32.trunc_f64_s (local.get $x)))
  (func $fail (param $x i32) (result i32)
    (if (i32.eqz (local.get $x)) (then unreachable))
    (local.get $x))
  (func (export "checked") (param $x i32) (result i32)
    (i32.add (call $fail (local.get $x)) (i32.const 1)))
  (func (export "never") unreachable))
