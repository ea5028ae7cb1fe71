;; The batch hashing use case: each instance hashes one 64-byte message that
;; --mem-in places at input_ptr() and leaves the 8-byte FNV-1a hash at
;; output_ptr() for --mem-out; the hash is also returned.
(module
  (memory (export "memory") 1)
  (func (export "input_ptr") (result i32) i32.const 1024)
  (func (export "output_ptr") (result i32) i32.const 4096)
  (func (export "hash") (result i64)
    (local $i i32) (local $h i64)
    i64.const 0xcbf29ce484222325 local.set $h
    (block $done
      (loop $next
        local.get $i i32.const 64 i32.ge_u br_if $done
        local.get $h
        local.get $i i32.const 1024 i32.add i64.load8_u
        i64.xor i64.const 0x100000001b3 i64.mul local.set $h
        local.get $i i32.const 1 i32.add local.set $i
        br $next))
    i32.const 4096 local.get $h i64.store
    local.get $h)
  ;; Keeps its argument as the output address for out_ptr(), read after the
  ;; call, and stores addr+256 there when it is in bounds: so one instance can
  ;; be given an out-of-bounds output address while the others produce data.
  (global $out (mut i32) (i32.const 0))
  (func (export "set_out") (param i32) (result i32)
    local.get 0 global.set $out
    local.get 0 i32.const 65528 i32.le_u
    if
      local.get 0 local.get 0 i64.extend_i32_u i64.const 256 i64.add i64.store
    end
    local.get 0)
  (func (export "out_ptr") (result i32) global.get $out))
