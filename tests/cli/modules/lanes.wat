;; v128 arguments and results on the command line.
(module
  (func (export "add_lanes") (param $v v128) (param $k i32) (result v128)
    (i32x4.add (local.get $v) (i32x4.splat (local.get $k))))
  (func (export "pair") (param $v v128) (result v128 i32)
    (local.get $v) (i32x4.extract_lane 3 (local.get $v))))
