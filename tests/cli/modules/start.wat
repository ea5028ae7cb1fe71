;; `run` without --invoke calls _start.
(module
  (func (export "_start") (result i32) i32.const 42))
