//! 8-bit images to float tensors and back (issue 29, part 2). The arithmetic the kernels
//! and the CPU reference both evaluate lives here, once: [`Affine::forward`] and
//! [`Affine::inverse`] (each product, quotient and sum one IEEE rounding, none fused), and
//! the conversions to and from half precision ([`f16_bits`], [`bf16_bits`], [`f16_value`],
//! [`bf16_value`]), written in integers so that every GPU and the host round alike.

use crate::{DevPtr, DevPtrMut};

/// Element types of a tensor, as the kernels take them.
pub const DTYPE_F32: u32 = 0;
pub const DTYPE_F16: u32 = 1;
pub const DTYPE_BF16: u32 = 2;

/// Bytes of one element of `dtype`.
pub const fn dtype_bytes(dtype: u32) -> u64 {
    if dtype == DTYPE_F32 { 4 } else { 2 }
}

/// Per-channel normalization: `kind` [`AFFINE_MEAN_STD`] is torchvision v2's `ToDtype(float32,
/// scale=True)` then `Normalize(mean, std)`, `(x * INV_255 - a[c]) / b[c]` (its scaling
/// multiplies by `1 / 255` as an f32, which differs from dividing by 255 for 126 of the 256
/// bytes); [`AFFINE_SCALE_OFFSET`] is `x * a[c] + b[c]` (DALI's and CV-CUDA's form, two
/// roundings, not fused).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Affine {
    pub kind: u32,
    pub a: [f32; 4],
    pub b: [f32; 4],
}

pub const AFFINE_MEAN_STD: u32 = 0;
pub const AFFINE_SCALE_OFFSET: u32 = 1;

/// `1 / 255` rounded to f32, torchvision's scale of a byte (`mul_(1.0 / 255)`).
pub const INV_255: f32 = 1.0 / 255.0;

impl Affine {
    /// Channel `c` of an 8-bit pixel as a normalized value.
    #[inline(always)]
    pub fn forward(&self, x: u8, c: usize) -> f32 {
        let v = x as f32;
        if self.kind == AFFINE_MEAN_STD { (v * INV_255 - self.a[c]) / self.b[c] } else { v * self.a[c] + self.b[c] }
    }

    /// The 8-bit value of normalized `v` in channel `c`: the forward form undone, `(v *
    /// std + mean) * 255` or `(v - offset) / scale`, rounded to nearest (ties to even) and
    /// clamped to 0..=255 (NaN to 0). (torchvision's float-to-uint8 `ToDtype` truncates
    /// `v * 255.999` instead; a model's output is rounded here.)
    #[inline(always)]
    pub fn inverse(&self, v: f32, c: usize) -> u8 {
        let x = if self.kind == AFFINE_MEAN_STD { (v * self.b[c] + self.a[c]) * 255.0 } else { (v - self.b[c]) / self.a[c] };
        round_u8(x)
    }
}

/// `x` rounded to nearest, ties to even, clamped to 0..=255; NaN is 0. In integers and
/// comparisons only, so that no float rounding function of either side is needed.
#[inline(always)]
pub fn round_u8(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x >= 255.0 {
        return 255;
    }
    // 0 < x < 255: the integer part is exact in f32 and in u32.
    let i = x as u32;
    let frac = x - i as f32; // exact: x and i share an exponent range below 2^8
    let up = frac > 0.5 || (frac == 0.5 && i & 1 == 1);
    (i + up as u32) as u8
}

/// `x` as an IEEE half, rounded to nearest, ties to even (overflow to infinity; NaN to a
/// quiet NaN of the same sign).
#[inline(always)]
pub const fn f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xFF) as i32;
    let man = b & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 | (man >> 13) as u16 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00;
    }
    if e <= 0 {
        // A half subnormal (or zero): the 24-bit significand scaled by 2^(e - 14).
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rem = m & ((1u32 << shift) - 1);
        let r = m >> shift;
        let up = rem > half || (rem == half && r & 1 == 1);
        return sign | (r + up as u32) as u16;
    }
    let r = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1FFF;
    // A carry out of the significand steps the exponent, up to infinity: the right result.
    let up = rem > 0x1000 || (rem == 0x1000 && r & 1 == 1);
    sign | (r + up as u32) as u16
}

/// `x` as a bfloat16, rounded to nearest, ties to even (NaN to a quiet NaN).
#[inline(always)]
pub const fn bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    if b & 0x7FFF_FFFF > 0x7F80_0000 {
        return ((b >> 16) | 0x40) as u16;
    }
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

/// The value of IEEE half `h` (every half is an f32 exactly).
#[inline(always)]
pub const fn f16_value(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1F) as u32;
    let man = (h & 0x3FF) as u32;
    let bits = if exp == 0x1F {
        sign | 0x7F80_0000 | (man << 13)
    } else if exp != 0 {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    } else if man == 0 {
        sign
    } else {
        // Subnormal: normalize the significand (its leading one at bit 10).
        let lead = 31 - man.leading_zeros(); // 0..=9
        let shift = 10 - lead;
        sign | ((127 - 15 + 1 - shift) << 23) | (((man << shift) & 0x3FF) << 13)
    };
    f32::from_bits(bits)
}

/// The value of bfloat16 `h`.
#[inline(always)]
pub const fn bf16_value(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// One image of a tensor launch: the source rectangle (a crop of the image at `data`, rows
/// `pitch` bytes apart), the place of its first element in the tensor.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TensorJob {
    pub data: u64,
    pub pitch: u64,
    pub width: u32,
    pub height: u32,
    /// Byte offset of this image's first element from the launch's `tensor`.
    pub offset: u64,
}

impl TensorJob {
    /// Its `repr(C)` layout as words (see [`crate::pair`]).
    pub const fn words(&self) -> [u64; 4] {
        [self.data, self.pitch, crate::pair(self.width, self.height), self.offset]
    }
}

/// How the tensor's elements lie and what each holds, shared by both directions.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorFormat {
    /// The tensor's width and height: an image's rectangle lies at its top left, and
    /// `fill` covers the rest (to-tensor only).
    pub width: u32,
    pub height: u32,
    /// [`DTYPE_F32`], [`DTYPE_F16`] or [`DTYPE_BF16`].
    pub dtype: u32,
    /// 1: channels are planes (NCHW); 0: interleaved (NHWC).
    pub planar: u32,
    /// 1: the first three channels in reverse order (RGB <-> BGR); alpha stays last.
    pub reverse: u32,
    /// 1: each row mirrored (tensor column `x` is the rectangle's `width - 1 - x`).
    pub flip: u32,
    /// The padding's value, in the tensor's units (converted like every element).
    pub fill: f32,
    pub _pad: u32,
    pub affine: Affine,
}

impl TensorFormat {
    /// `v` as an element of this format's type: f32 bits, or a half's in the low 16.
    pub fn element_bits(&self, v: f32) -> u32 {
        match self.dtype {
            DTYPE_F32 => v.to_bits(),
            DTYPE_F16 => f16_bits(v) as u32,
            _ => bf16_bits(v) as u32,
        }
    }

    /// The element byte `b` of channel `c` becomes ([`TensorFormat::element_bits`] of
    /// `affine.forward`): what the CPU reference writes, and the tiled kernels' table.
    pub fn bits(&self, b: u8, c: usize) -> u32 {
        self.element_bits(self.affine.forward(b, c))
    }

    /// The tensor channel that channel `c` of an image of `channels` goes to: the first
    /// three reversed where `reverse` (and the image has them), else the same.
    #[inline(always)]
    pub const fn channel(&self, channels: usize, c: usize) -> usize {
        if self.reverse != 0 && channels >= 3 && c < 3 { 2 - c } else { c }
    }
}

/// The jobs of a launch: `list[blockIdx.z]`, or `one` where `list` is null (a single image
/// uploads nothing).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TensorJobs {
    pub list: DevPtr<TensorJob>,
    pub one: TensorJob,
}

/// 8-bit images to a tensor: one thread per tensor pixel (all its channels), 2-D over the
/// tensor's width and height, one job a grid layer.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ToTensor {
    pub jobs: TensorJobs,
    pub tensor: DevPtrMut<u8>,
    pub format: TensorFormat,
}

/// A tensor back to 8-bit images: the jobs' rectangles are the images written (their
/// size the tensor's, or less), read from the tensor as [`ToTensor`] wrote it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FromTensor {
    pub jobs: TensorJobs,
    pub tensor: DevPtr<u8>,
    pub format: TensorFormat,
}

kernels! {
    ToTensorC1 = to_tensor_c1(ToTensor);
    ToTensorC2 = to_tensor_c2(ToTensor);
    ToTensorC3 = to_tensor_c3(ToTensor);
    ToTensorC4 = to_tensor_c4(ToTensor);
    FromTensorC1 = from_tensor_c1(FromTensor);
    FromTensorC2 = from_tensor_c2(FromTensor);
    FromTensorC3 = from_tensor_c3(FromTensor);
    FromTensorC4 = from_tensor_c4(FromTensor);
}
