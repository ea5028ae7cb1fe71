;; A WASI command that also imports a notification hook nothing provides.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "env" "notify" (func $notify (param i32) (result i32)))
  (memory (export "memory") 1)
  ;; exit(3 + notify(7)): 3 when the hook returns zero
  (func (export "_start") (call $exit (i32.add (i32.const 3) (call $notify (i32.const 7))))))
