//! Warps: `cv2.warpAffine` and `cv2.warpPerspective` on 8-bit images, nearest and linear,
//! constant and replicate borders. The host inverts the matrix in `f64` as OpenCV does and
//! rounds it to `f32`; everything after that is [`pixel`], which the kernels and the CPU
//! reference both evaluate, so they cannot disagree.
//!
//! [`pixel`] is OpenCV 5.0's own float arithmetic (`warp_kernels.simd.hpp`, the AVX2 build
//! the x86 wheels run), found from its source and confirmed on the goldens:
//! - OpenCV maps 16 pixels at a time ([`LANES`]) and the last `width % 16` of a row one by
//!   one, with different roundings: the vector body computes `M0 * x + (y * M1 + M2)` with
//!   the inner sum rounded twice and the outer one fused; the scalar tail
//!   `fma(x, M0, y * M1) + M2` (as GCC contracts `x*M0 + y*M1 + M2`). Perspective divides by
//!   `w`, made the same way.
//! - Nearest rounds the source coordinate half to even; linear takes `floor` and the
//!   fractions `a`, `b`, then `fma(a, p01 - p00, p00)`, `fma(a, p11 - p10, p10)` and
//!   `fma(b, v1 - v0, v0)`, rounded half to even and saturated.
//! - A coordinate outside `i32` (or NaN) becomes `i32::MIN`, as x86's conversion makes it.
//!
//! Every multiply-add here that is fused says so ([`Float::fma`]); every other one is two
//! IEEE roundings, as the reference makes them.

use crate::border::{CONSTANT, REPLICATE};
use crate::resize::Plane;
use crate::DevPtr;

/// Pixels OpenCV's vector body maps at once (its AVX2 build: 8 floats, unrolled twice).
pub const LANES: u32 = 16;

/// `WarpJob::flags`: the matrix is 3x3 (`warpPerspective`), else 2x3.
pub const PERSPECTIVE: u32 = 1;
/// `WarpJob::flags`: bilinear, else nearest.
pub const LINEAR: u32 = 2;
/// `WarpJob::flags`: replicate the border, else the constant `value`.
pub const REPLICATE_BORDER: u32 = 4;

// The border kinds this module takes, by `crate::border`'s numbering.
const _: () = assert!(CONSTANT == 0 && REPLICATE == 1);

/// The float operations the two sides implement with their own library: the kernels with
/// `core`'s intrinsics (`fma.rn.f32`, `cvt.rmi`, `cvt.rni`), the host with `std`'s.
pub trait Float {
    /// `a * b + c`, rounded once.
    fn fma(a: f32, b: f32, c: f32) -> f32;
    fn floor(v: f32) -> f32;
    /// To the nearest integer, ties to even.
    fn round_even(v: f32) -> f32;
}

/// One image's warp: where it reads and writes, the inverse map (destination to source),
/// how it samples.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WarpJob {
    pub src: Plane,
    pub dst: Plane,
    /// The destination-to-source matrix, row-major; a 2x3 matrix uses the first six.
    pub m: [f32; 9],
    /// [`PERSPECTIVE`], [`LINEAR`], [`REPLICATE_BORDER`].
    pub flags: u32,
    /// The constant border, one byte a channel (channel 0 lowest).
    pub value: u32,
    pub _pad: u32,
}

/// Jobs `0..count` from `jobs`: output `(x, y)` of job `blockIdx.z` is [`pixel`] of it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WarpParams {
    pub jobs: DevPtr<WarpJob>,
    pub count: u32,
    pub _pad: u32,
}

/// x86's float-to-int conversion (`cvttps2dq` after a floor or round): `i32::MIN` for a
/// value outside `i32` or NaN, where Rust's `as` would saturate.
#[inline(always)]
pub fn to_int(v: f32) -> i32 {
    if (-2147483648.0..2147483648.0).contains(&v) { v as i32 } else { i32::MIN }
}

/// The source coordinate of output `(x, y)` of a row `width` wide.
#[inline(always)]
pub fn source<F: Float>(job: &WarpJob, x: u32, y: u32, width: u32) -> (f32, f32) {
    let m = &job.m;
    let (xf, yf) = (x as f32, y as f32);
    if x < width - width % LANES {
        // The vector body: the row's part rounded twice, then one fused step per pixel.
        let row = |a: f32, b: f32, c: f32| F::fma(a, xf, yf * b + c);
        let (sx, sy) = (row(m[0], m[1], m[2]), row(m[3], m[4], m[5]));
        if job.flags & PERSPECTIVE == 0 {
            return (sx, sy);
        }
        let w = row(m[6], m[7], m[8]);
        (sx / w, sy / w)
    } else {
        // The scalar tail, as GCC contracts `x*M0 + y*M1 + M2`.
        let tail = |a: f32, b: f32, c: f32| F::fma(xf, a, yf * b) + c;
        let (sx, sy) = (tail(m[0], m[1], m[2]), tail(m[3], m[4], m[5]));
        if job.flags & PERSPECTIVE == 0 {
            return (sx, sy);
        }
        let w = tail(m[6], m[7], m[8]);
        (sx / w, sy / w)
    }
}

/// Whether a bilinear footprint at `(ix, iy)` misses the source entirely (OpenCV's "outer"
/// test, after which a constant border writes the constant without interpolating).
#[inline(always)]
fn outside(ix: i32, iy: i32, width: u32, height: u32) -> bool {
    let (ix, iy) = (ix as i64, iy as i64);
    ix < -1 || ix >= width as i64 || iy < -1 || iy >= height as i64
}

/// Output pixel `(x, y)` of `job`, its source pixels read through `fetch(sx, sy)` (always
/// inside the source). `C` is 1, 3 or 4.
#[inline(always)]
pub fn pixel<F: Float, const C: usize>(job: &WarpJob, x: u32, y: u32, fetch: impl Fn(u32, u32) -> [u8; C]) -> [u8; C] {
    let (sw, sh) = (job.src.width, job.src.height);
    let replicate = job.flags & REPLICATE_BORDER != 0;
    let mut constant = [0u8; C];
    for (c, v) in constant.iter_mut().enumerate() {
        *v = (job.value >> (8 * c)) as u8;
    }
    // A source pixel, or the border's.
    let at = |ix: i64, iy: i64| -> [u8; C] {
        if ix >= 0 && ix < sw as i64 && iy >= 0 && iy < sh as i64 {
            fetch(ix as u32, iy as u32)
        } else if replicate {
            let cx = if ix < 0 { 0 } else if ix >= sw as i64 { sw - 1 } else { ix as u32 };
            let cy = if iy < 0 { 0 } else if iy >= sh as i64 { sh - 1 } else { iy as u32 };
            fetch(cx, cy)
        } else {
            constant
        }
    };
    let (sx, sy) = source::<F>(job, x, y, job.dst.width);
    if job.flags & LINEAR == 0 {
        let (ix, iy) = (to_int(F::round_even(sx)), to_int(F::round_even(sy)));
        return at(ix as i64, iy as i64);
    }
    let (ix, iy) = (to_int(F::floor(sx)), to_int(F::floor(sy)));
    let (a, b) = (sx - ix as f32, sy - iy as f32);
    if !replicate && outside(ix, iy, sw, sh) {
        // The scalar tail writes the constant here, and so does a vector step whose 16
        // pixels are all outside. Otherwise the vector body interpolates four constants,
        // which is the constant unless a fraction is infinite or NaN (a perspective's
        // horizon): then it is NaN, which x86 rounds to 0.
        let vector = x < job.dst.width - job.dst.width % LANES;
        if !vector || (a.is_finite() && b.is_finite()) || all_outside::<F>(job, x - x % LANES, y, sw, sh) {
            return constant;
        }
    }
    let (ix, iy) = (ix as i64, iy as i64);
    let (p00, p01, p10, p11) = (at(ix, iy), at(ix + 1, iy), at(ix, iy + 1), at(ix + 1, iy + 1));
    let mut out = [0u8; C];
    for c in 0..C {
        let (p00, p01, p10, p11) = (p00[c] as f32, p01[c] as f32, p10[c] as f32, p11[c] as f32);
        let v0 = F::fma(a, p01 - p00, p00);
        let v1 = F::fma(a, p11 - p10, p10);
        let v = to_int(F::round_even(F::fma(b, v1 - v0, v0)));
        out[c] = if v < 0 { 0 } else if v > 255 { 255 } else { v as u8 };
    }
    out
}

/// Whether all [`LANES`] pixels of the vector step from `x0` are outside (only asked for a
/// pixel whose fraction is not finite, which is rare). Inlined: a call would take the job's
/// address, and a kernel's job would then live in local memory.
#[inline(always)]
fn all_outside<F: Float>(job: &WarpJob, x0: u32, y: u32, sw: u32, sh: u32) -> bool {
    (x0..x0 + LANES).all(|x| {
        let (sx, sy) = source::<F>(job, x, y, job.dst.width);
        outside(to_int(F::floor(sx)), to_int(F::floor(sy)), sw, sh)
    })
}

kernels! {
    /// One output pixel per thread; 2-D over the largest output, `blockIdx.z` the job.
    WarpC1 = warp_c1(WarpParams);
    WarpC3 = warp_c3(WarpParams);
    WarpC4 = warp_c4(WarpParams);
}
