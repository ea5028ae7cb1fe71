;; The start function traps during instantiation.
(module
  (func $s unreachable)
  (start $s)
  (func (export "_start")))
