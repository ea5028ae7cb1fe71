;; Imports nothing provides, called only on some paths
;; (Module(..., unknown_imports="trap" | "default")).
(module
  (import "env" "foo" (func $foo (param i32) (result i32)))
  (import "env" "f64s" (func $f64s (result f64)))
  ;; Odd instances call env.foo; even ones never do.
  (func (export "run") (param i32) (result i32)
    (if (result i32) (i32.and (local.get 0) (i32.const 1))
      (then (call $foo (local.get 0)))
      (else (i32.add (local.get 0) (i32.const 1)))))
  (func (export "f64") (result f64) (call $f64s)))
