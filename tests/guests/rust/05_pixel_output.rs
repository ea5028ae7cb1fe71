// A red gradient 800 pixels wide: instance x writes pixel (x, y) for each of
// the `rows` rows with r = x / 800, g = b = 0, a = 1, and returns x. Run it
// with 800 instances and `--image 800xROWS=out.png`, passing ROWS to main.
#![no_std]
extern crate gpu_sdk;

#[inline(never)]
fn shade(x: i32) -> f32 {
    x as f32 / 800.0
}

#[no_mangle]
pub extern "C" fn main(rows: i32) -> i32 {
    let x = gpu_sdk::thread_id();
    let r = shade(x);
    let mut y = 0;
    while y < rows {
        gpu_sdk::set_pixel(x, y, r, 0.0, 0.0, 1.0);
        y += 1;
    }
    x
}
