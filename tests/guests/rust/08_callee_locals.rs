// A callee with its own locals: poly(n) = 4 + n + n^2 + n^3, accumulated in
// a loop over locals `power`, `sum` and `i`; main(5) = 4 + 5 + 25 + 125 = 159.
// poly(n, terms) is exported too, which keeps LLVM from specialising it for
// terms = 3 and unrolling the loop away (build.sh checks the loop).
#![no_std]
extern crate gpu_sdk;

#[no_mangle]
#[inline(never)]
pub extern "C" fn poly(n: i32, terms: i32) -> i32 {
    let mut power: i32 = 1;
    let mut sum: i32 = 4;
    let mut i = 0;
    while i < terms {
        power = power.wrapping_mul(n);
        sum = sum.wrapping_add(power);
        i += 1;
    }
    sum
}

#[no_mangle]
pub extern "C" fn main(n: i32) -> i32 {
    poly(n, 3)
}
