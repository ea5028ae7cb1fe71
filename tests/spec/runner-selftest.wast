;; Checks ww-spectest itself: every assertion marked WRONG below is false
;; and must fail; runner-selftest-failures.txt lists exactly those lines, so
;; the run passes only when the runner fails each wrong one and passes every
;; right one (a listed line that passes is an "unexpected pass").

(module $bits
  (func (export "f32") (param i32) (result f32) (f32.reinterpret_i32 (local.get 0)))
  (func (export "f64") (param i64) (result f64) (f64.reinterpret_i64 (local.get 0)))
  (func (export "ext") (param externref) (result externref) (local.get 0))
  (func (export "fn") (result funcref) (ref.func 0))
  (func (export "nullfn") (result funcref) (ref.null func))
  (func (export "pair") (result i32 i64) (i32.const -1) (i64.const -2))
  (func (export "div") (param i32) (result i32) (i32.div_s (i32.const 1) (local.get 0)))
  (func $deep (export "deep") (call $deep))
  (global (export "g") i64 (i64.const -1))
)
(assert_return (invoke "f32" (i32.const 0x7fc00000)) (f32.const nan:canonical))
(assert_return (invoke "f32" (i32.const 0xffc00000)) (f32.const nan:canonical))
(assert_return (invoke "f32" (i32.const 0x7fc00001)) (f32.const nan:canonical))  ;; WRONG
(assert_return (invoke "f32" (i32.const 0x7fc00001)) (f32.const nan:arithmetic))
(assert_return (invoke "f32" (i32.const 0xffe00000)) (f32.const nan:arithmetic))
(assert_return (invoke "f32" (i32.const 0x7fa00000)) (f32.const nan:arithmetic))  ;; WRONG
(assert_return (invoke "f32" (i32.const 0x3f800000)) (f32.const nan:arithmetic))  ;; WRONG
(assert_return (invoke "f32" (i32.const 0x3f800000)) (f32.const 1))
(assert_return (invoke "f32" (i32.const 0)) (f32.const -0))  ;; WRONG
(assert_return (invoke "f64" (i64.const 0x7ff8000000000000)) (f64.const nan:canonical))
(assert_return (invoke "f64" (i64.const 0xfff8000000000000)) (f64.const nan:canonical))
(assert_return (invoke "f64" (i64.const 0x7ff8000000000001)) (f64.const nan:canonical))  ;; WRONG
(assert_return (invoke "f64" (i64.const 0x7ffc000000000000)) (f64.const nan:arithmetic))
(assert_return (invoke "f64" (i64.const 0x7ff4000000000000)) (f64.const nan:arithmetic))  ;; WRONG
(assert_return (invoke "f64" (i64.const 0x400921fb54442d18)) (f64.const 0x1.921fb54442d18p+1))
(assert_return (invoke "ext" (ref.extern 0)) (ref.extern 0))
(assert_return (invoke "ext" (ref.extern 0)) (ref.extern 1))  ;; WRONG
(assert_return (invoke "ext" (ref.null extern)) (ref.null extern))
(assert_return (invoke "ext" (ref.null extern)) (ref.extern 0))  ;; WRONG
(assert_return (invoke "fn") (ref.func))
(assert_return (invoke "nullfn") (ref.func))  ;; WRONG
(assert_return (invoke "nullfn") (ref.null func))
(assert_return (invoke "fn") (ref.null func))  ;; WRONG
(assert_return (invoke "pair") (i32.const -1) (i64.const -2))
(assert_return (invoke "pair") (i32.const -1) (i64.const -1))  ;; WRONG
(assert_return (get "g") (i64.const -1))
(assert_return (get "g") (i64.const 1))  ;; WRONG
(assert_trap (invoke "div" (i32.const 0)) "integer divide by zero")
(assert_trap (invoke "div" (i32.const 0)) "integer divide")
(assert_trap (invoke "div" (i32.const 0)) "integer overflow")  ;; WRONG
(assert_trap (invoke "div" (i32.const 1)) "integer divide by zero")  ;; WRONG
(assert_return (invoke "div" (i32.const 0)) (i32.const 0))  ;; WRONG
(assert_exhaustion (invoke "deep") "call stack exhausted")
(invoke "div" (i32.const 1))
(invoke "div" (i32.const 0))  ;; WRONG

;; The spectest host module.
(module $host
  (import "spectest" "print_i32" (func $print (param i32)))
  (import "spectest" "global_i32" (global $gi i32))
  (import "spectest" "global_i64" (global $gl i64))
  (import "spectest" "global_f32" (global $gf f32))
  (import "spectest" "global_f64" (global $gd f64))
  (import "spectest" "table" (table 10 20 funcref))
  (import "spectest" "memory" (memory 1 2))
  (func (export "run") (result i32) (call $print (i32.const 7)) (global.get $gi))
  (func (export "gl") (result i64) (global.get $gl))
  (func (export "gf") (result f32) (global.get $gf))
  (func (export "gd") (result f64) (global.get $gd))
  (func (export "sizes") (result i32 i32) (table.size 0) (memory.size))
  (func (export "grow") (result i32) (memory.grow (i32.const 1)))
)
(assert_return (invoke "run") (i32.const 666))
(assert_return (invoke "gl") (i64.const 666))
(assert_return (invoke "gf") (f32.const 666.6))
(assert_return (invoke "gd") (f64.const 666.6))
(assert_return (invoke "sizes") (i32.const 10) (i32.const 1))
(assert_return (invoke "grow") (i32.const 1))
(assert_return (invoke "grow") (i32.const -1))
(assert_unlinkable (module (import "spectest" "print_i32" (func (param i64)))) "incompatible import type")
(assert_unlinkable (module (import "spectest" "nothing" (func))) "unknown import")
(assert_unlinkable (module (import "spectest" "table" (table 21 funcref))) "incompatible import type")
(assert_unlinkable (module (import "spectest" "print" (func))) "unknown import")  ;; WRONG

;; Registration and named modules.
(module $A (global (export "x") (mut i32) (i32.const 5))
  (func (export "set") (param i32) (global.set 0 (local.get 0))))
(register "A" $A)
(module $B (import "A" "x" (global $x (mut i32)))
  (func (export "get") (result i32) (global.get $x)))
(assert_return (invoke $A "set" (i32.const 9)))
(assert_return (invoke $B "get") (i32.const 9))
(assert_return (invoke $bits "div" (i32.const 1)) (i32.const 1))
(assert_return (invoke "get") (i32.const 5))  ;; WRONG

;; Modules that must not load.
(assert_trap (module (func $s unreachable) (start $s)) "unreachable")
(assert_trap (module (memory 1) (data (i32.const 65536) "a")) "out of bounds memory access")
(assert_trap (module (func $s) (start $s)) "unreachable")  ;; WRONG
(assert_invalid (module (func (result i32))) "type mismatch")
(assert_invalid (module (func (result i32) (i32.const 0))) "type mismatch")  ;; WRONG
(assert_malformed (module binary "\00asm\02\00\00\00") "unknown binary version")
(assert_malformed (module binary "\00asm\01\00\00\00") "unexpected end")  ;; WRONG
(assert_malformed (module quote "(func") "unexpected end")

;; A module that fails to load leaves no current module.
(module (func (export "f") (result i32) (i32.const 1)) (func $s unreachable) (start $s))  ;; WRONG
(assert_return (invoke "f") (i32.const 1))  ;; WRONG
