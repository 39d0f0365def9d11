//! Each file in its own format: gray stays gray, and alpha stays wherever the command has a
//! form for it (cuimg has `Gray8`, `La8`, `Rgb8` and `Rgba8`); where it has none, the file's
//! line says what was dropped, as for 16-bit samples.
//!
//! | command   | gray         | gray + alpha              | RGB          | RGBA                 |
//! |-----------|--------------|---------------------------|--------------|----------------------|
//! | gray      | itself       | gray (alpha dropped)      | gray         | gray (alpha dropped) |
//! | bw        | itself       | itself                    | RGB          | RGBA                 |
//! | equalize  | gray         | gray + alpha              | RGB (luma)   | RGBA (luma)          |
//! | lut       | gray         | gray + alpha (alpha kept) | RGB          | RGBA (alpha kept)    |
//! | clahe     | gray         | gray (alpha dropped)      | RGB          | RGBA                 |
//!
//! The same calls run on a `cuimg::Device`: all CPU cores, or a GPU, with the same bytes.

use std::path::Path;

use crate::io::Format;
use crate::limits::{FileFormat, Header};
use crate::registry::{AnyImage, Bound, GrayInput, Operation, Output, PixelFormat};
use crate::{Device, Gray8, Histogram, Image, La8, Rgb8, Rgba8};

/// A decoded image in its own format.
pub enum Any {
    Gray(Image<Gray8>),
    La(Image<La8>),
    Rgb(Image<Rgb8>),
    Rgba(Image<Rgba8>),
}

/// What the tool does to each image: a registry operation with its parameters.
pub struct Command {
    pub op: &'static Operation,
    pub bound: Box<dyn Bound>,
    /// A JPEG's gray may be its luma plane: the operation is BT.601 grayscale, which the
    /// luma plane is within rounding of.
    pub luma: bool,
}

impl Command {
    /// `op` with its parameters (checked now, before any file).
    pub fn new(op: &'static Operation, args: &crate::registry::Args) -> crate::Result<Command> {
        let bound = (op.bind)(args)?;
        // BT.601 grayscale is what a JPEG's luma plane holds, within rounding.
        let luma = op.name == "grayscale" && args.get("weights") == Some("bt601");
        Ok(Command { op, bound, luma })
    }

    /// Whether the command makes histograms (files of numbers), not images.
    pub fn histograms(&self) -> bool {
        self.op
            .formats
            .iter()
            .all(|&f| self.bound.produces(f).is_some_and(|p| p.image.is_none() && p.histogram.is_some()))
    }

    /// Whether the command makes tensors (`.npy` files), not images.
    pub fn tensors(&self) -> bool {
        self.op.formats.iter().all(|&f| self.bound.produces(f).is_some_and(|p| p.tensor.is_some()))
    }

    /// The format of what the command makes of an RGB image (the GPU paths' input).
    pub fn makes_of_rgb(&self) -> Option<PixelFormat> {
        self.bound.produces(PixelFormat::Rgb8).and_then(|p| p.image)
    }
}

impl Any {
    /// Decodes a file in the format its header names (a palette PNG as RGBA when it has
    /// transparency, else RGB). `luma`: a JPEG's gray is its luma plane (`gray`).
    pub fn decode(
        bytes: &[u8],
        path: &Path,
        header: &Header,
        luma: bool,
        limits: &crate::Limits,
    ) -> crate::Result<Any> {
        use crate::io::decode_converted_with as decode;
        Ok(match (header.format, header.channels, header.alpha) {
            (FileFormat::Jpeg, ..) if luma => Any::Gray(crate::io::decode_luma_with(bytes, path, limits)?),
            (_, 1, _) => Any::Gray(decode(bytes, path, limits)?),
            (_, 2, _) => Any::La(decode(bytes, path, limits)?),
            (FileFormat::Png, 4, true) => Any::Rgba(decode(bytes, path, limits)?),
            (FileFormat::Png, 4, false) => {
                // A palette: its transparency (tRNS) comes after the header.
                let img: Image<Rgba8> = decode(bytes, path, limits)?;
                match img.pixels().iter().all(|p| p.0[3] == 255) {
                    true => Any::Rgb(Image::from_fn(img.width(), img.height(), |x, y| {
                        let [r, g, b, _] = img.get(x, y).0;
                        Rgb8([r, g, b])
                    })),
                    false => Any::Rgba(img),
                }
            }
            _ => Any::Rgb(decode(bytes, path, limits)?),
        })
    }

    pub fn encode(&self, format: Format) -> crate::Result<Vec<u8>> {
        match self {
            Any::Gray(i) => crate::io::encode(i, format),
            Any::La(i) => crate::io::encode(i, format),
            Any::Rgb(i) => crate::io::encode(i, format),
            Any::Rgba(i) => crate::io::encode(i, format),
        }
    }

    pub fn alpha(&self) -> bool {
        matches!(self, Any::La(_) | Any::Rgba(_))
    }

    pub fn dimensions(&self) -> (u32, u32) {
        match self {
            Any::Gray(i) => i.dimensions(),
            Any::La(i) => i.dimensions(),
            Any::Rgb(i) => i.dimensions(),
            Any::Rgba(i) => i.dimensions(),
        }
    }

    /// The histogram's columns and bins, channel by channel.
    pub fn histogram(&self, e: &Device) -> crate::Result<(&'static [&'static str], Histogram)> {
        Ok(match self {
            Any::Gray(i) => (&["gray"], e.histogram(&i.view())?),
            Any::La(i) => (&["gray", "alpha"], e.histogram(&i.view())?),
            Any::Rgb(i) => (&["red", "green", "blue"], e.histogram(&i.view())?),
            Any::Rgba(i) => (&["red", "green", "blue", "alpha"], e.histogram(&i.view())?),
        })
    }
}

/// The gray channel of gray + alpha, as a gray image.
fn without_alpha(img: &Image<La8>) -> Image<Gray8> {
    Image::from_fn(img.width(), img.height(), |x, y| Gray8([img.get(x, y).0[0]]))
}

const ALPHA_DROPPED: &str = "its alpha is dropped: this command's result has no alpha channel";

impl From<Any> for AnyImage {
    fn from(img: Any) -> AnyImage {
        match img {
            Any::Gray(i) => AnyImage::Gray8(i),
            Any::La(i) => AnyImage::La8(i),
            Any::Rgb(i) => AnyImage::Rgb8(i),
            Any::Rgba(i) => AnyImage::Rgba8(i),
        }
    }
}

/// An operation's image in a format the tool writes.
fn written(img: AnyImage) -> crate::Result<Any> {
    Ok(match img {
        AnyImage::Gray8(i) => Any::Gray(i),
        AnyImage::La8(i) => Any::La(i),
        AnyImage::Rgb8(i) => Any::Rgb(i),
        AnyImage::Rgba8(i) => Any::Rgba(i),
        other => return Err(crate::Error::UnsupportedFormat(format!("the tool writes no {} images", other.format()))),
    })
}

/// Runs `cmd` on one image in its own format (see the module's table); the warning says
/// what was dropped where the command has no form for it. A format the operation does not
/// take: gray + alpha loses its alpha when the operation takes gray; else gray formats are
/// written as they are, or without alpha, as the operation's tool form says.
pub fn apply(e: &Device, cmd: &Command, img: Any) -> crate::Result<(Any, Option<&'static str>)> {
    let img = AnyImage::from(img);
    let takes = |f| cmd.op.formats.contains(&f);
    let gray = cmd.op.cli.map_or(GrayInput::Unchanged, |c| c.gray);
    let (img, warning) = match (img, takes(PixelFormat::Gray8)) {
        (img, _) if takes(img.format()) => (img, None),
        (AnyImage::La8(i), true) => (AnyImage::Gray8(without_alpha(&i)), Some(ALPHA_DROPPED)),
        (AnyImage::La8(i), false) if gray == GrayInput::AlphaDropped => {
            return Ok((Any::Gray(without_alpha(&i)), Some(ALPHA_DROPPED)));
        }
        (img @ (AnyImage::Gray8(_) | AnyImage::La8(_)), _) => return Ok((written(img)?, None)),
        (other, _) => {
            let why = format!("{} takes no {} images", cmd.op.name, other.format());
            return Err(crate::Error::UnsupportedFormat(why));
        }
    };
    match e.apply(&*cmd.bound, &img.view())? {
        Output::Image(out) => {
            let lost = img.format().has_alpha() && !out.format().has_alpha();
            Ok((written(out)?, if lost { Some(ALPHA_DROPPED) } else { warning }))
        }
        // Histograms go through `Any::histogram`; the input is kept.
        _ => Ok((written(img)?, warning)),
    }
}
