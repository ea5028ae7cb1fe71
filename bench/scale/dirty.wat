;; Every instance must start from the module's image, whatever the wave
;; before it wrote: each call reads words that earlier instances in the
;; same slots overwrote (the data segment's 42, zeros elsewhere, a page
;; that memory.grow adds) and then writes over them. Run with small waves
;; (--gpu-max-wave) and compared with the CPU backend by gpu-check.sh.
(module
  (memory 2)
  (data (i32.const 16) "\2a\00\00\00")
  (func (export "probe") (param $i i32) (result i32)
    (local $sum i32)
    (local.set $sum
      (i32.add (i32.load (i32.const 16))
        (i32.add
          (i32.load (i32.add (i32.const 65536) (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2))))
          (i32.load (i32.shl (i32.and (local.get $i) (i32.const 1023)) (i32.const 2))))))
    (i32.store (i32.const 16) (local.get $i))
    (i32.store (i32.add (i32.const 65536) (i32.shl (i32.and (i32.add (local.get $i) (i32.const 7)) (i32.const 255)) (i32.const 2)))
               (i32.const -1))
    (i32.store8 (i32.and (i32.mul (local.get $i) (i32.const 13)) (i32.const 4095)) (i32.const 255))
    (drop (memory.grow (i32.const 1)))
    (local.set $sum (i32.add (local.get $sum)
      (i32.load (i32.add (i32.const 131072) (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2))))))
    (i32.store (i32.add (i32.const 131072) (i32.shl (i32.and (i32.add (local.get $i) (i32.const 3)) (i32.const 255)) (i32.const 2)))
               (i32.const -1))
    (i32.add (local.get $sum) (memory.size))))
