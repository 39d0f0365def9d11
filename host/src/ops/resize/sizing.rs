//! Output sizes from a request, per image: an exact size, a scale, one side with the aspect
//! kept, fitting inside a size (and optionally padding to it: a letterbox), or filling it
//! (a centered crop). The tool's `--size`, `--width`, `--height`, `--scale`, `--fit`,
//! `--fill` and `--pad`.

use super::{Filter, SourceBox};
use crate::error::{Error, Result};
use crate::ops::border::Padding;

/// How a request sizes each image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sizing {
    /// Exactly this size, the aspect not kept.
    Exact(u32, u32),
    /// Both sides times this factor.
    Scale(f64),
    /// This width, the height by the aspect.
    Width(u32),
    /// This height, the width by the aspect.
    Height(u32),
    /// The largest size inside this one with the aspect kept; with `Some(value)`, padded to
    /// exactly this size, centered, with the constant `value` (a letterbox).
    Fit(u32, u32, Option<[u8; 4]>),
    /// This size, the aspect kept by cropping the source's center.
    Fill(u32, u32),
}

/// What to do to one image: read this box, resize to `inner`, then pad.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResizeLayout {
    pub source: Option<SourceBox>,
    pub inner: (u32, u32),
    pub pad: Option<(Padding, [u8; 4])>,
}

impl ResizeLayout {
    /// The output's size.
    pub fn size(&self) -> (u32, u32) {
        match self.pad {
            Some((p, _)) => (self.inner.0 + p.left + p.right, self.inner.1 + p.top + p.bottom),
            None => self.inner,
        }
    }
}

/// `v` rounded half away from zero, at least 1.
fn side(v: f64) -> u32 {
    v.round().clamp(1.0, u32::MAX as f64) as u32
}

impl Sizing {
    /// The layout for a `width` x `height` image resized with `filter` (whose crops, for
    /// OpenCV's filters, are whole pixels).
    ///
    /// ```
    /// use cuimg::Sizing;
    /// let f = "cv-area".parse().unwrap();
    /// assert_eq!(Sizing::Fit(100, 100, None).layout(400, 200, f).unwrap().size(), (100, 50));
    /// assert_eq!(Sizing::Fit(100, 100, Some([0; 4])).layout(400, 200, f).unwrap().size(), (100, 100));
    /// assert_eq!(Sizing::Width(100).layout(400, 200, f).unwrap().size(), (100, 50));
    /// let fill = Sizing::Fill(100, 100).layout(400, 200, f).unwrap();
    /// assert_eq!((fill.size(), fill.source.unwrap().x0), ((100, 100), 100.0)); // the middle 200 x 200
    /// ```
    pub fn layout(self, width: u32, height: u32, filter: Filter) -> Result<ResizeLayout> {
        crate::validate::non_empty(width, height)?;
        let (w, h) = (width as f64, height as f64);
        let plain = |inner| Ok(ResizeLayout { source: None, inner, pad: None });
        match self {
            Sizing::Exact(a, b) if a > 0 && b > 0 => plain((a, b)),
            Sizing::Scale(s) if s.is_finite() && s > 0.0 => plain((side(w * s), side(h * s))),
            Sizing::Width(a) if a > 0 => plain((a, side(h * a as f64 / w))),
            Sizing::Height(b) if b > 0 => plain((side(w * b as f64 / h), b)),
            Sizing::Fit(a, b, pad) if a > 0 && b > 0 => {
                let s = (a as f64 / w).min(b as f64 / h);
                let inner = (side(w * s).min(a), side(h * s).min(b));
                let pad = pad.map(|value| {
                    let (left, top) = ((a - inner.0) / 2, (b - inner.1) / 2);
                    let p = Padding { top, bottom: b - inner.1 - top, left, right: a - inner.0 - left };
                    (p, value)
                });
                Ok(ResizeLayout { source: None, inner, pad })
            }
            Sizing::Fill(a, b) if a > 0 && b > 0 => {
                // The source's centered part of the output's aspect.
                let s = (a as f64 / w).max(b as f64 / h);
                let (cw, ch) = (a as f64 / s, b as f64 / s);
                let source = match filter {
                    Filter::OpenCv(_) => {
                        let (cw, ch) = (side(cw).min(width), side(ch).min(height));
                        let (x0, y0) = ((width - cw) / 2, (height - ch) / 2);
                        SourceBox { x0: x0 as f32, y0: y0 as f32, x1: (x0 + cw) as f32, y1: (y0 + ch) as f32 }
                    }
                    Filter::Pillow(_) => {
                        let (x0, y0) = ((w - cw) / 2.0, (h - ch) / 2.0);
                        SourceBox { x0: x0 as f32, y0: y0 as f32, x1: (x0 + cw) as f32, y1: (y0 + ch) as f32 }
                    }
                };
                Ok(ResizeLayout { source: Some(source), inner: (a, b), pad: None })
            }
            other => Err(Error::InvalidParameter {
                what: "the resize size".into(),
                why: format!("{other:?} makes an empty image: every size and the scale must be above 0"),
            }),
        }
    }
}
