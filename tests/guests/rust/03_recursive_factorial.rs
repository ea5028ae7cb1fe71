// Recursive factorial, exported as `fact` and through `main`:
// fact(5) = main(5) = 120. fact(n) = 1 for n <= 1, and -1 once the product
// overflows i32 (fact(13) and up). The overflow check is also what keeps the
// recursion: with a plain wrapping multiply LLVM's tail-recursion pass turns
// fact into a loop (accumulator elimination); a checked multiply is not an
// accumulation it can rewrite. build.sh checks that `fact` calls itself.
#![no_std]
extern crate gpu_sdk;

#[no_mangle]
#[inline(never)]
pub extern "C" fn fact(n: i32) -> i32 {
    if n <= 1 {
        1
    } else {
        match fact(n - 1).checked_mul(n) {
            Some(v) if v > 0 => v,
            _ => -1,
        }
    }
}

#[no_mangle]
pub extern "C" fn main(n: i32) -> i32 {
    fact(n)
}
