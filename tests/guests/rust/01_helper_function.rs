// One helper: main(x) = square(x + 2), so main(3) = 25.
#![no_std]
extern crate gpu_sdk;

#[inline(never)]
fn square(x: i32) -> i32 {
    x.wrapping_mul(x)
}

#[no_mangle]
pub extern "C" fn main(x: i32) -> i32 {
    square(x.wrapping_add(2))
}
