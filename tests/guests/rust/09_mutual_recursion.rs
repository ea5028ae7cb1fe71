// Mutual recursion: ping(n) = 0 for n <= 0, else 1 + pong(n - 1);
// pong(n) = 0 for n <= 0, else 2 + ping(n - 1). So ping adds 1 and pong 2
// on alternate steps: ping(n) = 3 * (n / 2) + n % 2, main(5) = ping(5) = 7,
// pong(5) = 8, main(4) = 6. All three are exported.
#![no_std]
extern crate gpu_sdk;

#[no_mangle]
#[inline(never)]
pub extern "C" fn ping(n: i32) -> i32 {
    if n <= 0 {
        0
    } else {
        pong(n - 1).wrapping_add(1)
    }
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn pong(n: i32) -> i32 {
    if n <= 0 {
        0
    } else {
        ping(n - 1).wrapping_add(2)
    }
}

#[no_mangle]
pub extern "C" fn main(n: i32) -> i32 {
    ping(n)
}
