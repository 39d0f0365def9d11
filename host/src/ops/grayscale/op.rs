//! `grayscale` and `black_and_white` in the registry (`crate::registry`).

use super::GrayWeights;
use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Args, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const COLOR: &[PixelFormat] = &[PixelFormat::Rgb8, PixelFormat::Bgr8, PixelFormat::Rgba8, PixelFormat::Bgra8];

const WEIGHTS: Param = Param {
    name: "weights",
    help: "bt601 (as OpenCV's cvtColor), bt709, average, or R,G,B (each in -16..=16)",
    default: Some("bt601"),
    samples: &["bt709", "average", "0.5,0.25,0.25"],
    bad: Some("nan,0,0"),
};

pub(crate) static GRAYSCALE: Operation = Operation {
    name: "grayscale",
    about: "RGB (BGR, RGBA, BGRA) to gray",
    reference: "OpenCV cvtColor(COLOR_RGB2GRAY) with bt601",
    formats: COLOR,
    params: &[WEIGHTS],
    bind: |args| Ok(Box::new(Grayscale { weights: weights(args)?, keep_color: false })),
    cli: Some(Cli {
        command: "gray",
        about: "RGB to gray (BT.601, as OpenCV's cvtColor). A JPEG gives its own luma plane, decoded as such \
                (as OpenCV's imread with IMREAD_GRAYSCALE): within rounding of the same.",
        gray: GrayInput::AlphaDropped,
    }),
};

pub(crate) static BLACK_AND_WHITE: Operation = Operation {
    name: "black_and_white",
    about: "gray written back into every color channel (alpha kept)",
    reference: "the CPU reference (grayscale's luma in each channel)",
    formats: COLOR,
    params: &[WEIGHTS],
    bind: |args| Ok(Box::new(Grayscale { weights: weights(args)?, keep_color: true })),
    cli: Some(Cli { command: "bw", about: "Gray written back into red, green and blue.", gray: GrayInput::Unchanged }),
};

/// `bt601`, `bt709`, `average` or `R,G,B`.
fn weights(args: &Args) -> Result<GrayWeights> {
    let v = args.get("weights").unwrap_or("bt601");
    let w = match v {
        "bt601" => GrayWeights::Bt601,
        "bt709" => GrayWeights::Bt709,
        "average" => GrayWeights::Average,
        custom => {
            let parts: Vec<f32> = custom.split(',').filter_map(|p| p.trim().parse().ok()).collect();
            match parts[..] {
                [r, g, b] if custom.split(',').count() == 3 => GrayWeights::Custom { r, g, b },
                _ => {
                    return Err(Error::InvalidParameter {
                        what: "--weights".into(),
                        why: format!("{v:?}: use bt601, bt709, average or R,G,B"),
                    });
                }
            }
        }
    };
    w.fixed()?; // checked now, before any image
    Ok(w)
}

/// Both operations: luma alone (`grayscale`), or luma in every color channel.
struct Grayscale {
    weights: GrayWeights,
    keep_color: bool,
}

impl Grayscale {
    fn name(&self) -> &'static str {
        if self.keep_color { BLACK_AND_WHITE.name } else { GRAYSCALE.name }
    }
}

impl Bound for Grayscale {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        let image = if self.keep_color { input } else { PixelFormat::Gray8 };
        COLOR.contains(&input).then_some(Produces::image(image))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let w = self.weights;
        with_format!(src.format(), self.name(), [Rgb8, Bgr8, Rgba8, Bgra8], P => match self.keep_color {
            true => image(cpu::black_and_white(host::<P>(src), w)),
            false => image(cpu::grayscale(host::<P>(src), w)),
        })
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let w = self.weights;
        with_format!(src.format(), self.name(), [Rgb8, Bgr8, Rgba8, Bgra8], P => match self.keep_color {
            true => image(par::black_and_white(host::<P>(src), w)),
            false => image(par::grayscale(host::<P>(src), w)),
        })
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let w = self.weights;
        with_format!(src.format(), self.name(), [Rgb8, Bgr8, Rgba8, Bgra8], P => match self.keep_color {
            true => image(gpu.black_and_white(host::<P>(src), w)),
            false => image(gpu.grayscale(host::<P>(src), w)),
        })
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        let w = self.weights;
        with_format!(first, self.name(), [Rgb8, Bgr8, Rgba8, Bgra8], P => match self.keep_color {
            true => images(gpu.black_and_white_batch(&views_as::<P>(imgs)?, w)),
            false => images(gpu.grayscale_batch(&views_as::<P>(imgs)?, w)),
        })
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(self.name(), "an image")) };
        let w = self.weights;
        with_format!(src.format(), self.name(), [Rgb8, Bgr8, Rgba8, Bgra8], P => match self.keep_color {
            true => s.black_and_white(source::<P>(src), target_image::<P>(self.name(), &mut dst)?, w),
            false => s.grayscale(source::<P>(src), target_image::<crate::Gray8>(self.name(), &mut dst)?, w),
        })
    }
}
