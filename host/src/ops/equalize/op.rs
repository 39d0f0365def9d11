//! `equalize` in the registry (`crate::registry`): gray formats through `equalize`, color
//! ones through `equalize_color`.

use super::EqualizeMode;
use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Args, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "equalize";

/// `--per-channel`: each color channel through its own table, instead of the luma.
pub(crate) const PER_CHANNEL: Param = Param {
    name: "per-channel",
    help: "Each of red, green and blue through its own tables instead of the luma (changes hues).",
    default: None,
    samples: &["on"],
    bad: None,
};

pub(crate) fn mode(args: &Args) -> EqualizeMode {
    if args.flag(PER_CHANNEL.name) { EqualizeMode::PerChannel } else { EqualizeMode::Luma }
}

pub(crate) static EQUALIZE: Operation = Operation {
    name: NAME,
    about: "histogram equalization: gray, or color on its luma or per channel (alpha kept)",
    reference: "OpenCV equalizeHist (on gray, and on each channel or the luma of color)",
    formats: &PixelFormat::ALL,
    params: &[PER_CHANNEL],
    bind: |args| Ok(Box::new(Equalize(mode(args)))),
    cli: Some(Cli {
        command: "equalize",
        about: "Histogram equalization on luma (colors keep their hue), as OpenCV's equalizeHist; on each \
                channel with --per-channel.",
        gray: GrayInput::Unchanged,
    }),
};

struct Equalize(EqualizeMode);

impl Bound for Equalize {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces::image(input))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let m = self.0;
        match src.format() {
            f @ (PixelFormat::Gray8 | PixelFormat::La8) => {
                with_format!(f, NAME, [Gray8, La8], P => image(cpu::equalize(host::<P>(src))))
            }
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => image(cpu::equalize_color(host::<P>(src), m))),
        }
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let m = self.0;
        match src.format() {
            f @ (PixelFormat::Gray8 | PixelFormat::La8) => {
                with_format!(f, NAME, [Gray8, La8], P => image(par::equalize(host::<P>(src))))
            }
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => image(par::equalize_color(host::<P>(src), m))),
        }
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let m = self.0;
        match src.format() {
            f @ (PixelFormat::Gray8 | PixelFormat::La8) => {
                with_format!(f, NAME, [Gray8, La8], P => image(gpu.equalize(host::<P>(src))))
            }
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => image(gpu.equalize_color(host::<P>(src), m))),
        }
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let m = self.0;
        match imgs.first().ok_or(Error::EmptyBatch)?.format() {
            f @ (PixelFormat::Gray8 | PixelFormat::La8) => {
                with_format!(f, NAME, [Gray8, La8], P => images(gpu.equalize_batch(&views_as::<P>(imgs)?)))
            }
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P =>
                images(gpu.equalize_color_batch(&views_as::<P>(imgs)?, m))),
        }
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        let m = self.0;
        match src.format() {
            f @ (PixelFormat::Gray8 | PixelFormat::La8) => with_format!(f, NAME, [Gray8, La8], P =>
                s.equalize(source::<P>(src), target_image::<P>(NAME, &mut dst)?)),
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P =>
                s.equalize_color(source::<P>(src), target_image::<P>(NAME, &mut dst)?, m)),
        }
    }
}
