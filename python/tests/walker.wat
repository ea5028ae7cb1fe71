(module
  (memory 1)
  (global $g (mut i64) (i64.const 0))
  (func (export "init") (param $seed i64)
    (global.set $g (local.get $seed))
    (i64.store (i32.const 8) (i64.const 0)))
  ;; instance 3 (g == 3 on entry) divides by zero
  (func $step (export "step") (param $d i64)
    (if (i64.eq (global.get $g) (i64.const 3)) (then (drop (i64.div_s (i64.const 1) (i64.const 0)))))
    (global.set $g (i64.add (global.get $g) (local.get $d)))
    (i64.store (i32.const 8) (i64.add (i64.load (i32.const 8)) (i64.const 1))))
  ;; k back-edges
  (func (export "spin") (param $k i32)
    (loop $l (br_if $l (local.tee $k (i32.sub (local.get $k) (i32.const 1))))))
  (func (export "result") (result i64 i64)
    (global.get $g) (i64.load (i32.const 8))))
