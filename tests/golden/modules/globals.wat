;; Globals (mutable and not, of each type; the GPU kernel loads the ones
;; the code reads and stores back the ones it sets) and a table of
;; references filled by an element segment: table.get/set/size/grow,
;; ref.null, ref.is_null.
(module
  (global $counter (mut i32) (i32.const 0))
  (global $scale f64 (f64.const 2.5))
  (global $total (export "total") (mut i64) (i64.const 0))
  (global $unused (mut f32) (f32.const 0))
  (table $t 2 8 funcref)
  (elem (table $t) (i32.const 1) func $tick)
  (func $tick (export "tick") (result i32)
    (global.set $counter (i32.add (global.get $counter) (i32.const 1)))
    (global.get $counter))
  (func (export "accumulate") (param $x i64) (result f64)
    (global.set $total (i64.add (global.get $total) (local.get $x)))
    (f64.mul (f64.convert_i64_s (global.get $total)) (global.get $scale)))
  (func (export "install") (param $i i32) (result i32)
    (table.set $t (local.get $i) (table.get $t (i32.const 0)))
    (table.size $t))
  (func (export "is_empty") (param $i i32) (result i32)
    (ref.is_null (table.get $t (local.get $i))))
  (func (export "extend") (param $n i32) (result i32)
    (table.grow $t (ref.null func) (local.get $n))))
