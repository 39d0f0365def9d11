//! Two bound operations in a row: the first's image is the second's input. The tool's
//! `--resize` puts a resize before any operation this way.

use super::{AnyDeviceImage, AnyDeviceView, AnyView, Bound, Output, PixelFormat, Produces, Target};
use crate::error::{Error, Result};
use crate::runtime::{Gpu, Stream};

/// `first`, then `second` on its image: each form runs the two forms of its kind in a row
/// (the stream form through a device image between them, on the same stream).
///
/// ```
/// use cuimg::registry::{self, AnyImage, Args, Bound, Then};
/// use cuimg::{Image, Rgb8};
/// let bind = |name: &str, args: &[(&str, &str)]| {
///     let op = registry::find(name).unwrap();
///     (op.bind)(&Args::parse(op, args).unwrap()).unwrap()
/// };
/// let both = Then::new(bind("resize", &[("size", "8x6"), ("filter", "cv-area")]), bind("grayscale", &[]));
/// let img = AnyImage::from(Image::<Rgb8>::filled(16, 12, 90));
/// let out = both.cpu(&img.view())?;
/// assert_eq!(out.image().unwrap().dimensions(), (8, 6));
/// assert_eq!(both.size(16, 12), (8, 6));
/// # Ok::<(), cuimg::Error>(())
/// ```
pub struct Then {
    first: Box<dyn Bound>,
    second: Box<dyn Bound>,
}

impl Then {
    pub fn new(first: Box<dyn Bound>, second: Box<dyn Bound>) -> Then {
        Then { first, second }
    }

    /// The first's image, which the second takes.
    fn between(out: Output) -> Result<super::AnyImage> {
        match out {
            Output::Image(i) | Output::Both(i, _) => Ok(i),
            Output::Histogram(_) | Output::Tensor(_) => Err(Error::InvalidParameter {
                what: "two operations in a row".into(),
                why: "the first makes no image for the second".into(),
            }),
        }
    }
}

impl Bound for Then {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        self.first.produces(input)?.image.and_then(|f| self.second.produces(f))
    }

    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        let (w, h) = self.first.size(width, height);
        self.second.size(w, h)
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let mid = Then::between(self.first.cpu(src)?)?;
        self.second.cpu(&mid.view())
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let mid = Then::between(self.first.par(src)?)?;
        self.second.par(&mid.view())
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let mid = Then::between(self.first.gpu(gpu, src)?)?;
        self.second.gpu(gpu, &mid.view())
    }

    fn gpu_batch(&self, gpu: &Gpu, images: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let mid = self.first.gpu_batch(gpu, images)?.into_iter().map(Then::between).collect::<Result<Vec<_>>>()?;
        let views: Vec<AnyView<'_>> = mid.iter().map(|i| i.view()).collect();
        self.second.gpu_batch(gpu, &views)
    }

    fn stream(&self, stream: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let format = src.format();
        let Some(f) = self.first.produces(format).and_then(|p| p.image) else {
            return Err(super::unsupported("the first of two operations", format));
        };
        let (w, h) = self.first.size(src.dimensions().0, src.dimensions().1);
        let mut mid = AnyDeviceImage::alloc(stream, f, w, h)?;
        self.first.stream(stream, src, Target::Image(mid.view_mut()))?;
        self.second.stream(stream, &mid.view(), target)
    }
}
