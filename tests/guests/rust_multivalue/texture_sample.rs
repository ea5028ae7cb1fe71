// Copies texture unit 0 into the image through gpu.texture_sample (a
// multi-value import): instance i handles pixel (i % width, i / width) of a
// width x height image, sampling at the pixel centre. Returns the red byte
// it wrote (0..255) so a test can check the sample without reading the
// image. Needs the SDK built with --cfg gpu_sdk_multivalue (build.sh).
#![no_std]
extern crate gpu_sdk;

#[no_mangle]
pub extern "C" fn main(width: i32, height: i32) -> i32 {
    let i = gpu_sdk::thread_id();
    if width <= 0 || height <= 0 {
        return -1;
    }
    let (x, y) = (i % width, i / width);
    let u = (x as f32 + 0.5) / width as f32;
    let v = (y as f32 + 0.5) / height as f32;
    let c = gpu_sdk::texture_sample(0, u, v);
    gpu_sdk::set_pixel(x, y, c.r, c.g, c.b, c.a);
    (c.r * 255.0 + 0.5) as i32
}
