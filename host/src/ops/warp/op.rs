//! `warp` in the registry (`crate::registry`): a rotation about the center, or a given
//! affine or perspective matrix.

use super::{Warp, WarpFilter, job};
use crate::error::{Error, Result};
use crate::ops::border::Border;
use crate::ops::border::op::{color, numbers};
use crate::pixel::Gray8;
use crate::registry::{
    AnyDeviceView, AnyView, Args, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "warp";
const FORMATS: &[PixelFormat] =
    &[PixelFormat::Gray8, PixelFormat::Rgb8, PixelFormat::Bgr8, PixelFormat::Rgba8, PixelFormat::Bgra8];

pub(crate) static WARP: Operation = Operation {
    name: NAME,
    about: "warps by a rotation, an affine or a perspective matrix, exact with OpenCV's warpAffine and warpPerspective",
    reference: "OpenCV warpAffine / warpPerspective (INTER_NEAREST, INTER_LINEAR; BORDER_CONSTANT, BORDER_REPLICATE)",
    formats: FORMATS,
    params: &[
        Param {
            name: "rotate",
            help: "degrees counter-clockwise about the image's center ((w-1)/2, (h-1)/2), as cv2.getRotationMatrix2D",
            default: Some("17.5"),
            samples: &["90", "-137.5"],
            bad: Some("x"),
        },
        Param {
            name: "affine",
            help: "a 2x3 matrix instead, row-major: A,B,C,D,E,F (cv2.warpAffine's M); none: --rotate",
            default: Some("none"),
            samples: &["1,0.35,-4.25,0.1,0.9,2.5"],
            bad: Some("1,0,0,2,0,0"),
        },
        Param {
            name: "perspective",
            help: "a 3x3 matrix instead, row-major (cv2.warpPerspective's M); none: --rotate",
            default: Some("none"),
            samples: &["1.02,0.05,-3,-0.03,0.98,2,0.0004,-0.0002,1"],
            bad: Some("1,2,3"),
        },
        Param {
            name: "inverse",
            help: "the matrix maps the output to the input (cv2.WARP_INVERSE_MAP)",
            default: None,
            samples: &["on"],
            bad: None,
        },
        Param {
            name: "size",
            help: "the output's WIDTHxHEIGHT; same: the input's",
            default: Some("same"),
            samples: &["23x47", "1x1"],
            bad: Some("0x3"),
        },
        Param {
            name: "filter",
            help: "nearest or linear (cv2.INTER_NEAREST, cv2.INTER_LINEAR)",
            default: Some("linear"),
            samples: &["nearest"],
            bad: Some("cubic"),
        },
        Param {
            name: "border",
            help: "constant or replicate (cv2.BORDER_*)",
            default: Some("constant"),
            samples: &["replicate"],
            bad: Some("reflect"),
        },
        Param {
            name: "value",
            help: "the constant border's value: one number, or one per channel (C0,C1,C2,C3)",
            default: Some("0"),
            samples: &["9,250,128,3"],
            bad: Some("256"),
        },
    ],
    bind: |args| {
        let warped = Warped { matrix: matrix(args)?, size: size(args)?, filter: args.get("filter").unwrap_or("linear").parse()?, border: border(args)? };
        // Every parameter checked now, before any image: a probe of the smallest size.
        job::<Gray8>(&warped.warp(1, 1), warped.filter, warped.border, (1, 1), (1, 1))?;
        Ok(Box::new(warped))
    },
    cli: Some(Cli {
        command: "warp",
        about: "Warps by a rotation (--rotate), an affine or a perspective matrix, as OpenCV's warpAffine and warpPerspective.",
        gray: GrayInput::AlphaDropped,
    }),
};

/// The matrix the parameters give.
enum Matrix {
    /// Degrees about each image's center.
    Rotate(f64),
    Given(Warp),
}

fn matrix(args: &Args) -> Result<Matrix> {
    let given = |name: &str, n: usize| -> Result<Option<Vec<f64>>> {
        match args.get(name).unwrap_or("none") {
            "none" => Ok(None),
            text => numbers::<f64>(name, text, n..=n).map(Some),
        }
    };
    let inverse = |w: Warp| if args.flag("inverse") { w.inverse_map() } else { w };
    if let Some(m) = given("perspective", 9)? {
        let w = inverse(Warp::perspective(m.try_into().expect("nine numbers")));
        return w.map().map(|_| Matrix::Given(w)).map_err(|e| on("perspective", e));
    }
    if let Some(m) = given("affine", 6)? {
        let w = inverse(Warp::affine(m.try_into().expect("six numbers")));
        return w.map().map(|_| Matrix::Given(w)).map_err(|e| on("affine", e));
    }
    let degrees: f64 = args.number("rotate")?;
    if !degrees.is_finite() {
        return Err(Error::InvalidParameter { what: "--rotate".into(), why: format!("{degrees} is not an angle") });
    }
    Ok(Matrix::Rotate(degrees))
}

/// A matrix's error, naming the parameter it came from.
fn on(name: &str, e: Error) -> Error {
    match e {
        Error::InvalidParameter { why, .. } => Error::InvalidParameter { what: format!("--{name}"), why },
        e => e,
    }
}

fn size(args: &Args) -> Result<Option<(u32, u32)>> {
    let text = args.get("size").unwrap_or("same");
    if text == "same" {
        return Ok(None);
    }
    text.split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
        .filter(|&(w, h)| w > 0 && h > 0)
        .map(Some)
        .ok_or_else(|| Error::InvalidParameter { what: "--size".into(), why: format!("{text:?} is not WIDTHxHEIGHT with both at least 1, nor same") })
}

fn border(args: &Args) -> Result<Border> {
    let v = color("value", args.get("value").unwrap_or("0"))?;
    match args.get("border").unwrap_or("constant") {
        "constant" => Ok(Border::Constant(v)),
        "replicate" => Ok(Border::Replicate),
        other => Err(Error::InvalidParameter { what: "--border".into(), why: format!("{other:?} is neither constant nor replicate") }),
    }
}

struct Warped {
    matrix: Matrix,
    size: Option<(u32, u32)>,
    filter: WarpFilter,
    border: Border,
}

impl Warped {
    /// The warp of a `width` x `height` image.
    fn warp(&self, width: u32, height: u32) -> Warp {
        match self.matrix {
            Matrix::Rotate(deg) => Warp::rotation(((width as f32 - 1.0) / 2.0, (height as f32 - 1.0) / 2.0), deg, 1.0),
            Matrix::Given(w) => w,
        }
    }
}

impl Bound for Warped {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        FORMATS.contains(&input).then_some(Produces::image(input))
    }

    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        self.size.unwrap_or((width, height))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let (w, h) = src.dimensions();
        let ((ow, oh), warp) = (self.size(w, h), self.warp(w, h));
        with_format!(src.format(), NAME, [Gray8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(cpu::warp(host::<P>(src), &warp, ow, oh, self.filter, self.border)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let (w, h) = src.dimensions();
        let ((ow, oh), warp) = (self.size(w, h), self.warp(w, h));
        with_format!(src.format(), NAME, [Gray8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(par::warp(host::<P>(src), &warp, ow, oh, self.filter, self.border)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let (w, h) = src.dimensions();
        let ((ow, oh), warp) = (self.size(w, h), self.warp(w, h));
        with_format!(src.format(), NAME, [Gray8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(gpu.warp(host::<P>(src), &warp, ow, oh, self.filter, self.border)))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        let warps: Vec<Warp> = imgs.iter().map(|i| self.warp(i.dimensions().0, i.dimensions().1)).collect();
        let sizes: Vec<(u32, u32)> = imgs.iter().map(|i| self.size(i.dimensions().0, i.dimensions().1)).collect();
        with_format!(first, NAME, [Gray8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            images(gpu.warp_batch(&views_as::<P>(imgs)?, &warps, &sizes, self.filter, self.border)))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        let (w, h) = src.dimensions();
        crate::image::check_same_size("the warp target", dst.dimensions(), self.size(w, h))?;
        let warp = self.warp(w, h);
        with_format!(src.format(), NAME, [Gray8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.warp(source::<P>(src), target_image::<P>(NAME, &mut dst)?, &warp, self.filter, self.border))
    }
}
