//! `resize` in the registry (`crate::registry`).

use super::{Filter, ResizeLayout, Sizing};
use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "resize";

pub(crate) static RESIZE: Operation = Operation {
    name: NAME,
    about: "resizes, exact with OpenCV's resize or Pillow's Image.resize",
    reference: "OpenCV resize (INTER_*) and Pillow Image.resize, by filter",
    formats: &PixelFormat::ALL,
    params: &[
        Param {
            name: "size",
            help: "the output's width and height, WIDTHxHEIGHT (exact, unless --fit or --fill)",
            default: Some("37x23"),
            samples: &["1x1", "64x48", "5x90"],
            bad: Some("0x10"),
        },
        Param {
            name: "width",
            help: "the output's width, the height by the aspect (0: by --size)",
            default: Some("0"),
            samples: &["19"],
            bad: Some("-3"),
        },
        Param {
            name: "height",
            help: "the output's height, the width by the aspect (0: by --size)",
            default: Some("0"),
            samples: &["7"],
            bad: Some("x"),
        },
        Param {
            name: "scale",
            help: "both sides times this factor, rounded (0: by --size)",
            default: Some("0"),
            samples: &["0.37", "2.5"],
            bad: Some("nan"),
        },
        Param {
            name: "fit",
            help: "inside --size, the aspect kept",
            default: None,
            samples: &["on"],
            bad: None,
        },
        Param {
            name: "fill",
            help: "--size exactly, the aspect kept by cropping the source's center",
            default: None,
            samples: &["on"],
            bad: None,
        },
        Param {
            name: "pad",
            help: "with --fit: padded to --size with this color, centered (a letterbox): C0[,C1,C2,C3]; none: not padded",
            default: Some("none"),
            samples: &["114,114,114,255"],
            bad: Some("300"),
        },
        Param {
            name: "filter",
            help: "cv-nearest, cv-nearest-exact, cv-linear, cv-linear-exact, cv-area, cv-cubic, cv-lanczos4 \
                   (cv2.resize's INTER_*), pil-nearest, pil-box, pil-bilinear, pil-hamming, pil-bicubic, \
                   pil-lanczos (Pillow's Image.resize)",
            default: Some("cv-linear"),
            samples: &[
                "cv-nearest",
                "cv-nearest-exact",
                "cv-linear-exact",
                "cv-area",
                "cv-cubic",
                "cv-lanczos4",
                "pil-nearest",
                "pil-box",
                "pil-bilinear",
                "pil-hamming",
                "pil-bicubic",
                "pil-lanczos",
            ],
            bad: Some("bilinear"),
        },
    ],
    bind: |args| Ok(Box::new(Resize { sizing: sizing(args)?, filter: args.get("filter").unwrap_or("cv-linear").parse()? })),
    cli: Some(Cli {
        command: "resize",
        about: "Resizes, exact with OpenCV's resize or Pillow's Image.resize (--filter names which).",
        gray: GrayInput::Unchanged,
    }),
};

/// `WIDTHxHEIGHT`, both at least 1, as parameter `--what` takes it.
pub(crate) fn size(what: &str, text: &str) -> Result<(u32, u32)> {
    text.split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
        .filter(|&(w, h)| w > 0 && h > 0)
        .ok_or_else(|| Error::InvalidParameter {
            what: format!("--{what}"),
            why: format!("{text:?} is not WIDTHxHEIGHT with both at least 1"),
        })
}

/// The sizing the parameters ask for: `--scale`, else `--width`/`--height`, else `--size`
/// (with `--fit`, `--fill`, `--pad`).
fn sizing(args: &crate::registry::Args) -> Result<Sizing> {
    let bad = |what: &str, why: String| Error::InvalidParameter { what: format!("--{what}"), why };
    let (w, h) = size("size", args.get("size").unwrap_or("37x23"))?;
    let (width, height): (u32, u32) = (args.number("width")?, args.number("height")?);
    let scale: f64 = args.number("scale")?;
    if !scale.is_finite() || scale < 0.0 {
        return Err(bad("scale", format!("{scale} is not a factor above 0")));
    }
    let pad = match args.get("pad").unwrap_or("none") {
        "none" => None,
        text => Some(crate::ops::border::op::color("pad", text)?),
    };
    Ok(match (scale > 0.0, width, height) {
        (true, ..) => Sizing::Scale(scale),
        (false, 0, 0) if args.flag("fill") => Sizing::Fill(w, h),
        (false, 0, 0) if args.flag("fit") || pad.is_some() => Sizing::Fit(w, h, pad),
        (false, 0, 0) => Sizing::Exact(w, h),
        (false, w, 0) => Sizing::Width(w),
        (false, 0, h) => Sizing::Height(h),
        (false, w, h) => Sizing::Exact(w, h),
    })
}

struct Resize {
    sizing: Sizing,
    filter: Filter,
}

impl Resize {
    fn layout(&self, width: u32, height: u32) -> Result<ResizeLayout> {
        self.sizing.layout(width, height, self.filter)
    }

}

impl Bound for Resize {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces::image(input))
    }

    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        self.layout(width, height).map_or((width, height), |l| l.size())
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(cpu::resize_layout(host::<P>(src), self.filter, &self.layout(src.dimensions().0, src.dimensions().1)?)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(par::resize_layout(host::<P>(src), self.filter, &self.layout(src.dimensions().0, src.dimensions().1)?)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let (w, h) = src.dimensions();
        let layout = self.layout(w, h)?;
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(gpu.resize_layout(host::<P>(src), self.filter, &layout)))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        let layouts = imgs.iter().map(|i| self.layout(i.dimensions().0, i.dimensions().1)).collect::<Result<Vec<_>>>()?;
        with_format!(first, NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            images(gpu.resize_batch_layouts(&views_as::<P>(imgs)?, self.filter, &layouts)))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        let want = self.layout(src.dimensions().0, src.dimensions().1)?.size();
        crate::image::check_same_size("the resize target", dst.dimensions(), want)?;
        let layout = self.layout(src.dimensions().0, src.dimensions().1)?;
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.resize_layout(source::<P>(src), target_image::<P>(NAME, &mut dst)?, self.filter, &layout))
    }
}
