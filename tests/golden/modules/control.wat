;; Structured control flow: block, loop, br_if, br_table and if/else become
;; labels, gotos and a switch; a branch back to a loop is a back-edge.
(module
  (func (export "sum_to") (param $n i32) (result i32) (local $acc i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc (i32.add (local.get $acc) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $acc))
  (func (export "classify") (param $k i32) (result i32)
    (block $other
      (block $two
        (block $one
          (block $zero
            (br_table $zero $one $two $other (local.get $k)))
          (return (i32.const 100)))
        (return (i32.const 101)))
      (return (i32.const 102)))
    (i32.const -1))
  (func (export "sign") (param $x i64) (result i32)
    (if (result i32) (i64.lt_s (local.get $x) (i64.const 0))
      (then (i32.const -1))
      (else
        (if (result i32) (i64.eqz (local.get $x))
          (then (i32.const 0))
          (else (i32.const 1))))))
  (func (export "collatz") (param $n i64) (result i32) (local $steps i32)
    (loop $again
      (if (i64.ne (local.get $n) (i64.const 1))
        (then
          (local.set $steps (i32.add (local.get $steps) (i32.const 1)))
          (local.set $n
            (if (result i64) (i64.eqz (i64.and (local.get $n) (i64.const 1)))
              (then (i64.shr_u (local.get $n) (i64.const 1)))
              (else (i64.add (i64.mul (local.get $n) (i64.const 3)) (i64.const 1)))))
          (br $again))))
    (local.get $steps)))
