//! `histogram` in the registry (`crate::registry`).

use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Bound, Cli, GrayInput, Operation, Output, PixelFormat, Produces, Target, host, source,
    views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

pub(crate) static HISTOGRAM: Operation = Operation {
    name: "histogram",
    about: "the 256-bin histogram of each channel",
    reference: "OpenCV calcHist per channel",
    formats: &PixelFormat::ALL,
    params: &[],
    bind: |_| Ok(Box::new(Histograms)),
    cli: Some(Cli {
        command: "histogram",
        about: "The 256-bin histogram of each image's channels, as CSV or JSON files.",
        gray: GrayInput::Unchanged,
    }),
};

struct Histograms;

const ALL: &str = "histogram";

impl Bound for Histograms {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces { image: None, histogram: Some(input.channels()), tensor: None })
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), ALL, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            cpu::histogram(host::<P>(src)).map(Output::Histogram))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), ALL, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            par::histogram(host::<P>(src)).map(Output::Histogram))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), ALL, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            gpu.histogram(host::<P>(src)).map(Output::Histogram))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        with_format!(first, ALL, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            Ok(gpu.histogram_batch(&views_as::<P>(imgs)?)?.into_iter().map(Output::Histogram).collect()))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Histogram(bins) = target else { return Err(wrong_target(ALL, "bins alone")) };
        with_format!(src.format(), ALL, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.histogram(source::<P>(src), bins))
    }
}
