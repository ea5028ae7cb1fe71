// An eight-deep call chain: main -> f1 -> f2 -> ... -> f8, each f adding 1
// to the result of the next, f8 returning x + 1: main(x) = x + 8, main(0) = 8.
#![no_std]
extern crate gpu_sdk;

#[inline(never)]
fn f8(x: i32) -> i32 {
    x.wrapping_add(1)
}
#[inline(never)]
fn f7(x: i32) -> i32 {
    f8(x).wrapping_add(1)
}
#[inline(never)]
fn f6(x: i32) -> i32 {
    f7(x).wrapping_add(1)
}
#[inline(never)]
fn f5(x: i32) -> i32 {
    f6(x).wrapping_add(1)
}
#[inline(never)]
fn f4(x: i32) -> i32 {
    f5(x).wrapping_add(1)
}
#[inline(never)]
fn f3(x: i32) -> i32 {
    f4(x).wrapping_add(1)
}
#[inline(never)]
fn f2(x: i32) -> i32 {
    f3(x).wrapping_add(1)
}
#[inline(never)]
fn f1(x: i32) -> i32 {
    f2(x).wrapping_add(1)
}

#[no_mangle]
pub extern "C" fn main(x: i32) -> i32 {
    f1(x)
}
