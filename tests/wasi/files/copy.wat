;; gpu.read_file and gpu.write_file over --dir / --dir-rw: `copy` reads
;; in/data.txt, appends the instance's index digit and writes it to
;; out/copy.txt (its own directory per instance), returning the bytes read;
;; `escape` reads a path that leaves its preopen, `readonly` writes beneath
;; a read-only one: both -76 (ENOTCAPABLE).
(module
  (import "gpu" "read_file" (func $read (param i32 i32 i32) (result i32)))
  (import "gpu" "write_file" (func $write (param i32 i32 i32) (result i32)))
  (import "gpu" "get_thread_id" (func $tid (result i32)))
  (memory 1)
  (data (i32.const 0) "in/data.txt\00")
  (data (i32.const 32) "out/copy.txt\00")
  (data (i32.const 64) "in/../x\00")
  (data (i32.const 96) "in/w.txt\00")
  (func (export "copy") (result i32)
    (local $n i32)
    (local.set $n (call $read (i32.const 0) (i32.const 256) (i32.const 100)))
    (i32.store8 (i32.add (i32.const 256) (local.get $n)) (i32.add (i32.const 48) (call $tid)))
    (drop (call $write (i32.const 32) (i32.const 256) (i32.add (local.get $n) (i32.const 1))))
    (local.get $n))
  (func (export "escape") (result i32) (call $read (i32.const 64) (i32.const 256) (i32.const 10)))
  (func (export "readonly") (result i32) (call $write (i32.const 96) (i32.const 256) (i32.const 1))))
