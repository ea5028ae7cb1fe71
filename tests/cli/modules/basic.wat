;; Exports for argument parsing, result printing and traps.
(module
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "add64") (param i64 i64) (result i64) local.get 0 local.get 1 i64.add)
  (func (export "div") (param i32 i32) (result i32) local.get 0 local.get 1 i32.div_s)
  (func (export "f32id") (param f32) (result f32) local.get 0)
  (func (export "f64id") (param f64) (result f64) local.get 0)
  (func (export "fneg") (param f32) (result f32) local.get 0 f32.neg)
  (func (export "mixed") (param i32 f64) (result i32 f64 i64)
    local.get 0 local.get 1 local.get 0 i64.extend_i32_s)
  (func (export "pair") (param i32) (result i32 i32) local.get 0 local.get 0 i32.const 1 i32.add)
  (func (export "nothing"))
  (func (export "boom") (result i32) unreachable)
  (func (export "load") (param i32) (result i32) local.get 0 i32.load)
  ;; Traps with "integer divide by zero" for odd indices only.
  (func (export "odd_traps") (param i32) (result i32)
    i32.const 100 i32.const 1 local.get 0 i32.const 1 i32.and i32.sub i32.div_u)
  ;; Global state: each instance must start from its own fresh global.
  (func (export "bump") (result i32)
    global.get $g i32.const 1 i32.add global.set $g global.get $g)
  (func (export "ext") (param externref) (result externref) local.get 0)
  (func (export "nullfunc") (result funcref) ref.null func)
  (func (export "spin") (loop br 0))
  (func $fib (export "fib") (param i32) (result i32)
    local.get 0 i32.const 2 i32.lt_u
    if (result i32) local.get 0
    else local.get 0 i32.const 1 i32.sub call $fib local.get 0 i32.const 2 i32.sub call $fib i32.add end)
  (table 1 funcref)
  (export "table" (table 0))
)
