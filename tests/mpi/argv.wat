;; A WASI command that prints its argv's strings (NULs included) and a
;; newline, then exits with argc.
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 200) "\n")
  (func (export "_start")
    (drop (call $sizes (i32.const 0) (i32.const 4)))
    (drop (call $get (i32.const 16) (i32.const 256)))
    (i32.store (i32.const 100) (i32.const 256))
    (i32.store (i32.const 104) (i32.load (i32.const 4)))
    (i32.store (i32.const 108) (i32.const 200))
    (i32.store (i32.const 112) (i32.const 1))
    (drop (call $write (i32.const 1) (i32.const 100) (i32.const 2) (i32.const 120)))
    (call $exit (i32.load (i32.const 0)))))
