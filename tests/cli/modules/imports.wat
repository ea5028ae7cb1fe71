(module
  (import "env" "foo" (func (param i32)))
  (func (export "_start")))
