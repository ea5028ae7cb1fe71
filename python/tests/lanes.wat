;; v128 arguments and results (16 bytes each, as in memory).
(module
  (func (export "add_lanes") (param $v v128) (param $k i32) (result v128)
    (i32x4.add (local.get $v) (i32x4.splat (local.get $k))))
  (func (export "sum") (param $v v128) (result i32)
    (i32.add (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
             (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v))))))
