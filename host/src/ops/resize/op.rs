//! `resize` in the registry (`crate::registry`).

use super::Filter;
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
    about: "resizes to a size, exact with OpenCV's resize or Pillow's Image.resize",
    reference: "OpenCV resize (INTER_*) and Pillow Image.resize, by filter",
    formats: &PixelFormat::ALL,
    params: &[
        Param {
            name: "size",
            help: "the output's width and height, WIDTHxHEIGHT",
            default: Some("37x23"),
            samples: &["1x1", "64x48", "5x90"],
            bad: Some("0x10"),
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
    bind: |args| {
        let size = args.get("size").unwrap_or("37x23");
        let parsed = size.split_once('x').and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
        let (width, height) = match parsed {
            Some((w, h)) if w > 0 && h > 0 => (w, h),
            _ => {
                return Err(Error::InvalidParameter {
                    what: "--size".into(),
                    why: format!("{size:?} is not WIDTHxHEIGHT with both at least 1"),
                });
            }
        };
        Ok(Box::new(Resize { width, height, filter: args.get("filter").unwrap_or("cv-linear").parse()? }))
    },
    cli: Some(Cli {
        command: "resize",
        about: "Resizes, exact with OpenCV's resize or Pillow's Image.resize (--filter names which).",
        gray: GrayInput::Unchanged,
    }),
};

struct Resize {
    width: u32,
    height: u32,
    filter: Filter,
}

impl Bound for Resize {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces { image: Some(input), histogram: None })
    }

    fn size(&self, _: u32, _: u32) -> (u32, u32) {
        (self.width, self.height)
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let (w, h, f) = (self.width, self.height, self.filter);
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(cpu::resize(host::<P>(src), w, h, f)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let (w, h, f) = (self.width, self.height, self.filter);
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(par::resize(host::<P>(src), w, h, f)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let (w, h, f) = (self.width, self.height, self.filter);
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(gpu.resize(host::<P>(src), w, h, f)))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        let (w, h, f) = (self.width, self.height, self.filter);
        with_format!(first, NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            images(gpu.resize_batch(&views_as::<P>(imgs)?, w, h, f)))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        let want = (self.width, self.height);
        if dst.dimensions() != want {
            return Err(Error::DimensionMismatch {
                what: "the resize target".into(),
                expected_width: want.0,
                expected_height: want.1,
                actual_width: dst.dimensions().0,
                actual_height: dst.dimensions().1,
            });
        }
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.resize(source::<P>(src), target_image::<P>(NAME, &mut dst)?, self.filter))
    }
}
