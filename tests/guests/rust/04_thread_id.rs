// main() returns this instance's index in the batch (gpu.get_thread_id).
#![no_std]
extern crate gpu_sdk;

#[no_mangle]
pub extern "C" fn main() -> i32 {
    gpu_sdk::thread_id()
}
