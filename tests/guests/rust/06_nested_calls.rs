// Calls nested as arguments of calls: main(x) = add(inc(x), inc(inc(0))),
// so main(10) = add(11, 2) = 13.
#![no_std]
extern crate gpu_sdk;

#[inline(never)]
fn inc(x: i32) -> i32 {
    x.wrapping_add(1)
}

#[inline(never)]
fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

#[no_mangle]
pub extern "C" fn main(x: i32) -> i32 {
    add(inc(x), inc(inc(0)))
}
