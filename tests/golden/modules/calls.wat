;; Direct calls (a static helper the compiler may inline, a recursive
;; function with its stack check), multiple results, and call_indirect
;; through a table: a switch over the compiled functions of the type.
(module
  (type $unop (func (param i32) (result i32)))
  (type $pair (func (param i32) (result i32 i32)))
  (table 4 funcref)
  (elem (i32.const 0) $double $square $negate $split)
  (func $double (type $unop) (i32.shl (local.get 0) (i32.const 1)))
  (func $square (type $unop) (i32.mul (local.get 0) (local.get 0)))
  (func $negate (type $unop) (i32.sub (i32.const 0) (local.get 0)))
  (func $split (type $pair) (i32.and (local.get 0) (i32.const 0xffff)) (i32.shr_u (local.get 0) (i32.const 16)))
  (func $inc (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else
        (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                 (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "inc_twice") (param i32) (result i32)
    (call $inc (call $inc (local.get 0))))
  (func (export "apply") (param $f i32) (param $x i32) (result i32)
    (call_indirect (type $unop) (local.get $x) (local.get $f)))
  (func (export "halves") (param $x i32) (result i32)
    (call_indirect (type $pair) (local.get $x) (i32.const 3))
    (i32.add)))
