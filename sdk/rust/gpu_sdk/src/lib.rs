//! wasmwarp guest SDK for Rust: safe wrappers over the `gpu` import module.
//!
//! Build (no cargo needed), with Debian's rustc, which has the wasm32 std:
//!
//! ```text
//! /usr/bin/rustc --edition 2021 --target wasm32-unknown-unknown --crate-type rlib \
//!     --crate-name gpu_sdk -C opt-level=2 -C panic=abort sdk/rust/gpu_sdk/src/lib.rs -o libgpu_sdk.rlib
//! /usr/bin/rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib \
//!     -C opt-level=2 -C panic=abort --extern gpu_sdk=libgpu_sdk.rlib prog.rs -o prog.wasm
//! ```
//!
//! `texture_sample` returns four f32 values (a multi-value import). Rust's
//! `extern "C"` returns a `#[repr(C)]` struct through a hidden pointer, so
//! it needs the unstable `extern "wasm"` ABI plus `+multivalue`; it is
//! compiled only with `--cfg gpu_sdk_multivalue`, which needs
//! `RUSTC_BOOTSTRAP=1` (rustc 1.63 is a stable compiler) and
//! `-C target-feature=+multivalue` on the SDK and the program. LLVM 14
//! crashes when it optimises a function that receives a multi-value call
//! result, so build the SDK itself with `-C opt-level=0` in that mode: the
//! small wrappers are `#[inline]` and get optimised inside the program's
//! crate; only the non-inlined texture_sample wrapper stays unoptimised.
//! tests/guests/build.sh does all of this.
#![no_std]
#![cfg_attr(gpu_sdk_multivalue, feature(wasm_abi))]

/// Guests are built with panic=abort; a panic becomes a wasm trap
/// ("unreachable"). Programs link this by `extern crate gpu_sdk;`.
#[cfg(all(target_arch = "wasm32", not(gpu_sdk_no_panic_handler)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// An RGBA colour with channels in 0..1.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rgba {
    pub r: f32,
    pub g: f32,
    pub b: f32,
    pub a: f32,
}

mod raw {
    #[link(wasm_import_module = "gpu")]
    extern "C" {
        pub fn get_thread_id() -> i32;
        pub fn instance_count() -> i32;
        pub fn get_time() -> f32;
        pub fn set_pixel(x: i32, y: i32, r: f32, g: f32, b: f32, a: f32);
        pub fn read_state(idx: i32) -> i32;
        pub fn write_state(idx: i32, val: i32);
        pub fn atomic_add(idx: i32, val: i32) -> i32;
    }

    #[cfg(gpu_sdk_multivalue)]
    #[link(wasm_import_module = "gpu")]
    extern "wasm" {
        pub fn texture_sample(unit: i32, u: f32, v: f32) -> super::Rgba;
    }
}

// The imports have no preconditions the guest could violate: bad indices
// and unbound units are reported by the host as traps, not undefined
// behaviour, so every wrapper is safe.

/// This instance's index in the batch, 0 ..= instance_count()-1.
#[inline]
pub fn thread_id() -> i32 {
    unsafe { raw::get_thread_id() }
}

/// Number of instances in the batch.
#[inline]
pub fn instance_count() -> i32 {
    unsafe { raw::instance_count() }
}

/// Seconds since the batch started.
#[inline]
pub fn time() -> f32 {
    unsafe { raw::get_time() }
}

/// Writes pixel (x, y) of the host's image; channels are clamped to 0..1
/// (NaN -> 0). Pixels outside the image are ignored (the host counts them).
#[inline]
pub fn set_pixel(x: i32, y: i32, r: f32, g: f32, b: f32, a: f32) {
    unsafe { raw::set_pixel(x, y, r, g, b, a) }
}

/// Reads the shared state buffer; traps ("state index out of range") when
/// `idx` is outside it.
#[inline]
pub fn read_state(idx: i32) -> i32 {
    unsafe { raw::read_state(idx) }
}

#[inline]
pub fn write_state(idx: i32, val: i32) {
    unsafe { raw::write_state(idx, val) }
}

/// Adds atomically across all instances (wrapping); returns the old value.
#[inline]
pub fn atomic_add(idx: i32, val: i32) -> i32 {
    unsafe { raw::atomic_add(idx, val) }
}

/// Samples texture `unit` at (u, v) in 0..1 (clamp-to-edge; the host picks
/// nearest or bilinear). Traps ("texture unit not bound") for a unit with no
/// texture. Not inlined: see the crate documentation (LLVM 14 workaround).
#[cfg(gpu_sdk_multivalue)]
#[inline(never)]
pub fn texture_sample(unit: i32, u: f32, v: f32) -> Rgba {
    unsafe { raw::texture_sample(unit, u, v) }
}
