//! `border` in the registry (`crate::registry`).

use super::{Border, Padding, output_size};
use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "border";

/// Comma-separated numbers, each checked.
pub(crate) fn numbers<T: std::str::FromStr>(
    what: &str,
    text: &str,
    count: std::ops::RangeInclusive<usize>,
) -> Result<Vec<T>> {
    let bad = || Error::InvalidParameter { what: format!("--{what}"), why: format!("{text:?} is not {count:?} numbers") };
    let v = text.split(',').map(|n| n.trim().parse::<T>().map_err(|_| bad())).collect::<Result<Vec<T>>>()?;
    if count.contains(&v.len()) { Ok(v) } else { Err(bad()) }
}

/// A color as the tool takes it: one number for every channel, or one per channel
/// (`C0,C1,C2,C3`; channels not given take the first).
pub(crate) fn color(what: &str, text: &str) -> Result<[u8; 4]> {
    let value = numbers::<u8>(what, text, 1..=4)?;
    let mut v = [value[0]; 4];
    v[..value.len()].copy_from_slice(&value);
    Ok(v)
}

pub(crate) static BORDER: Operation = Operation {
    name: NAME,
    about: "pads each side, exact with OpenCV's copyMakeBorder",
    reference: "OpenCV copyMakeBorder",
    formats: &PixelFormat::ALL,
    params: &[
        Param {
            name: "pad",
            help: "pixels added: TOP,BOTTOM,LEFT,RIGHT, or one number for all four",
            default: Some("3,2,5,1"),
            samples: &["0", "9,11,13,8", "1,0,0,40"],
            bad: Some("1,2,3"),
        },
        Param {
            name: "border",
            help: "constant, replicate, reflect, reflect101 or wrap (cv2.BORDER_*)",
            default: Some("reflect101"),
            samples: &["constant", "replicate", "reflect", "wrap"],
            bad: Some("mirror"),
        },
        Param {
            name: "value",
            help: "the constant border's value: one number, or one per channel (C0,C1,C2,C3)",
            default: Some("0"),
            samples: &["17,200,33,250"],
            bad: Some("256"),
        },
    ],
    bind: |args| {
        let pad = numbers::<u32>("pad", args.get("pad").unwrap_or("0"), 1..=4)?;
        let pad = match pad[..] {
            [p] => Padding { top: p, bottom: p, left: p, right: p },
            [top, bottom, left, right] => Padding { top, bottom, left, right },
            _ => return Err(Error::InvalidParameter { what: "--pad".into(), why: "give 1 or 4 numbers".into() }),
        };
        let v = color("value", args.get("value").unwrap_or("0"))?;
        let border = match args.get("border").unwrap_or("reflect101").parse()? {
            Border::Constant(_) => Border::Constant(v),
            b => b,
        };
        Ok(Box::new(Bordered { pad, border }))
    },
    cli: Some(Cli {
        command: "border",
        about: "Pads each side, as OpenCV's copyMakeBorder (--border names how).",
        gray: GrayInput::Unchanged,
    }),
};

struct Bordered {
    pad: Padding,
    border: Border,
}

impl Bound for Bordered {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces::image(input))
    }

    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        output_size(width, height, self.pad).unwrap_or((width, height))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        let (p, b) = (self.pad, self.border);
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(cpu::copy_make_border(host::<P>(src), p, b)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        let (p, b) = (self.pad, self.border);
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(par::copy_make_border(host::<P>(src), p, b)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        let (p, b) = (self.pad, self.border);
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => image(gpu.copy_make_border(host::<P>(src), p, b)))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        let (p, b) = (self.pad, self.border);
        with_format!(first, NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            images(gpu.copy_make_border_batch(&views_as::<P>(imgs)?, p, b)))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.copy_make_border(source::<P>(src), target_image::<P>(NAME, &mut dst)?, self.pad, self.border))
    }
}
