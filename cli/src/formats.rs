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

use cuimg::io::Format;
use cuimg::limits::{FileFormat, Header};
use cuimg::{Clahe, Device, EqualizeMode, Gray8, GrayWeights, Histogram, Image, La8, Lut, Rgb8, Rgba8};

/// A decoded image in its own format.
pub enum Any {
    Gray(Image<Gray8>),
    La(Image<La8>),
    Rgb(Image<Rgb8>),
    Rgba(Image<Rgba8>),
}

/// What the tool does to each image.
#[derive(Clone)]
pub enum Command {
    Gray,
    Bw,
    Equalize,
    /// (Boxed: a table is 256 bytes, the other commands a few.)
    Lut(Box<Lut>),
    Clahe(Clahe, EqualizeMode),
    Histogram,
}

impl Any {
    /// Decodes a file in the format its header names (a palette PNG as RGBA when it has
    /// transparency, else RGB). `luma`: a JPEG's gray is its luma plane (`gray`).
    pub fn decode(
        bytes: &[u8],
        path: &Path,
        header: &Header,
        luma: bool,
        limits: &cuimg::Limits,
    ) -> cuimg::Result<Any> {
        use cuimg::io::decode_converted_with as decode;
        Ok(match (header.format, header.channels, header.alpha) {
            (FileFormat::Jpeg, ..) if luma => Any::Gray(cuimg::io::decode_luma_with(bytes, path, limits)?),
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

    pub fn encode(&self, format: Format) -> cuimg::Result<Vec<u8>> {
        match self {
            Any::Gray(i) => cuimg::io::encode(i, format),
            Any::La(i) => cuimg::io::encode(i, format),
            Any::Rgb(i) => cuimg::io::encode(i, format),
            Any::Rgba(i) => cuimg::io::encode(i, format),
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
    pub fn histogram(&self, e: &Device) -> cuimg::Result<(&'static [&'static str], Histogram)> {
        Ok(match self {
            Any::Gray(i) => (&["gray"], e.histogram(&i.view())?),
            Any::La(i) => (&["gray", "alpha"], e.histogram(&i.view())?),
            Any::Rgb(i) => (&["red", "green", "blue"], e.histogram(&i.view())?),
            Any::Rgba(i) => (&["red", "green", "blue", "alpha"], e.histogram(&i.view())?),
        })
    }
}

const W: GrayWeights = GrayWeights::Bt601;
const LUMA: EqualizeMode = EqualizeMode::Luma;

/// The gray channel of gray + alpha, as a gray image.
fn without_alpha(img: &Image<La8>) -> Image<Gray8> {
    Image::from_fn(img.width(), img.height(), |x, y| Gray8([img.get(x, y).0[0]]))
}

const ALPHA_DROPPED: &str = "its alpha is dropped: this command's result has no alpha channel";

/// Runs `cmd` on one image in its own format (see the module's table); the warning says
/// what was dropped where the command has no form for it.
pub fn apply(e: &Device, cmd: &Command, img: Any) -> cuimg::Result<(Any, Option<&'static str>)> {
    let dropped = Some(ALPHA_DROPPED);
    Ok(match (cmd, img) {
        (Command::Gray, Any::Gray(i)) => (Any::Gray(i), None),
        (Command::Gray, Any::La(i)) => (Any::Gray(without_alpha(&i)), dropped),
        (Command::Gray, Any::Rgb(i)) => (Any::Gray(e.grayscale(&i.view(), W)?), None),
        (Command::Gray, Any::Rgba(i)) => (Any::Gray(e.grayscale(&i.view(), W)?), dropped),
        (Command::Bw, i @ (Any::Gray(_) | Any::La(_))) => (i, None),
        (Command::Bw, Any::Rgb(i)) => (Any::Rgb(e.black_and_white(&i.view(), W)?), None),
        (Command::Bw, Any::Rgba(i)) => (Any::Rgba(e.black_and_white(&i.view(), W)?), None),
        (Command::Equalize, Any::Gray(i)) => (Any::Gray(e.equalize(&i.view())?), None),
        (Command::Equalize, Any::La(i)) => (Any::La(e.equalize(&i.view())?), None),
        (Command::Equalize, Any::Rgb(i)) => (Any::Rgb(e.equalize_color(&i.view(), LUMA)?), None),
        (Command::Equalize, Any::Rgba(i)) => (Any::Rgba(e.equalize_color(&i.view(), LUMA)?), None),
        // The table on every color channel; alpha through the identity.
        (Command::Lut(l), Any::Gray(i)) => (Any::Gray(e.apply_luts(&i.view(), &[**l])?), None),
        (Command::Lut(l), Any::La(i)) => (Any::La(e.apply_luts(&i.view(), &[**l, Lut::identity()])?), None),
        (Command::Lut(l), Any::Rgb(i)) => (Any::Rgb(e.apply_luts(&i.view(), &[**l; 3])?), None),
        (Command::Lut(l), Any::Rgba(i)) => {
            (Any::Rgba(e.apply_luts(&i.view(), &[**l, **l, **l, Lut::identity()])?), None)
        }
        (Command::Clahe(p, _), Any::Gray(i)) => (Any::Gray(e.clahe(&i.view(), *p)?), None),
        (Command::Clahe(p, _), Any::La(i)) => (Any::Gray(e.clahe(&without_alpha(&i).view(), *p)?), dropped),
        (Command::Clahe(p, m), Any::Rgb(i)) => (Any::Rgb(e.clahe_color(&i.view(), *p, *m)?), None),
        (Command::Clahe(p, m), Any::Rgba(i)) => (Any::Rgba(e.clahe_color(&i.view(), *p, *m)?), None),
        (Command::Histogram, i) => (i, None),
    })
}
