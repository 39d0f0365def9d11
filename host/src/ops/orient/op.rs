//! `orient` in the registry (`crate::registry`).

use super::Orientation;
use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "orient";

pub(crate) static ORIENT: Operation = Operation {
    name: NAME,
    about: "flips, transposes and quarter turns (the eight EXIF orientations)",
    reference: "OpenCV flip, rotate and transpose",
    formats: &PixelFormat::ALL,
    params: &[Param {
        name: "orientation",
        help: "none, flip-horizontal, rotate-180, flip-vertical, transpose, rotate-90 (clockwise), transverse, \
               rotate-270, or an EXIF orientation tag value 1 to 8",
        default: Some("rotate-90"),
        samples: &["none", "flip-horizontal", "rotate-180", "flip-vertical", "transpose", "transverse", "rotate-270"],
        bad: Some("9"),
    }],
    bind: |args| Ok(Box::new(Orient(args.get("orientation").unwrap_or("rotate-90").parse()?))),
    cli: Some(Cli {
        command: "orient",
        about: "Flips, transposes and quarter turns, as OpenCV's flip, rotate and transpose.",
        gray: GrayInput::Unchanged,
    }),
};

struct Orient(Orientation);

impl Bound for Orient {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces::image(input))
    }

    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        self.0.size(width, height)
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(cpu::orient(host::<P>(src), self.0)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(par::orient(host::<P>(src), self.0)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(gpu.orient(host::<P>(src), self.0)))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        with_format!(first, NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            images(gpu.orient_batch(&views_as::<P>(imgs)?, self.0)))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.orient(source::<P>(src), target_image::<P>(NAME, &mut dst)?, self.0))
    }
}
