;; golden: cpu gpu gpu-sparse
;; Loads and stores of every width with their bounds checks, a data
;; segment, memory.size and memory.grow (which refreshes the memory the
;; code holds), and the bulk ops. Also generated for the GPU's sparse
;; layout, whose accesses try a cache of translations first.
(module
  (memory 1 4)
  (data (i32.const 16) "golden")
  (func (export "widths") (param $p i32) (result i64)
    (i32.store8 (local.get $p) (i32.const 0x81))
    (i32.store16 offset=2 (local.get $p) (i32.const 0x8002))
    (i64.store offset=8 (local.get $p) (i64.const -3))
    (f32.store offset=16 (local.get $p) (f32.const 1.5))
    (i64.add
      (i64.add (i64.load8_s (local.get $p)) (i64.load16_u offset=2 (local.get $p)))
      (i64.add (i64.load offset=8 (local.get $p)) (i64.extend_i32_u (i32.load offset=16 (local.get $p))))))
  (func (export "grow") (param $pages i32) (result i32) (local $old i32)
    (local.set $old (memory.grow (local.get $pages)))
    (if (i32.ge_s (local.get $old) (i32.const 0))
      (then (i32.store (i32.mul (memory.size) (i32.const 65532)) (local.get $old))))
    (local.get $old))
  (func (export "copy") (param $dst i32) (param $n i32)
    (memory.copy (local.get $dst) (i32.const 16) (local.get $n))
    (memory.fill (i32.add (local.get $dst) (local.get $n)) (i32.const 0) (i32.const 4)))
  (func (export "float_sum") (param $p i32) (param $n i32) (result f64) (local $s f64)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (f64.add (local.get $s) (f64.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $s)))
