//! `clahe` in the registry (`crate::registry`): gray through `clahe`, color through
//! `clahe_color`.

use super::Clahe;
use crate::error::{Error, Result};
use crate::ops::equalize::op::{PER_CHANNEL, mode};
use crate::registry::{
    AnyDeviceView, AnyView, Args, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{EqualizeMode, cpu, par};

const NAME: &str = "clahe";
const FORMATS: &[PixelFormat] =
    &[PixelFormat::Gray8, PixelFormat::Rgb8, PixelFormat::Bgr8, PixelFormat::Rgba8, PixelFormat::Bgra8];

pub(crate) static CLAHE: Operation = Operation {
    name: NAME,
    about: "contrast-limited adaptive histogram equalization: gray, or color on its luma or per channel",
    reference: "OpenCV createCLAHE(clipLimit, tileGridSize).apply",
    formats: FORMATS,
    params: &[
        Param {
            name: "clip",
            help: "How many times the average bin count a bin may hold before it is clipped (above 0).",
            default: Some("2"),
            samples: &["0.5", "40"],
            bad: Some("0"),
        },
        Param {
            name: "tiles",
            help: "The tile grid, COLUMNSxROWS.",
            default: Some("8x8"),
            samples: &["1x1", "3x5"],
            bad: Some("0x8"),
        },
        PER_CHANNEL,
    ],
    bind: |args| Ok(Box::new(Tables(params(args)?, mode(args)))),
    cli: Some(Cli {
        command: "clahe",
        about: "Contrast-limited adaptive histogram equalization (OpenCV's CLAHE) on luma, or on each channel \
                with --per-channel.",
        gray: GrayInput::AlphaDropped,
    }),
};

/// `--clip` and `--tiles COLUMNSxROWS`.
fn params(args: &Args) -> Result<Clahe> {
    let tiles = args.get("tiles").unwrap_or("8x8");
    let grid = tiles
        .split_once(['x', 'X'])
        .and_then(|(c, r)| Some((c.trim().parse::<u32>().ok()?, r.trim().parse::<u32>().ok()?)))
        .ok_or_else(|| Error::InvalidParameter {
            what: format!("--tiles {tiles}"),
            why: "use COLUMNSxROWS, for example 8x8".into(),
        })?;
    Clahe::new(args.number("clip")?, grid)
}

/// A grid of tables, and how color goes through them.
struct Tables(Clahe, EqualizeMode);

impl Bound for Tables {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        FORMATS.contains(&input).then_some(Produces::image(input))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let Tables(p, m) = *self;
        match src.format() {
            PixelFormat::Gray8 => image(cpu::clahe(host(src), p)),
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => image(cpu::clahe_color(host::<P>(src), p, m))),
        }
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let Tables(p, m) = *self;
        match src.format() {
            PixelFormat::Gray8 => image(par::clahe(host(src), p)),
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => image(par::clahe_color(host::<P>(src), p, m))),
        }
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let Tables(p, m) = *self;
        match src.format() {
            PixelFormat::Gray8 => image(gpu.clahe(host(src), p)),
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P => image(gpu.clahe_color(host::<P>(src), p, m))),
        }
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let Tables(p, m) = *self;
        match imgs.first().ok_or(Error::EmptyBatch)?.format() {
            PixelFormat::Gray8 => images(gpu.clahe_batch(&views_as(imgs)?, p)),
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P =>
                images(gpu.clahe_color_batch(&views_as::<P>(imgs)?, p, m))),
        }
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        let Tables(p, m) = *self;
        match src.format() {
            PixelFormat::Gray8 => s.clahe(source(src), target_image(NAME, &mut dst)?, p),
            f => with_format!(f, NAME, [Rgb8, Bgr8, Rgba8, Bgra8], P =>
                s.clahe_color(source::<P>(src), target_image::<P>(NAME, &mut dst)?, p, m)),
        }
    }
}
