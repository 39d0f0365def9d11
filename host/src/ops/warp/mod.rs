//! Warps: `cv2.warpAffine` and `cv2.warpPerspective` on 8-bit images of 1, 3 or 4 channels,
//! nearest and bilinear, constant and replicate borders, bit-exact with OpenCV 5.0; rotation
//! by any angle through [`Warp::rotation`] (`cv2.getRotationMatrix2D`).
//!
//! The host inverts the matrix in `f64` as OpenCV does and rounds it to `f32`; each output
//! pixel is then `cuimg_abi::warp::pixel`, evaluated by the CPU reference (`cpu.rs`) and the
//! kernels alike. It reproduces OpenCV's own float arithmetic, including where OpenCV's
//! 16-pixel vector body and its scalar tail round differently (see `cuimg_abi::warp`).
//! OpenCV warps 2-channel images by another path (a fixed-point remap), which cuimg does not
//! reproduce: they are refused.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

use cuimg_abi::warp::{Float, LINEAR, PERSPECTIVE, REPLICATE_BORDER, WarpJob};

use crate::error::{Error, Result};
use crate::ops::border::Border;
use crate::pixel::{Channels, Pixel};

/// A warp as `cv2.warpAffine` (2x3) or `cv2.warpPerspective` (3x3) takes its matrix: by
/// default the forward map (source to destination), which OpenCV inverts; with
/// [`Warp::inverse_map`], the destination-to-source map itself (`cv2.WARP_INVERSE_MAP`).
///
/// ```
/// use cuimg::Warp;
/// let shift = Warp::affine([1.0, 0.0, 3.5, 0.0, 1.0, -2.0]);
/// assert_eq!(shift.matrix(), &[1.0, 0.0, 3.5, 0.0, 1.0, -2.0]);
/// // cv2.getRotationMatrix2D((20.5, 15.0), 30.0, 1.0)
/// let turn = Warp::rotation((20.5, 15.0), 30.0, 1.0);
/// assert_eq!(turn.matrix()[2], -4.7535207775809925);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Warp {
    m: [f64; 9],
    perspective: bool,
    inverse: bool,
}

impl Warp {
    /// `cv2.warpAffine`'s 2x3 matrix, row-major.
    pub fn affine(m: [f64; 6]) -> Warp {
        Warp { m: [m[0], m[1], m[2], m[3], m[4], m[5], 0.0, 0.0, 1.0], perspective: false, inverse: false }
    }

    /// `cv2.warpPerspective`'s 3x3 matrix, row-major.
    pub fn perspective(m: [f64; 9]) -> Warp {
        Warp { m, perspective: true, inverse: false }
    }

    /// `cv2.getRotationMatrix2D(center, degrees, scale)`: a rotation by `degrees`
    /// (counter-clockwise, the image's y axis pointing down) and a scale about `center`.
    /// OpenCV takes the center as `Point2f`, hence `f32`.
    pub fn rotation(center: (f32, f32), degrees: f64, scale: f64) -> Warp {
        let angle = degrees * (std::f64::consts::PI / 180.0);
        let (alpha, beta) = (angle.cos() * scale, angle.sin() * scale);
        let (cx, cy) = (center.0 as f64, center.1 as f64);
        Warp::affine([alpha, beta, (1.0 - alpha) * cx - beta * cy, -beta, alpha, beta * cx + (1.0 - alpha) * cy])
    }

    /// The same matrix read as the destination-to-source map (`cv2.WARP_INVERSE_MAP`).
    pub fn inverse_map(self) -> Warp {
        Warp { inverse: true, ..self }
    }

    /// The matrix as given: 6 numbers for an affine warp, 9 for a perspective one.
    pub fn matrix(&self) -> &[f64] {
        if self.perspective { &self.m } else { &self.m[..6] }
    }

    pub fn is_perspective(&self) -> bool {
        self.perspective
    }

    /// Whether the matrix is the destination-to-source map.
    pub fn is_inverse_map(&self) -> bool {
        self.inverse
    }

    /// The destination-to-source map in `f32`, as OpenCV computes it: a forward affine matrix
    /// inverted as `cv::warpAffine` does, a forward perspective one as `cv::invert` does a
    /// 3x3 (`DECOMP_LU`'s closed form), then each coefficient rounded to `f32`. A matrix with
    /// a coefficient that is not finite, or that is singular, is refused (OpenCV would warp
    /// the whole image from one line, or from nothing).
    pub(crate) fn map(&self) -> Result<[f32; 9]> {
        let bad = |why: String| Error::InvalidParameter { what: "the warp matrix".into(), why };
        if let Some(i) = self.matrix().iter().position(|v| !v.is_finite()) {
            return Err(bad(format!("coefficient {i} is {}", self.matrix()[i])));
        }
        let m = &self.m;
        let det = if self.perspective { det3(m) } else { m[0] * m[4] - m[1] * m[3] };
        if det == 0.0 {
            return Err(bad(format!("{:?} is singular: it maps the image onto a line or a point", self.matrix())));
        }
        let inv = match (self.inverse, self.perspective) {
            (true, _) => *m,
            (false, false) => invert_affine(m),
            (false, true) => invert3(m, det),
        };
        let out = inv.map(|v| v as f32);
        if out.iter().any(|v| !v.is_finite()) {
            return Err(bad(format!("its inverse {inv:?} does not fit f32")));
        }
        Ok(out)
    }
}

/// How a warp samples the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpFilter {
    /// `cv2.INTER_NEAREST`: the nearest pixel, ties to even.
    Nearest,
    /// `cv2.INTER_LINEAR`: bilinear.
    Linear,
}

impl WarpFilter {
    /// `nearest` or `linear`.
    pub fn name(self) -> &'static str {
        match self {
            WarpFilter::Nearest => "nearest",
            WarpFilter::Linear => "linear",
        }
    }
}

impl std::str::FromStr for WarpFilter {
    type Err = Error;
    fn from_str(s: &str) -> Result<WarpFilter> {
        match s {
            "nearest" => Ok(WarpFilter::Nearest),
            "linear" => Ok(WarpFilter::Linear),
            _ => Err(Error::InvalidParameter { what: "the warp filter".into(), why: format!("{s:?} is neither nearest nor linear") }),
        }
    }
}

/// `cv::warpAffine`'s inverse of a 2x3 matrix.
fn invert_affine(m: &[f64; 9]) -> [f64; 9] {
    let d = m[0] * m[4] - m[1] * m[3];
    let d = if d != 0.0 { 1.0 / d } else { 0.0 };
    let (a11, a22, a12, a21) = (m[4] * d, m[0] * d, m[1] * -d, m[3] * -d);
    let b1 = -a11 * m[2] - a12 * m[5];
    let b2 = -a21 * m[2] - a22 * m[5];
    [a11, a12, b1, a21, a22, b2, 0.0, 0.0, 1.0]
}

/// `cv::invert`'s determinant of a 3x3 matrix (its `det3`).
fn det3(m: &[f64; 9]) -> f64 {
    let s = |y: usize, x: usize| m[y * 3 + x];
    s(0, 0) * (s(1, 1) * s(2, 2) - s(1, 2) * s(2, 1)) - s(0, 1) * (s(1, 0) * s(2, 2) - s(1, 2) * s(2, 0))
        + s(0, 2) * (s(1, 0) * s(2, 1) - s(1, 1) * s(2, 0))
}

/// `cv::invert(DECOMP_LU)` of a 3x3 matrix: the adjugate times `1 / det`.
fn invert3(m: &[f64; 9], det: f64) -> [f64; 9] {
    let s = |y: usize, x: usize| m[y * 3 + x];
    let d = 1.0 / det;
    [
        (s(1, 1) * s(2, 2) - s(1, 2) * s(2, 1)) * d,
        (s(0, 2) * s(2, 1) - s(0, 1) * s(2, 2)) * d,
        (s(0, 1) * s(1, 2) - s(0, 2) * s(1, 1)) * d,
        (s(1, 2) * s(2, 0) - s(1, 0) * s(2, 2)) * d,
        (s(0, 0) * s(2, 2) - s(0, 2) * s(2, 0)) * d,
        (s(0, 2) * s(1, 0) - s(0, 0) * s(1, 2)) * d,
        (s(1, 0) * s(2, 1) - s(1, 1) * s(2, 0)) * d,
        (s(0, 1) * s(2, 0) - s(0, 0) * s(2, 1)) * d,
        (s(0, 0) * s(1, 1) - s(0, 1) * s(1, 0)) * d,
    ]
}

/// The host's float operations for `cuimg_abi::warp` (`std`'s, each IEEE).
pub(crate) struct Host;

impl Float for Host {
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    fn floor(v: f32) -> f32 {
        v.floor()
    }
    fn round_even(v: f32) -> f32 {
        v.round_ties_even()
    }
}

/// The job for one image of `P` (its planes left for the caller), every parameter checked:
/// the format, the border, the matrix, the sizes.
pub(crate) fn job<P: Pixel>(warp: &Warp, filter: WarpFilter, border: Border, src: (u32, u32), dst: (u32, u32)) -> Result<WarpJob> {
    if P::LAYOUT == Channels::Two {
        return Err(Error::UnsupportedFormat(format!(
            "warps take no {} images: OpenCV warps 2 channels by a fixed-point remap cuimg does not reproduce",
            P::NAME
        )));
    }
    crate::validate::non_empty(src.0, src.1)?;
    crate::validate::non_empty(dst.0, dst.1)?;
    let edge = match border {
        Border::Constant(_) => 0,
        Border::Replicate => REPLICATE_BORDER,
        other => {
            return Err(Error::InvalidParameter {
                what: "the warp border".into(),
                why: format!("{} is not one cuimg warps with (constant or replicate)", other.name()),
            });
        }
    };
    let linear = if filter == WarpFilter::Linear { LINEAR } else { 0 };
    let perspective = if warp.perspective { PERSPECTIVE } else { 0 };
    Ok(WarpJob { m: warp.map()?, flags: perspective | linear | edge, value: border.packed(), ..Default::default() })
}
