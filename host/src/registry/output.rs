//! Device memory for what a stream form makes of one input, as [`Produces`] says: the
//! tests, the soak and the benchmark allocate, target and read back every kind of output
//! through it.

use super::{AnyDeviceImage, Bound, Output, PixelFormat, Target, unsupported};
use crate::error::Result;
use crate::ops::histogram::DeviceHistogram;
use crate::ops::tensor::DeviceTensor;
use crate::runtime::Stream;

/// What a stream form writes for one input: an image, bins, both, or a tensor of one image.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// use cuimg::registry::{self, AnyDeviceImage, AnyImage, Args, DeviceOutput, PixelFormat};
/// let op = registry::find("tensor").unwrap();
/// let bound = (op.bind)(&Args::parse(op, &[("dtype", "f16")])?)?;
/// let img = AnyImage::from(cuimg::Image::<cuimg::Rgb8>::filled(8, 4, 51));
/// let s = gpu.stream()?;
/// let src = AnyDeviceImage::upload(&s, &img.view())?;
/// let mut out = DeviceOutput::alloc(&s, &*bound, PixelFormat::Rgb8, 8, 4)?;
/// bound.stream(&s, &src.view(), out.target())?;
/// assert_eq!(out.download(&s)?, bound.cpu(&img.view())?);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DeviceOutput {
    pub image: Option<AnyDeviceImage>,
    pub bins: Option<DeviceHistogram>,
    pub tensor: Option<DeviceTensor>,
}

impl DeviceOutput {
    /// Memory (not initialized) for what `bound` makes of a `width` x `height` image of
    /// `input`.
    pub fn alloc(s: &Stream, bound: &dyn Bound, input: PixelFormat, width: u32, height: u32) -> Result<DeviceOutput> {
        let p = bound.produces(input).ok_or_else(|| unsupported("the operation", input))?;
        let (w, h) = bound.size(width, height);
        Ok(DeviceOutput {
            image: p.image.map(|f| AnyDeviceImage::alloc(s, f, w, h)).transpose()?,
            bins: p.histogram.map(|c| s.alloc_histogram(c)).transpose()?,
            tensor: p.tensor_shape(input, (w, h)).map(|shape| s.alloc_tensor(shape)).transpose()?,
        })
    }

    /// All of it as the stream form's target (a tensor's image 0).
    pub fn target(&mut self) -> Target<'_> {
        if let Some(t) = self.tensor.as_mut() {
            return Target::Tensor(t, 0);
        }
        Target::new(self.image.as_mut().map(|i| i.view_mut()), self.bins.as_mut())
            .expect("every operation makes something (`alloc` refuses one that makes nothing)")
    }

    /// What the stream form wrote, as the other forms return it.
    pub fn download(&self, s: &Stream) -> Result<Output> {
        Ok(match (&self.image, &self.bins, &self.tensor) {
            (_, _, Some(t)) => Output::Tensor(s.download_tensor(t)?),
            (Some(i), Some(b), None) => Output::Both(i.download(s)?, s.download_histogram(b)?),
            (Some(i), None, None) => Output::Image(i.download(s)?),
            (None, Some(b), None) => Output::Histogram(s.download_histogram(b)?),
            (None, None, None) => unreachable!("`alloc` makes at least one"),
        })
    }
}
