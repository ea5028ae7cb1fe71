// Three parameters: lerp(a, b, t_percent) = a + (b - a) * t_percent / 100
// in i32 (division truncates toward zero), exported as `lerp` and through
// `main(a, b, t_percent)`: lerp(0, 100, 50) = 50, lerp(10, 20, 30) = 13.
#![no_std]
extern crate gpu_sdk;

#[no_mangle]
#[inline(never)]
pub extern "C" fn lerp(a: i32, b: i32, t_percent: i32) -> i32 {
    a.wrapping_add(b.wrapping_sub(a).wrapping_mul(t_percent).wrapping_div(100))
}

#[no_mangle]
pub extern "C" fn main(a: i32, b: i32, t_percent: i32) -> i32 {
    lerp(a, b, t_percent)
}
