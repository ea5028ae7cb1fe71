;; A memory nothing provides: no stand-in covers it.
(module
  (import "env" "mem" (memory 1))
  (func (export "run") (result i32) (i32.const 1)))
