;; Host imports: WASI fd_write, which on the GPU leaves for the host (the
;; caller saves its frame and the next launch rewinds into the call), and
;; a `gpu` intrinsic, which runs inline. The chain `main` -> `say` -> fd_write
;; puts the leave/resume code in two functions.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "gpu" "get_thread_id" (func $thread_id (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "hello, golden\n")
  (func $say (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
  (func (export "main") (result i32) (local $rc i32)
    (local.set $rc (call $say (i32.const 64) (i32.const 14)))
    (i32.add (local.get $rc) (call $thread_id))))
