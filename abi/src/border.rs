//! Borders: `cv2.copyMakeBorder`. Output pixel `(x, y)` of an image padded by `left` and
//! `top` reads source pixel `(interpolate(x - left, width), interpolate(y - top, height))`,
//! or takes the constant where either is outside (`-1`).

use crate::{BatchImage, DevPtr, DevPtrMut};

/// The border kinds, as OpenCV numbers them in its `BorderTypes` order.
pub const CONSTANT: u32 = 0;
pub const REPLICATE: u32 = 1;
pub const REFLECT: u32 = 2;
pub const WRAP: u32 = 3;
pub const REFLECT_101: u32 = 4;

/// OpenCV's `borderInterpolate`: the source index of position `p` along an axis of `len`
/// (at least 1), or -1 for a constant border. The kernels and the CPU reference both
/// evaluate it.
#[inline(always)]
pub const fn interpolate(p: i64, len: i64, kind: u32) -> i64 {
    if p >= 0 && p < len {
        return p;
    }
    // (An empty axis has no source; saying so first also spares the kernels the panic path
    // of the divisions below, whose message would embed this file's path in the PTX.)
    if len <= 0 {
        return -1;
    }
    match kind {
        REPLICATE => {
            if p < 0 {
                0
            } else {
                len - 1
            }
        }
        REFLECT | REFLECT_101 => {
            if len == 1 {
                return 0;
            }
            let delta = if kind == REFLECT_101 { 1 } else { 0 };
            let mut p = p;
            loop {
                if p < 0 {
                    p = -p - 1 + delta;
                } else {
                    p = len - 1 - (p - len) - delta;
                }
                if p >= 0 && p < len {
                    return p;
                }
            }
        }
        WRAP => {
            let mut p = p;
            if p < 0 {
                p -= ((p - len + 1) / len) * len;
            }
            if p >= len {
                p %= len;
            }
            p
        }
        _ => -1,
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BorderPitched {
    pub src: DevPtr<u8>,
    pub s_pitch: u64,
    pub s_width: u64,
    pub s_height: u64,
    pub dst: DevPtrMut<u8>,
    pub d_pitch: u64,
    pub d_width: u64,
    pub d_height: u64,
    pub left: u64,
    pub top: u64,
    /// One of the kinds above.
    pub kind: u32,
    /// The constant, one byte a channel (channel 0 lowest).
    pub value: u32,
}

/// A batch: packed images, each output its source's size padded.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BorderBatch {
    pub src: DevPtr<BatchImage>,
    pub dst: DevPtr<BatchImage>,
    pub left: u64,
    pub top: u64,
    pub kind: u32,
    pub value: u32,
}

kernels! {
    /// One output pixel per thread; 2-D launch over the output.
    BorderC1 = border_c1(BorderPitched);
    BorderC2 = border_c2(BorderPitched);
    BorderC3 = border_c3(BorderPitched);
    BorderC4 = border_c4(BorderPitched);
    /// Image `blockIdx.z` of a batch; 2-D over the largest output.
    BorderC1Batch = border_c1_batch(BorderBatch);
    BorderC2Batch = border_c2_batch(BorderBatch);
    BorderC3Batch = border_c3_batch(BorderBatch);
    BorderC4Batch = border_c4_batch(BorderBatch);
}
