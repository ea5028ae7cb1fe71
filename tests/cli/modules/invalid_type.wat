;; Compiled with wat2wasm --no-check: a type mismatch the validator rejects.
(module (func (export "f") (result i32) i64.const 0))
