//! Resizing, exact with the reference each mode names: OpenCV's `cv::resize` (`cv.rs`) and
//! Pillow's `Image.resize` (`pil.rs`).

mod axis;
pub(crate) mod cpu;
mod cv;
pub(crate) mod exec;
mod gpu;
mod launch;
mod pil;
mod pillow;
mod replay;
mod resident;
mod separable;
mod tiles;
mod to_tensor;
pub(crate) mod op;
pub(crate) mod plan;
mod sizing;

pub use sizing::{ResizeLayout, Sizing};
#[doc(hidden)]
pub use pillow::{pillow_mma, pillow_mma_launches, pillow_planes, pillow_planes_launches};
#[doc(hidden)]
pub use plan::area_five;
#[doc(hidden)]
pub use replay::{resize_replay, resize_replays};
#[doc(hidden)]
pub use tiles::force_tile_rows;

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::pixel::Pixel;
use crate::validate;

/// OpenCV's interpolations (`cv2.INTER_*`), as `cv::resize` computes them on 8-bit images.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvInterpolation {
    /// `INTER_NEAREST`: `floor(x * scale)`.
    Nearest,
    /// `INTER_NEAREST_EXACT`: pixel centers, in 16-bit fixed point.
    NearestExact,
    /// `INTER_LINEAR`: 11-bit weights; exactly half size is `Area`.
    Linear,
    /// `INTER_LINEAR_EXACT`: 8-bit weights, bit-exact across OpenCV's platforms.
    LinearExact,
    /// `INTER_AREA`: the mean of each source cell when shrinking, a bilinear form when
    /// enlarging.
    Area,
    /// `INTER_CUBIC`: 4x4 taps, A = -0.75.
    Cubic,
    /// `INTER_LANCZOS4`: 8x8 taps.
    Lanczos4,
}

/// Pillow's filters (`PIL.Image.Resampling`), as `Image.resize(size, filter,
/// reducing_gap=None)` computes them: antialiased when shrinking (the filter widens with the
/// scale), images with alpha resampled premultiplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PilFilter {
    Nearest,
    Box,
    Bilinear,
    Hamming,
    Bicubic,
    Lanczos,
}

/// How to resize: a mode and the reference it is exact with. Named `cv-<mode>` and
/// `pil-<filter>` (`FromStr` and `Display`), as the tool takes them.
///
/// ```
/// use cuimg::{CvInterpolation, Filter, PilFilter};
/// assert_eq!("cv-linear".parse::<Filter>().unwrap(), Filter::OpenCv(CvInterpolation::Linear));
/// assert_eq!(Filter::Pillow(PilFilter::Bicubic).to_string(), "pil-bicubic");
/// assert!("bilinear".parse::<Filter>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    OpenCv(CvInterpolation),
    Pillow(PilFilter),
}

impl Filter {
    /// Every filter, by name.
    pub const ALL: [(&'static str, Filter); 13] = [
        ("cv-nearest", Filter::OpenCv(CvInterpolation::Nearest)),
        ("cv-nearest-exact", Filter::OpenCv(CvInterpolation::NearestExact)),
        ("cv-linear", Filter::OpenCv(CvInterpolation::Linear)),
        ("cv-linear-exact", Filter::OpenCv(CvInterpolation::LinearExact)),
        ("cv-area", Filter::OpenCv(CvInterpolation::Area)),
        ("cv-cubic", Filter::OpenCv(CvInterpolation::Cubic)),
        ("cv-lanczos4", Filter::OpenCv(CvInterpolation::Lanczos4)),
        ("pil-nearest", Filter::Pillow(PilFilter::Nearest)),
        ("pil-box", Filter::Pillow(PilFilter::Box)),
        ("pil-bilinear", Filter::Pillow(PilFilter::Bilinear)),
        ("pil-hamming", Filter::Pillow(PilFilter::Hamming)),
        ("pil-bicubic", Filter::Pillow(PilFilter::Bicubic)),
        ("pil-lanczos", Filter::Pillow(PilFilter::Lanczos)),
    ];

    /// Its name (`cv-linear`, `pil-bicubic`, ...).
    pub fn name(self) -> &'static str {
        Filter::ALL.iter().find(|(_, f)| *f == self).map(|(n, _)| *n).expect("every filter is named")
    }
}

impl std::fmt::Display for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Filter {
    type Err = Error;
    fn from_str(s: &str) -> Result<Filter> {
        Filter::ALL.iter().find(|(n, _)| *n == s).map(|(_, f)| *f).ok_or_else(|| Error::InvalidParameter {
            what: "the resize filter".into(),
            why: format!(
                "{s:?} is none of {}",
                Filter::ALL.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ),
        })
    }
}

/// The part of the source a resize reads, in source pixels: from `(x0, y0)` to `(x1, y1)`.
/// Pillow's filters take fractional boxes, as `Image.resize(size, filter, box)` does (a
/// random-resized crop's box, say); OpenCV's take whole pixels, the crop a slice makes
/// before `cv2.resize` (`img[y0:y1, x0:x1]`).
///
/// ```
/// use cuimg::{Filter, Gray8, Image, SourceBox, cpu};
/// let img = Image::from_fn(8, 6, |x, y| Gray8([(x * 30 + y) as u8]));
/// let bx = SourceBox { x0: 2.0, y0: 1.0, x1: 6.0, y1: 5.0 };
/// let a = cpu::resize_box(&img.view(), 2, 2, "cv-area".parse()?, bx)?;
/// let crop = img.roi(cuimg::Rect::new(2, 1, 4, 4))?;
/// assert_eq!(a, cpu::resize(&crop, 2, 2, "cv-area".parse()?)?); // the same as resizing the crop
/// assert!(cpu::resize_box(&img.view(), 2, 2, "cv-area".parse()?, SourceBox { x1: 5.5, ..bx }).is_err());
/// assert!(cpu::resize_box(&img.view(), 2, 2, "pil-bicubic".parse()?, SourceBox { x1: 5.5, ..bx }).is_ok());
/// # Ok::<(), cuimg::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceBox {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

impl SourceBox {
    /// The whole of a `width` x `height` image.
    pub fn whole(width: u32, height: u32) -> SourceBox {
        SourceBox { x0: 0.0, y0: 0.0, x1: width as f32, y1: height as f32 }
    }

    /// Checked against a `width` x `height` source, as Pillow checks a box (inside the image,
    /// not empty, finite); for OpenCV's filters, also on whole pixels: then the crop.
    pub(crate) fn check(self, width: u32, height: u32, filter: Filter) -> Result<Option<crate::image::Rect>> {
        let SourceBox { x0, y0, x1, y1 } = self;
        let bad = |why: String| Err(Error::InvalidParameter { what: "the resize's source box".into(), why });
        if ![x0, y0, x1, y1].iter().all(|v| v.is_finite()) {
            return bad(format!("{self:?} is not finite"));
        }
        if x0 < 0.0 || y0 < 0.0 || x1 > width as f32 || y1 > height as f32 {
            return bad(format!("{self:?} reaches outside the {width} x {height} source"));
        }
        if x1 <= x0 || y1 <= y0 {
            return bad(format!("{self:?} is empty"));
        }
        match filter {
            Filter::Pillow(_) => Ok(None),
            Filter::OpenCv(_) if [x0, y0, x1, y1].iter().all(|v| v.fract() == 0.0) => Ok(Some(crate::image::Rect::new(
                x0 as u32,
                y0 as u32,
                (x1 - x0) as u32,
                (y1 - y0) as u32,
            ))),
            Filter::OpenCv(_) => bad(format!(
                "{self:?} is not on whole pixels: OpenCV's resize reads a crop of whole pixels (the Pillow filters take fractional boxes)"
            )),
        }
    }
}

/// The checks every resize makes before anything else: no empty source or output.
pub(crate) fn check_sizes(sw: u32, sh: u32, dw: u32, dh: u32) -> Result<()> {
    validate::non_empty(sw, sh)?;
    if dw == 0 || dh == 0 {
        return Err(Error::InvalidParameter {
            what: "the resize size".into(),
            why: format!("{dw} x {dh} is empty: the output needs at least one pixel"),
        });
    }
    Ok(())
}

/// The plan of a resize of a `sw` x `sh` image of `P` to `dw` x `dh` (reading Pillow's source
/// box, if given), after [`check_sizes`].
pub(crate) fn plan_boxed<P: Pixel>(
    sw: u32,
    sh: u32,
    dw: u32,
    dh: u32,
    filter: Filter,
    boxed: Option<SourceBox>,
) -> Result<plan::Plan> {
    check_sizes(sw, sh, dw, dh)?;
    let (s, d) = ((sw as usize, sh as usize), (dw as usize, dh as usize));
    Ok(match filter {
        Filter::OpenCv(mode) => cv::plan(s, P::CHANNELS, d, mode),
        Filter::Pillow(f) => pil::plan(s, P::ALPHA.is_some(), d, f, boxed.map(|b| [b.x0, b.y0, b.x1, b.y1])),
    })
}


/// What a plan is a function of: the sizes, the filter, what the pixel's channels change
/// (their count for OpenCV, alpha for Pillow), and Pillow's box, bit for bit.
type PlanKey = (u32, u32, u32, u32, Filter, usize, bool, Option<[u32; 4]>);

/// Most plans [`plan_cached`] keeps; past it, it starts again (a pipeline's sizes repeat).
const CACHED_PLANS: usize = 512;

/// The kept plans by key (see [`plans_cached`]).
static PLANS: Mutex<Option<FxHashMap<PlanKey, Arc<plan::Plan>>>> = Mutex::new(None);

/// [`plan_boxed`], kept for the process: the GPU forms plan each size and filter once, not
/// once per call (a Pillow Lanczos plan of a photo takes a tenth of a millisecond, more
/// than its kernels; the benchmark's per-call times were mostly that). Plans are pure
/// functions of their key, so a kept one is the one a new call would make.
pub(crate) fn plan_cached<P: Pixel>(
    sw: u32,
    sh: u32,
    dw: u32,
    dh: u32,
    filter: Filter,
    boxed: Option<SourceBox>,
) -> Result<Arc<plan::Plan>> {
    let (mut plans, _keep) = plans_cached::<P>(&[((sw, sh), (dw, dh), boxed)], filter)?;
    Ok(plans.pop().expect("one plan asked for"))
}

/// One resize to plan: the source's size, the output's, Pillow's box.
pub(crate) type PlanRequest = ((u32, u32), (u32, u32), Option<SourceBox>);

/// A call's new plans, kept when this is dropped: a batch call holds it until its launches
/// are queued, so that keeping them, and the table's clearing (which frees the plans it
/// held), run while the GPU works. Before the launch they were 17 to 40 us of a call of
/// new sizes on the lent host.
#[must_use = "dropped, it keeps the plans at once: hold it until the launches are queued"]
pub(crate) struct Keep(Vec<(PlanKey, Arc<plan::Plan>)>);

impl Drop for Keep {
    fn drop(&mut self) {
        use crate::runtime::knobs::{host_span_end, host_span_start};
        if self.0.is_empty() {
            return;
        }
        let keep = host_span_start();
        let mut plans = PLANS.lock().unwrap_or_else(|e| e.into_inner());
        let plans = plans.get_or_insert_default();
        if plans.len() + self.0.len() > CACHED_PLANS {
            plans.clear();
        }
        plans.extend(self.0.drain(..));
        host_span_end("plans: keep", keep);
    }
}

/// [`plan_cached`] for many requests (a batch): the kept plans found under one lock (a
/// lock per image, taken by all cores at once, cost more than the lookups), the others
/// planned from their kept axes; those are kept when the [`Keep`] is dropped.
pub(crate) fn plans_cached<P: Pixel>(requests: &[PlanRequest], filter: Filter) -> Result<(Vec<Arc<plan::Plan>>, Keep)> {
    use crate::runtime::knobs::host_span;
    let key = |&((sw, sh), (dw, dh), boxed): &PlanRequest| -> PlanKey {
        let bits = boxed.map(|b| [b.x0.to_bits(), b.y0.to_bits(), b.x1.to_bits(), b.y1.to_bits()]);
        (sw, sh, dw, dh, filter, P::CHANNELS, P::ALPHA.is_some(), bits)
    };
    let found: Vec<Option<Arc<plan::Plan>>> = host_span("plans: lookup", || {
        let mut plans = PLANS.lock().unwrap_or_else(|e| e.into_inner());
        let plans = plans.get_or_insert_default();
        requests.iter().map(|r| plans.get(&key(r)).cloned()).collect()
    });
    // Planned outside the lock: other threads' lookups do not wait for it.
    let plan = |&((sw, sh), (dw, dh), boxed): &PlanRequest| plan_boxed::<P>(sw, sh, dw, dh, filter, boxed).map(Arc::new);
    let new = || (0..requests.len()).filter(|&i| found[i].is_none());
    // Plans are their axes (`axis.rs`, `cv.rs`), each made once: a plan of kept axes is
    // lookups, so plans are made one by one (on all cores, 256 such plans took 0.4 to 2.5
    // ms on a 16-core host, the threads waiting on the lock and each other). Pillow's axes
    // are looked up together, the new ones made together on all cores.
    let made: Vec<(usize, Arc<plan::Plan>)> = host_span("plans: make", || match filter {
        Filter::Pillow(f) => pillow_plans::<P>(requests, new(), f),
        Filter::OpenCv(_) => new().map(|i| Ok((i, plan(&requests[i])?))).collect(),
    })?;
    let mut out = found;
    let mut keep = Vec::with_capacity(made.len());
    for (i, p) in made {
        keep.push((key(&requests[i]), p.clone()));
        out[i] = Some(p);
    }
    Ok((out.into_iter().map(|p| p.expect("found or made")).collect(), Keep(keep)))
}

/// The plans of Pillow's requests `new` (after [`check_sizes`], as [`plan_boxed`]), all
/// their axes looked up under one lock (`axis::axes`), the new ones made together.
fn pillow_plans<P: Pixel>(
    requests: &[PlanRequest],
    new: impl Iterator<Item = usize> + Clone,
    f: PilFilter,
) -> Result<Vec<(usize, Arc<plan::Plan>)>> {
    let sizes = |i: usize| {
        let ((sw, sh), (dw, dh), boxed) = requests[i];
        ((sw as usize, sh as usize), (dw as usize, dh as usize), boxed.map(|b| [b.x0, b.y0, b.x1, b.y1]))
    };
    let (mut args, mut ends) = (Vec::new(), Vec::new());
    for i in new.clone() {
        let ((sw, sh), (dw, dh), _) = requests[i];
        check_sizes(sw, sh, dw, dh)?;
        let (s, d, b) = sizes(i);
        args.extend(pil::axes_of(s, d, f, b));
        ends.push(args.len());
    }
    // Moved into the plans, not cloned (a batch's 512 axes: 2048 atomic counts fewer).
    let mut axes = args.iter().copied().zip(axis::axes(&args, f));
    let mut start = 0;
    let plans = new.zip(ends).map(|(i, end)| {
        // Each plan asks for its axes in the order `axes_of` named them.
        let mut given = axes.by_ref().take(end - start);
        start = end;
        let plan = {
            let mut axis_of = |a| match given.next() {
                Some((g, x)) if axis::same(g, a) => x,
                _ => {
                    debug_assert!(false, "{a:?}: `axes_of` names a plan's axes in the order it asks for them");
                    axis::axis(a, f)
                }
            };
            let (s, d, b) = sizes(i);
            pil::plan_with(s, P::ALPHA.is_some(), d, f, b, &mut axis_of)
        };
        given.for_each(drop); // (none: each plan takes every axis named for it)
        (i, Arc::new(plan))
    });
    Ok(plans.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Gray8, Rgba8};

    /// The tests that plan through the process's table, one at a time (one's keeping may
    /// clear what another has just kept).
    static TABLE: Mutex<()> = Mutex::new(());

    /// A batch's plans, planned together (its axes looked up and made together), are each
    /// size's own: every Pillow filter, with sizes repeated in the batch, copies, boxes,
    /// images so tall `Image.resize` makes two calls, alpha; and a bad size's error is
    /// the one its own plan gives.
    #[test]
    fn a_batchs_plans_are_each_sizes_own() {
        let _table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        use rand::{Rng, SeedableRng};
        let mut r = rand::rngs::SmallRng::seed_from_u64(23);
        let mut requests: Vec<PlanRequest> = (0..40).map(|_| ((r.random_range(1..=90), r.random_range(1..=90)), (r.random_range(1..=50), r.random_range(1..=50)), None)).collect();
        requests.extend_from_within(..5);
        let boxed = |x0, y0, x1, y1| Some(SourceBox { x0, y0, x1, y1 });
        requests.extend([
            ((64, 48), (64, 48), None),
            ((64, 48), (64, 48), boxed(0.5, 0.0, 64.0, 48.0)),
            ((64, 48), (30, 20), boxed(3.25, 1.5, 60.0, 47.0)),
            ((3, 700), (2, 5), None),
            ((3, 700), (3, 5), boxed(0.0, 10.5, 3.0, 650.0)),
            ((1, 1), (7, 3), None),
        ]);
        for (_, filter) in Filter::ALL {
            let want = |request: &PlanRequest| {
                let ((sw, sh), (dw, dh), b) = *request;
                (plan_boxed::<Rgba8>(sw, sh, dw, dh, filter, b).unwrap(), plan_boxed::<Gray8>(sw, sh, dw, dh, filter, b).unwrap())
            };
            // (OpenCV's filters take no box.)
            let requests: Vec<PlanRequest> =
                requests.iter().copied().filter(|q| matches!(filter, Filter::Pillow(_)) || q.2.is_none()).collect();
            let (alpha, gray) = (plans_cached::<Rgba8>(&requests, filter).unwrap().0, plans_cached::<Gray8>(&requests, filter).unwrap().0);
            for (i, q) in requests.iter().enumerate() {
                let (a, g) = want(q);
                assert_eq!(*alpha[i], a, "{filter:?} {q:?}");
                assert_eq!(*gray[i], g, "{filter:?} {q:?}");
            }
            let bad = [requests[0], ((5, 5), (0, 3), None), requests[1]];
            let e = plans_cached::<Gray8>(&bad, filter).err().map(|e| e.to_string());
            assert_eq!(e, plan_boxed::<Gray8>(5, 5, 0, 3, filter, None).err().map(|e| e.to_string()), "{filter:?}");
            assert!(e.is_some());
        }
    }

    /// New plans are kept when the call's `Keep` is dropped (after its launches), not before:
    /// a lookup meanwhile makes them again; one after finds the kept ones.
    #[test]
    fn new_plans_are_kept_when_the_keep_is_dropped() {
        let _table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        let filter = Filter::Pillow(PilFilter::Bicubic);
        // Sizes no other test plans (the table is the process's).
        let requests: Vec<PlanRequest> = (0..3).map(|i| ((1000 + i, 999), (17, 13), None)).collect();
        let (first, keep) = plans_cached::<Gray8>(&requests, filter).unwrap();
        let (meanwhile, again) = plans_cached::<Gray8>(&requests, filter).unwrap();
        assert!(first.iter().zip(&meanwhile).all(|(a, b)| !Arc::ptr_eq(a, b) && a == b), "not kept before the drop");
        drop((keep, again));
        let (after, none) = plans_cached::<Gray8>(&requests, filter).unwrap();
        assert!(none.0.is_empty(), "nothing new");
        assert!(after.iter().zip(&meanwhile).all(|(a, b)| Arc::ptr_eq(a, b)), "the last kept");
    }
}
