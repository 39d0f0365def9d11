//! RGB -> luma in fixed point: `y = clamp((r*wr + g*wg + b*wb + bias) >> shift, 0, 255)`.
//!
//! The host turns every weight set into these five integers (BT.601 as OpenCV's
//! `cvtColor(RGB2GRAY)` does it, BT.709, the plain average, custom weights) and swaps `wr`
//! and `wb` for BGR layouts, so the kernels never know the channel order.

use crate::device::thread::{grid_stride_1d, grid_stride_x, grid_stride_y, index_1d};
use crate::device::vector::{self, V16};

#[derive(Clone, Copy)]
pub struct Weights {
    pub r: i32,
    pub g: i32,
    pub b: i32,
    pub bias: i32,
    pub shift: u32,
}

impl Weights {
    #[inline(always)]
    pub fn luma(&self, r: u32, g: u32, b: u32) -> u32 {
        let v = (r as i32 * self.r + g as i32 * self.g + b as i32 * self.b + self.bias) >> self.shift;
        v.clamp(0, 255) as u32
    }
}

/// Contiguous interleaved pixels of `C` bytes (channel 0 weighted by `r`, 1 by `g`, 2 by `b`)
/// to one byte each. Each thread converts 16 pixels per step: `C` 16-byte loads, one 16-byte
/// store.
///
/// # Safety
/// `src` holds `n * C` bytes and `dst` `n` bytes, both 16-byte aligned; 1-D launch.
#[inline(always)]
unsafe fn gray_flat<const C: usize>(src: *const u8, dst: *mut u8, n: u64, w: Weights) {
    let groups = n / 16;
    for g in grid_stride_1d(groups) {
        // SAFETY: group g < n / 16 lies inside the `n * C` source bytes.
        let words = unsafe { vector::load_group::<C>(src, g) };
        let byte = |i: usize| (words[i / 4] >> (8 * (i % 4))) & 0xff;
        let mut out = [0u32; 16];
        for (p, o) in out.iter_mut().enumerate() {
            *o = w.luma(byte(p * C), byte(p * C + 1), byte(p * C + 2));
        }
        // SAFETY: vector `g` lies inside the `n` destination bytes.
        unsafe { vector::store(dst, g, V16::from_bytes(&out)) };
    }
    // The last n % 16 pixels, one per thread.
    let tail = groups * 16;
    let i = tail + index_1d();
    if i < n {
        let p = i as usize * C;
        // SAFETY: pixel i < n lies inside both buffers.
        unsafe {
            let y = w.luma(*src.add(p) as u32, *src.add(p + 1) as u32, *src.add(p + 2) as u32);
            *dst.add(i as usize) = y as u8;
        }
    }
}

macro_rules! gray_flat_kernel {
    ($(#[$doc:meta])* $name:ident, $c:literal) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            src: *const u8,
            dst: *mut u8,
            n: u64,
            wr: i32,
            wg: i32,
            wb: i32,
            bias: i32,
            shift: u32,
        ) {
            let w = Weights { r: wr, g: wg, b: wb, bias, shift };
            // SAFETY: forwarded contract.
            unsafe { gray_flat::<$c>(src, dst, n, w) }
        }
    };
}

gray_flat_kernel!(
    /// RGB8/BGR8 -> Gray8, contiguous. See [`gray_flat`].
    ///
    /// # Safety
    /// `src`: `3n` bytes, `dst`: `n` bytes, both 16-byte aligned; 1-D launch.
    gray_c3_flat,
    3
);
gray_flat_kernel!(
    /// RGBA8/BGRA8 -> Gray8, contiguous. See [`gray_flat`].
    ///
    /// # Safety
    /// `src`: `4n` bytes, `dst`: `n` bytes, both 16-byte aligned; 1-D launch.
    gray_c4_flat,
    4
);

/// The general form: any pitch, any ROI, interleaved or planar, gray or "black and white"
/// output.
///
/// Channel `c` of pixel `(x, y)` is read at `s_c + y * s_pitch + x * s_step`, so an
/// interleaved RGB view passes `s_r = base, s_g = base + 1, s_b = base + 2, s_step = 3`, and a
/// planar (CHW) image passes its three plane pointers with `s_step = 1`. Output goes to `d0`
/// and, when `d1`/`d2` are non-null, to them too (luma written into all three channels).
/// When `s_a` and `d_a` are non-null the alpha byte is copied.
///
/// # Safety
/// Every address formed as above for `x < width`, `y < height` is valid; 2-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gray_planes(
    s_r: *const u8,
    s_g: *const u8,
    s_b: *const u8,
    s_a: *const u8,
    s_pitch: u64,
    s_step: u64,
    d0: *mut u8,
    d1: *mut u8,
    d2: *mut u8,
    d_a: *mut u8,
    d_pitch: u64,
    d_step: u64,
    width: u64,
    height: u64,
    wr: i32,
    wg: i32,
    wb: i32,
    bias: i32,
    shift: u32,
) {
    let w = Weights { r: wr, g: wg, b: wb, bias, shift };
    for y in grid_stride_y(height) {
        for x in grid_stride_x(width) {
            let s = (y * s_pitch + x * s_step) as usize;
            let d = (y * d_pitch + x * d_step) as usize;
            // SAFETY: (x, y) is inside the view, so every address is valid by contract.
            unsafe {
                let v = w.luma(*s_r.add(s) as u32, *s_g.add(s) as u32, *s_b.add(s) as u32) as u8;
                *d0.add(d) = v;
                if !d1.is_null() {
                    *d1.add(d) = v;
                    *d2.add(d) = v;
                }
                if !d_a.is_null() {
                    *d_a.add(d) = *s_a.add(s);
                }
            }
        }
    }
}
