//! `grayscale_histogram` in the registry (`crate::registry`).

use crate::error::{Error, Result};
use crate::ops::grayscale::GrayWeights;
use crate::registry::{
    AnyDeviceView, AnyImage, AnyView, Bound, Operation, Output, PixelFormat, Produces, Target, host, source,
    target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{Gray8, cpu, par};

const COLOR: &[PixelFormat] = &[PixelFormat::Rgb8, PixelFormat::Bgr8, PixelFormat::Rgba8, PixelFormat::Bgra8];
const NAME: &str = "grayscale_histogram";

pub(crate) static GRAYSCALE_HISTOGRAM: Operation = Operation {
    name: NAME,
    about: "gray (BT.601) and its histogram in one pass",
    reference: "OpenCV cvtColor(COLOR_RGB2GRAY), then calcHist",
    formats: COLOR,
    params: &[],
    bind: |_| Ok(Box::new(GrayHistogram)),
    // The tool's `gray` and `histogram` cover it, file by file.
    cli: None,
};

struct GrayHistogram;

const W: GrayWeights = GrayWeights::Bt601;

fn both(r: Result<(crate::Image<Gray8>, crate::Histogram)>) -> Result<Output> {
    r.map(|(g, h)| Output::Both(AnyImage::Gray8(g), h))
}

impl Bound for GrayHistogram {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        COLOR.contains(&input).then_some(Produces { image: Some(PixelFormat::Gray8), histogram: Some(1), tensor: None })
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => both(cpu::grayscale_histogram(host::<P>(src), W)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => both(par::grayscale_histogram(host::<P>(src), W)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => both(gpu.grayscale_histogram(host::<P>(src), W)))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        with_format!(first, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => Ok(gpu
            .grayscale_histogram_batch(&views_as::<P>(imgs)?, W)?
            .into_iter()
            .map(|(g, h)| Output::Both(AnyImage::Gray8(g), h))
            .collect()))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Both(mut dst, bins) = target else { return Err(wrong_target(NAME, "an image and bins")) };
        with_format!(src.format(), NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.grayscale_histogram(source::<P>(src), target_image::<Gray8>(NAME, &mut dst)?, bins, W))
    }
}
