//! Resizing, exact with the reference each mode names: OpenCV's `cv::resize` (`cv.rs`) and
//! Pillow's `Image.resize` (`pil.rs`).

pub(crate) mod cpu;
pub(crate) mod cv;
pub(crate) mod pil;

/// OpenCV's interpolations (`cv2.INTER_*`), as `cv::resize` computes them on 8-bit images.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvInterpolation {
    /// `INTER_NEAREST`: `floor(x * scale)`.
    Nearest,
    /// `INTER_NEAREST_EXACT`: pixel centers, in 16-bit fixed point.
    NearestExact,
    /// `INTER_LINEAR`: 11-bit weights; exactly half size is `Area`.
    Linear,
    /// `INTER_LINEAR_EXACT`: 8-bit weights, bit-exact across OpenCV's platforms.
    LinearExact,
    /// `INTER_AREA`: the mean of each source cell when shrinking, a bilinear form when
    /// enlarging.
    Area,
    /// `INTER_CUBIC`: 4x4 taps, A = -0.75.
    Cubic,
    /// `INTER_LANCZOS4`: 8x8 taps.
    Lanczos4,
}

/// Pillow's filters (`PIL.Image.Resampling`), as `Image.resize(size, filter,
/// reducing_gap=None)` computes them: antialiased when shrinking (the filter widens with the
/// scale), images with alpha resampled premultiplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PilFilter {
    Nearest,
    Box,
    Bilinear,
    Hamming,
    Bicubic,
    Lanczos,
}

/// How to resize: a mode and the reference it is exact with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    OpenCv(CvInterpolation),
    Pillow(PilFilter),
}
