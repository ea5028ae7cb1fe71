// Two helpers: main(x) = times_four(add_two(x)), so main(3) = 4 * 5 = 20.
#![no_std]
extern crate gpu_sdk;

#[inline(never)]
fn add_two(x: i32) -> i32 {
    x.wrapping_add(2)
}

#[inline(never)]
fn times_four(x: i32) -> i32 {
    x.wrapping_mul(4)
}

#[no_mangle]
pub extern "C" fn main(x: i32) -> i32 {
    times_four(add_two(x))
}
