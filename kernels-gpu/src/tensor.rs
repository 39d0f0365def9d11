//! 8-bit images to float tensors and back (`cuimg_abi::tensor`): one thread per tensor
//! pixel, all its channels, in the arithmetic `cuimg_abi::tensor` defines once for the
//! kernels and the CPU reference.

use crate::device::thread::{block_idx_z, grid_stride_x, grid_stride_y};
use cuimg_abi::tensor::{
    DTYPE_BF16, DTYPE_F16, DTYPE_F32, FromTensor, TensorFormat, TensorJob, TensorJobs, ToTensor, bf16_bits, bf16_value,
    dtype_bytes, f16_bits, f16_value,
};

/// Job `blockIdx.z` of the launch, or its one job.
///
/// # Safety
/// A non-null `jobs.list` holds more than `blockIdx.z` entries.
#[inline(always)]
unsafe fn job(jobs: &TensorJobs) -> TensorJob {
    if jobs.list.is_null() {
        jobs.one
    } else {
        // SAFETY: the caller's contract.
        unsafe { *jobs.list.ptr().add(block_idx_z() as usize) }
    }
}

/// Byte offset, from an image's first element, of channel `c` of pixel `(x, y)`.
#[inline(always)]
pub(crate) fn element<const C: usize>(f: &TensorFormat, x: u64, y: u64, c: usize) -> u64 {
    let (w, h) = (f.width as u64, f.height as u64);
    let index = if f.planar != 0 { (c as u64 * h + y) * w + x } else { (y * w + x) * C as u64 + c as u64 };
    index * dtype_bytes(f.dtype)
}

/// Writes `v` as an element of `dtype` at device address `at`.
///
/// # Safety
/// `at` is a writable element of `dtype`, aligned to it.
#[inline(always)]
pub(crate) unsafe fn put_element(dtype: u32, at: u64, v: f32) {
    // SAFETY: the caller's contract.
    unsafe {
        match dtype {
            DTYPE_F32 => *(at as usize as *mut f32) = v,
            DTYPE_F16 => *(at as usize as *mut u16) = f16_bits(v),
            _ => *(at as usize as *mut u16) = bf16_bits(v),
        }
    }
}

/// The job's image, normalized into the tensor from `tensor + job.offset`: tensor pixel
/// `(x, y)` holds image pixel `(x, y)` (mirrored where `flip`) inside the job's rectangle,
/// `fill` outside it.
///
/// # Safety
/// The job's rectangle is readable (`height` rows of `width` pixels of `C` bytes, `pitch`
/// apart) and no larger than the tensor's image; the tensor holds one image of `C`
/// channels of `format` at `job.offset`, aligned to its element.
#[inline(always)]
unsafe fn to_tensor<const C: usize>(p: ToTensor) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    let f = p.format;
    let out = p.tensor.ptr() as usize as u64 + j.offset;
    for y in grid_stride_y(f.height as u64) {
        for x in grid_stride_x(f.width as u64) {
            let inside = x < j.width as u64 && y < j.height as u64;
            let sx = if f.flip != 0 { (j.width as u64).wrapping_sub(1 + x) } else { x };
            for c in 0..C {
                let v = if inside {
                    // SAFETY: (sx, y) inside the rectangle (x < width, so width - 1 - x too).
                    let b = unsafe { *((j.data + y * j.pitch + sx * C as u64) as usize as *const u8).add(c) };
                    f.affine.forward(b, c)
                } else {
                    f.fill
                };
                let at = out + element::<C>(&f, x, y, f.channel(C, c));
                // SAFETY: an element of the job's image in the tensor, aligned (the caller's
                // contract).
                unsafe { put_element(f.dtype, at, v) };
            }
        }
    }
}

/// The job's image from the tensor at `tensor + job.offset`: image pixel `(x, y)` of the
/// rectangle from tensor pixel `(x, y)` (mirrored where `flip`), each channel un-normalized,
/// rounded and clamped.
///
/// # Safety
/// As [`to_tensor`], the rectangle writable and the tensor readable.
#[inline(always)]
unsafe fn from_tensor<const C: usize>(p: FromTensor) {
    // SAFETY: the caller's contract.
    let j = unsafe { job(&p.jobs) };
    let f = p.format;
    let src = p.tensor.ptr() as usize as u64 + j.offset;
    for y in grid_stride_y(j.height as u64) {
        for x in grid_stride_x(j.width as u64) {
            let tx = if f.flip != 0 { j.width as u64 - 1 - x } else { x };
            for c in 0..C {
                let at = src + element::<C>(&f, tx, y, f.channel(C, c));
                // SAFETY: an element of the job's image in the tensor (tx < width <= the
                // tensor's width), aligned.
                let v = unsafe {
                    match f.dtype {
                        DTYPE_F32 => *(at as usize as *const f32),
                        DTYPE_F16 => f16_value(*(at as usize as *const u16)),
                        DTYPE_BF16 => bf16_value(*(at as usize as *const u16)),
                        _ => f32::NAN,
                    }
                };
                // SAFETY: (x, y) inside the rectangle.
                unsafe { *((j.data + y * j.pitch + x * C as u64) as usize as *mut u8).add(c) = f.affine.inverse(v, c) };
            }
        }
    }
}

macro_rules! tensor_kernels {
    ($([$to:ident, $to_marker:ident, $from:ident, $from_marker:ident, $c:literal]),*) => {
        $(
            /// See [`to_tensor`]; 2-D over the tensor's width and height, one job a grid
            /// layer.
            ///
            /// # Safety
            /// [`to_tensor`]'s contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $to(p: ToTensor) {
                // SAFETY: forwarded contract.
                unsafe { to_tensor::<$c>(p) }
            }
            abi!(cuimg_abi::tensor::$to_marker, $to);

            /// See [`from_tensor`]; 2-D over the largest image, one job a grid layer.
            ///
            /// # Safety
            /// [`from_tensor`]'s contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $from(p: FromTensor) {
                // SAFETY: forwarded contract.
                unsafe { from_tensor::<$c>(p) }
            }
            abi!(cuimg_abi::tensor::$from_marker, $from);
        )*
    };
}

tensor_kernels!(
    [to_tensor_c1, ToTensorC1, from_tensor_c1, FromTensorC1, 1],
    [to_tensor_c2, ToTensorC2, from_tensor_c2, FromTensorC2, 2],
    [to_tensor_c3, ToTensorC3, from_tensor_c3, FromTensorC3, 3],
    [to_tensor_c4, ToTensorC4, from_tensor_c4, FromTensorC4, 4]
);
