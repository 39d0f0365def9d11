//! The tiled separable launches (`cuimg_abi::resize::ResizeSeparable`): OpenCV's fixed-point
//! filters, and its area in float where each output's lists are at most 8 long (the
//! `ResizeArea4*`, `ResizeArea54*`, `ResizeArea84*` and `ResizeArea8*` kernels, rule
//! `RULE_AREA`), into images, tensors, or tensors from YUV frames.

use std::sync::Arc;

use cuimg_abi::DevPtr;
use cuimg_abi::resize::SEPARABLE_TILE_ROWS;
use cuimg_abi::resize::{
    RULE_AREA, ResizeArea4C1, ResizeArea4C1Tensor, ResizeArea54C1, ResizeArea54C1Tensor, ResizeArea54C2,
    ResizeArea54C2Tensor, ResizeArea54C3, ResizeArea54C3Tensor, ResizeArea54C4, ResizeArea54C4Tensor, ResizeArea84C1, ResizeArea84C1Tensor, ResizeArea84C2,
    ResizeArea84C2Tensor, ResizeArea84C3, ResizeArea84C3Tensor, ResizeArea84C4, ResizeArea84C4Tensor, ResizeArea4C2, ResizeArea4C2Tensor, ResizeArea4C3,
    ResizeArea4C3Tensor, ResizeArea4C4, ResizeArea4C4Tensor, ResizeArea8C1, ResizeArea8C1Tensor, ResizeArea8C2,
    ResizeArea8C2Tensor, ResizeArea8C3, ResizeArea8C3Tensor, ResizeArea8C4, ResizeArea8C4Tensor, ResizeJob,
    ResizeSeparable, ResizeSeparable2C1, ResizeSeparable2C1Tensor, ResizeSeparable2C2, ResizeSeparable2C2Tensor,
    ResizeSeparable2C3, ResizeSeparable2C3Tensor, ResizeSeparable2C4, ResizeSeparable2C4Tensor,
    ResizeSeparable2YuvTensor, ResizeSeparable4C1, ResizeSeparable4C1Tensor, ResizeSeparable4C2,
    ResizeSeparable4C2Tensor, ResizeSeparable4C3, ResizeSeparable4C3Tensor, ResizeSeparable4C4,
    ResizeSeparable4C4Tensor, ResizeSeparable4YuvTensor, ResizeSeparableC1, ResizeSeparableC1Tensor,
    ResizeSeparableC2, ResizeSeparableC2Tensor, ResizeSeparableC3, ResizeSeparableC3Tensor, ResizeSeparableC4,
    ResizeSeparableC4Tensor, ResizeSeparableTensor, ResizeSeparableYuv, ResizeSeparableYuvTensor,
};

use super::launch::{Blob, Sink, Work, offset, tensor_out};
use super::plan::{Lists, Plan, Taps, cubic_vector_elems};
use super::resident::{ACROSS, Block, DOWN, Placed};
use super::tiles::{Shape, TileRows, tile_shape};
use crate::error::{Error, Result};
use crate::pixel::{Channels, Pixel};
use crate::runtime::Stream;
use crate::runtime::knobs::host_span;

/// `$stream.resize_launch::<K>(...)` for the kernel of P's channel count among four.
macro_rules! by_channels {
    ($s:expr, $p:ty, $jobs:expr, $blob:expr, $shape:expr, $params:expr, [$k1:ty, $k2:ty, $k3:ty, $k4:ty]) => {
        match <$p>::LAYOUT {
            Channels::One => $s.resize_launch::<$k1>($jobs, $blob, $shape, $params),
            Channels::Two => $s.resize_launch::<$k2>($jobs, $blob, $shape, $params),
            Channels::Three => $s.resize_launch::<$k3>($jobs, $blob, $shape, $params),
            Channels::Four => $s.resize_launch::<$k4>($jobs, $blob, $shape, $params),
        }
    };
}

impl Stream {
    /// OpenCV's separable plans of `xt` x `yt` taps and `rule`, and its area plans whose
    /// lists `xt` (= `yt`) taps hold (`rule` then `RULE_AREA`), in tiles.
    pub(super) fn resize_separable<P: Pixel>(
        &self,
        group: &[Work],
        (xt, yt, rule): (usize, usize, u32),
        sink: Sink,
    ) -> Result<()> {
        // Each plan's two axes, across then down: a block each in the arena, shared by every
        // size that has them (`cv.rs`). Parts 0 and 1: the first inputs and the weights;
        // down, the spans of its tiles.
        let parts = |first: &[i32], taps: usize, b: Block, role: u8| match role & 1 {
            DOWN => b.spans(first, taps),
            _ => b,
        };
        host_span("separable: all", || match rule == RULE_AREA {
            false => {
                let items: Vec<(&Arc<Taps<i16>>, u8)> = group
                    .iter()
                    .flat_map(|w| match w.plan.as_ref() {
                        Plan::Separable { x, y, .. } => [(x, ACROSS), (y, DOWN)],
                        _ => unreachable!("grouped by kind"),
                    })
                    .collect();
                let block = |t: &Taps<i16>, role: u8| parts(&t.first, t.taps, Block::default().part(&t.first).part(&t.weights), role);
                self.separable_tiled::<P, _>(group, &items, block, (xt, yt, rule), sink)
            }
            // The area's lists padded to the launch's taps: a block for each padding (the
            // role's rest), apart from the same lists' other forms.
            true => {
                let items: Vec<(&Arc<Lists>, u8)> = group
                    .iter()
                    .flat_map(|w| match w.plan.as_ref() {
                        Plan::Area { x, y } => [(x, ACROSS | (xt as u8) << 1), (y, DOWN | (yt as u8) << 1)],
                        _ => unreachable!("grouped by kind"),
                    })
                    .collect();
                let block = |l: &Lists, role: u8| {
                    let t = l.padded((role >> 1) as usize);
                    parts(&t.first, t.taps, Block::default().part(&t.first).part(&t.weights), role)
                };
                self.separable_tiled::<P, _>(group, &items, block, (xt, yt, rule), sink)
            }
        })
    }

    /// [`Stream::resize_separable`]'s launch, its axes' blocks `block(axis, role)`, two a
    /// job (`items`: across, down).
    fn separable_tiled<P: Pixel, T: Send + Sync + 'static>(
        &self,
        group: &[Work],
        items: &[(&Arc<T>, u8)],
        block: impl Fn(&T, u8) -> Block + Sync,
        (xt, yt, rule): (usize, usize, u32),
        sink: Sink,
    ) -> Result<()> {
        self.with_blocks(items, block, |arena, placed| {
            let placed: Vec<(&Placed<'_>, &Placed<'_>)> = placed.chunks_exact(2).map(|xy| (&xy[0], &xy[1])).collect();
            let rows: Vec<TileRows> = host_span("separable: rows", || {
                group.iter().zip(&placed).map(|(w, (_, down))| (down.spans(), w.dst.height, w.dst.width)).collect()
            });
            // One row of at most 8 taps of 64 pixels of 4 channels' sums: 8 KiB, which fits.
            let shape = host_span("separable: tile shape", || tile_shape(&rows, P::CHANNELS, 4, SEPARABLE_TILE_ROWS, self.sms()))
                .ok_or_else(|| Error::InvalidParameter {
                    what: "a separable resize plan".into(),
                    why: "its tile does not fit".into(),
                })?;
            let jobs = host_span("separable: jobs", || {
                let mut jobs = Vec::with_capacity(group.len());
                for (w, (across, down)) in group.iter().zip(&placed) {
                    let (xw, yw) = if rule == RULE_AREA {
                        (across.at::<f32>(1)?, down.at::<f32>(1)?)
                    } else {
                        (across.at::<i16>(1)?, down.at::<i16>(1)?)
                    };
                    jobs.push(ResizeJob {
                        x: across.at::<i32>(0)?,
                        y: down.at::<i32>(0)?,
                        xw,
                        yw,
                        extra: offset(cubic_vector_elems(w.dst.width as usize * P::CHANNELS))?,
                        ..w.job()
                    });
                }
                Ok::<_, Error>(jobs)
            })?;
            // SAFETY: below, with the tables in the arena.
            unsafe { self.separable_launch::<P>(&jobs, (xt, yt, rule), shape, arena, sink) }
        })
    }

    /// The separable kernel for the taps, the rule and P's channel count over `jobs`, their
    /// tables (`ints`, `shorts` and `floats`) at device address `tables`.
    ///
    /// # Safety
    /// Each job's tables hold `dst.width` first columns and `x_taps` weights each,
    /// `dst.height` first rows and `y_taps` weights each, at its offsets (the weights f32
    /// for `RULE_AREA`, else i16); its planes are guarded views of P's channel count (or,
    /// for a tensor, each job's `dst` and frame an image of the guarded tensor of `sink`'s
    /// format, P's channels); `shape` is `tile_shape`'s for the jobs' rows.
    unsafe fn separable_launch<P: Pixel>(
        &self,
        jobs: &[ResizeJob],
        (xt, yt, rule): (usize, usize, u32),
        shape: Shape,
        tables: u64,
        sink: Sink,
    ) -> Result<()> {
        let Shape::Tiles { rows, words } = shape else { unreachable!("tile_shape makes tiles") };
        let blob = Blob::default();
        let p = |jobs, count, _| ResizeSeparable {
            jobs,
            count,
            x_taps: xt as u32,
            y_taps: yt as u32,
            rule,
            ints: DevPtr::new(tables),
            shorts: DevPtr::new(tables),
            floats: DevPtr::new(tables),
            tile_rows: rows,
            tile_words: words,
        };
        // Each kernel combines rows by its own rules, as constants (see `ResizeSeparable`).
        // Each takes plans of exactly its taps each way, as OpenCV's filters make them (the
        // area's lists padded to them).
        let area = rule == RULE_AREA;
        let kernel_taps = match (rule, xt, yt) {
            (0 | 3, 2, 2) => 2,
            (1, 4, 4) | (RULE_AREA, 4, 4) => 4,
            (2, 8, 8) | (RULE_AREA, 8, 8) => 8,
            // 5 or 8 across and 4 down: the area's only (`area_taps`).
            (RULE_AREA, 5, 4) => 54,
            (RULE_AREA, 8, 4) => 84,
            (rule, xt, yt) => {
                return Err(Error::InvalidParameter {
                    what: "a separable resize plan".into(),
                    why: format!("rule {rule} with {xt} x {yt} taps: no kernel takes it"),
                });
            }
        };
        if let Sink::YuvTensor(format, layout, coef) = sink {
            let (blob, out) = tensor_out(format);
            let p = |jobs, count, base| ResizeSeparableYuv { resize: p(jobs, count, base), out: out(base), layout, _pad: 0, coef };
            // SAFETY: as below, each job's source a frame of the layout, its output and
            // frame an image of the tensor (the caller's contract); the kernels make RGB.
            return unsafe {
                match (area, kernel_taps, P::LAYOUT) {
                    (false, 2, Channels::Three) => self.resize_launch::<ResizeSeparable2YuvTensor>(jobs, blob, shape, p),
                    (false, 4, Channels::Three) => self.resize_launch::<ResizeSeparable4YuvTensor>(jobs, blob, shape, p),
                    (false, 8, Channels::Three) => self.resize_launch::<ResizeSeparableYuvTensor>(jobs, blob, shape, p),
                    _ => unreachable!("frames decode to RGB, in 2, 4 or 8 taps, not by the area (`resize_work_into`)"),
                }
            };
        }
        if let Sink::Tensor(format) = sink {
            let (blob, out) = tensor_out(format);
            let p = |jobs, count, base| ResizeSeparableTensor { resize: p(jobs, count, base), out: out(base) };
            // SAFETY: as below, each job's output and frame an image of the tensor (the
            // caller's contract), the kernel's channels P's.
            return unsafe {
                match (area, kernel_taps) {
                    (false, 2) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeSeparable2C1Tensor, ResizeSeparable2C2Tensor,
                         ResizeSeparable2C3Tensor, ResizeSeparable2C4Tensor]
                    ),
                    (false, 4) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeSeparable4C1Tensor, ResizeSeparable4C2Tensor,
                         ResizeSeparable4C3Tensor, ResizeSeparable4C4Tensor]
                    ),
                    (false, _) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeSeparableC1Tensor, ResizeSeparableC2Tensor,
                         ResizeSeparableC3Tensor, ResizeSeparableC4Tensor]
                    ),
                    (true, 4) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeArea4C1Tensor, ResizeArea4C2Tensor, ResizeArea4C3Tensor, ResizeArea4C4Tensor]
                    ),
                    (true, 54) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeArea54C1Tensor, ResizeArea54C2Tensor, ResizeArea54C3Tensor, ResizeArea54C4Tensor]
                    ),
                    (true, 84) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeArea84C1Tensor, ResizeArea84C2Tensor, ResizeArea84C3Tensor, ResizeArea84C4Tensor]
                    ),
                    (true, _) => by_channels!(
                        self, P, jobs, blob, shape, p,
                        [ResizeArea8C1Tensor, ResizeArea8C2Tensor, ResizeArea8C3Tensor, ResizeArea8C4Tensor]
                    ),
                }
            };
        }
        // SAFETY: each job's tables hold `dst.width` first columns and `x_taps` weights each,
        // `dst.height` first rows and `y_taps` weights each, at its offsets; the kernel takes
        // exactly these taps, and the rule (`kernel_taps`); the planes are guarded views of
        // P's channel count (the kernel's, by `by_channels`); blocks of `SEPARABLE_THREADS`
        // with `tile_words` of shared memory (`Shape::Tiles`).
        unsafe {
            match (area, kernel_taps) {
                (false, 2) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeSeparable2C1, ResizeSeparable2C2, ResizeSeparable2C3, ResizeSeparable2C4]
                ),
                (false, 4) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeSeparable4C1, ResizeSeparable4C2, ResizeSeparable4C3, ResizeSeparable4C4]
                ),
                (false, _) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeSeparableC1, ResizeSeparableC2, ResizeSeparableC3, ResizeSeparableC4]
                ),
                (true, 4) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeArea4C1, ResizeArea4C2, ResizeArea4C3, ResizeArea4C4]
                ),
                (true, 54) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeArea54C1, ResizeArea54C2, ResizeArea54C3, ResizeArea54C4]
                ),
                (true, 84) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeArea84C1, ResizeArea84C2, ResizeArea84C3, ResizeArea84C4]
                ),
                (true, _) => by_channels!(
                    self, P, jobs, blob, shape, p,
                    [ResizeArea8C1, ResizeArea8C2, ResizeArea8C3, ResizeArea8C4]
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::resize::plan::{Plan, area_taps};
    use crate::ops::resize::{CvInterpolation, Filter, cv};
    use crate::{Image, Rgb8};

    /// The area's separable kernels' arithmetic, on the CPU: the padded lists (`first`
    /// and `taps` weights each way, reads clamped into the source), each row's sum across
    /// from 0 left to right, then the rows' from 0 top to bottom.
    fn padded_area(img: &Image<Rgb8>, (dw, dh): (usize, usize)) -> Option<Vec<u8>> {
        let (sw, sh) = (img.width() as usize, img.height() as usize);
        let Plan::Area { x, y } = cv::plan((sw, sh), 3, (dw, dh), CvInterpolation::Area) else { return None };
        let (tx, ty) = area_taps(&x, &y)?;
        let (x, y) = (x.padded(tx), y.padded(ty));
        let bytes = img.as_bytes();
        let at = |sx: i64, sy: i64, c: usize| {
            let (sx, sy) = (sx.clamp(0, sw as i64 - 1) as usize, sy.clamp(0, sh as i64 - 1) as usize);
            f32::from(bytes[(sy * sw + sx) * 3 + c])
        };
        let mut out = Vec::with_capacity(dw * dh * 3);
        for dy in 0..dh {
            for dx in 0..dw {
                for c in 0..3 {
                    let mut sum = 0f32;
                    for k in 0..ty {
                        let mut buf = 0f32;
                        for i in 0..tx {
                            let sx = x.first[dx] as i64 + i as i64;
                            buf += at(sx, y.first[dy] as i64 + k as i64, c) * x.weights[dx * tx + i];
                        }
                        sum += y.weights[dy * ty + k] * buf;
                    }
                    out.push(sum.round_ties_even().clamp(0.0, 255.0) as u8);
                }
            }
        }
        Some(out)
    }

    /// The padded lists give the reference's bytes (the oracle's sums, list by list), at
    /// the batch's factors (2.3 to 3.4 across: 4 taps each way, and 5 across by 4 down),
    /// wider ones (8 across by 4 down) and odd ones (8 each way); a test that fails if a
    /// weight lands on the wrong tap or the sums change order. (301x233 to 87x101 is the GPU
    /// tests' case of 5 across.)
    #[test]
    fn padded_area_lists_sum_as_the_reference() {
        let sizes = [
            ((640, 480), (224, 224)),
            ((768, 576), (224, 224)),
            ((1100, 500), (224, 224)),
            ((301, 233), (87, 101)),
            ((517, 389), (224, 224)),
            ((97, 61), (23, 17)),
        ];
        let mut seen = Vec::new();
        for (i, ((sw, sh), d)) in sizes.into_iter().enumerate() {
            let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ i as u64;
            let img = Image::<Rgb8>::from_fn(sw, sh, |_, _| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let b = (state >> 40) as u8;
                Rgb8([b, b.wrapping_mul(3), b ^ 0x5A])
            });
            let got = padded_area(&img, d).expect("lists of at most 8");
            let want = crate::cpu::resize(&img.view(), d.0 as u32, d.1 as u32, Filter::OpenCv(CvInterpolation::Area));
            assert_eq!(got, want.unwrap().as_bytes(), "{sw}x{sh} to {d:?}");
            let Plan::Area { x, y } = cv::plan((sw as usize, sh as usize), 3, d, CvInterpolation::Area) else {
                unreachable!()
            };
            seen.push(area_taps(&x, &y).expect("lists of at most 8"));
        }
        assert_eq!(seen, [(4, 4), (5, 4), (8, 4), (5, 4), (4, 4), (8, 8)], "every kernel's taps");
        let Plan::Area { x, y } = cv::plan((1920, 1080), 3, (224, 224), CvInterpolation::Area) else { unreachable!() };
        assert_eq!(area_taps(&x, &y), None, "lists of 10: the kernel of a pixel a thread");
    }
}
