//! `lut` in the registry (`crate::registry`): one table on every color channel, alpha
//! through the identity (so transparency is kept).

use super::Lut;
use crate::error::{Error, Result};
use crate::pixel::Pixel;
use crate::registry::{
    AnyDeviceView, AnyView, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    image, images, source, target_image, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "lut";

pub(crate) static LUT: Operation = Operation {
    name: NAME,
    about: "a lookup table on every color channel (alpha kept)",
    reference: "OpenCV LUT on the color channels",
    formats: &PixelFormat::ALL,
    params: &[Param {
        name: "table",
        help: "invert, gamma:GAMMA (above 0) or threshold:LEVEL (0 to 255)",
        default: Some("invert"),
        samples: &["gamma:2.2", "threshold:128"],
        bad: Some("gamma:-1"),
    }],
    bind: |args| Ok(Box::new(Table(table(args.get("table").unwrap_or("invert"))?))),
    cli: Some(Cli {
        command: "lut",
        about: "A lookup table on every channel: invert, gamma:G or threshold:T.",
        gray: GrayInput::Unchanged,
    }),
};

/// `invert`, `gamma:G` or `threshold:T`.
pub fn table(spec: &str) -> Result<Lut> {
    let (name, arg) = spec.split_once(':').unwrap_or((spec, ""));
    let bad = |why: String| Error::InvalidParameter { what: format!("--table {spec}"), why };
    let number = |what: &str| arg.parse::<f64>().map_err(|_| bad(format!("{what} must be a number")));
    match name {
        "invert" => Ok(Lut::invert()),
        "gamma" => match number("the gamma")? {
            g if g.is_finite() && g > 0.0 => Ok(Lut::gamma(g)),
            _ => Err(bad("the gamma must be above 0".into())),
        },
        "threshold" => match number("the threshold")? {
            t if (0.0..=255.0).contains(&t) => Ok(Lut::threshold(t as u8)),
            _ => Err(bad("the threshold is 0 to 255".into())),
        },
        _ => Err(bad("use invert, gamma:<G> or threshold:<T>".into())),
    }
}

struct Table(Lut);

impl Table {
    /// The table on each channel of `P`, the identity on alpha.
    fn per_channel<P: Pixel>(&self) -> Vec<Lut> {
        (0..P::CHANNELS).map(|c| if Some(c) == P::ALPHA { Lut::identity() } else { self.0 }).collect()
    }
}

impl Bound for Table {
    fn produces(&self, input: PixelFormat) -> Option<Produces> {
        Some(Produces::image(input))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(cpu::apply_luts(host::<P>(src), &self.per_channel::<P>())))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(par::apply_luts(host::<P>(src), &self.per_channel::<P>())))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            image(gpu.apply_luts(host::<P>(src), &self.per_channel::<P>())))
    }

    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        with_format!(first, NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            images(gpu.apply_luts_batch(&views_as::<P>(imgs)?, &self.per_channel::<P>())))
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Image(mut dst) = target else { return Err(wrong_target(NAME, "an image")) };
        // One upload of at most 1 KiB per call: small against an image's own.
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P => {
            let luts = s.upload_luts(&self.per_channel::<P>())?;
            s.apply_lut(source::<P>(src), target_image::<P>(NAME, &mut dst)?, &luts)
        })
    }
}
