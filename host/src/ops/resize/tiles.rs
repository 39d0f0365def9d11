//! How the resize launches cover their jobs: pixels a thread, or tiles of output rows
//! whose source rows are summed once into shared memory (see `ResizeSeparable`), and the
//! choice of a tile's rows.

use std::borrow::Borrow;
use std::sync::atomic::{AtomicU32, Ordering};

use cuimg_abi::resize::{PILLOW_MMA_TILE_ROWS, SEPARABLE_THREADS, SEPARABLE_TILE_ROWS, SEPARABLE_TILE_W};

/// How a launch covers its jobs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    /// 32 x 8 threads a block, each making this many output pixels of a row side by side.
    Pixels(u64),
    /// The separable kernels' tiles (see `ResizeSeparable`): `SEPARABLE_THREADS` a block,
    /// one block a tile of `SEPARABLE_TILE_W` columns by `rows`, `words` i32 of shared memory.
    Tiles { rows: u32, words: u32 },
}

impl Shape {
    pub fn block(self) -> (u32, u32) {
        match self {
            Shape::Pixels(_) => (32, 8),
            Shape::Tiles { .. } => (SEPARABLE_THREADS, 1),
        }
    }

    pub fn smem(self) -> u32 {
        match self {
            Shape::Pixels(_) => 0,
            Shape::Tiles { words, .. } => words * 4,
        }
    }

    /// The threads along x and y a job of this extent takes.
    pub fn threads(self, (w, h): (u32, u32)) -> (u64, u64) {
        match self {
            Shape::Pixels(per) => ((w as u64).div_ceil(per), h as u64),
            Shape::Tiles { rows, .. } => {
                ((w as u64).div_ceil(SEPARABLE_TILE_W as u64) * SEPARABLE_THREADS as u64, (h as u64).div_ceil(rows as u64))
            }
        }
    }
}

/// Most dynamic shared memory a separable tile takes (what every CUDA GPU gives a block
/// without opting in).
const TILE_BYTES: u32 = 48 * 1024;

/// The heights a tile may take: 1 to `SEPARABLE_TILE_ROWS` rows (any, not only powers of
/// two: a halving with 4 taps in tiles of 31 rows sums 64 source rows, a whole number of
/// the block's passes, where tiles of 32 would not fit 48 KiB and tiles of 16 sum 34), or
/// for Pillow's `_mma` kernels to `PILLOW_MMA_TILE_ROWS`: the spans are kept for every
/// height any kernel takes, and each launch chooses among its kernel's (`tile_shape`).
pub(super) const TILE_HEIGHTS: usize = PILLOW_MMA_TILE_ROWS as usize;

/// The source rows a tile of `i + 1` output rows reads at most ([`NO_SPAN`] where the rows
/// do not start in order, or for plans without tiles); worked out once per plan and kept
/// with its tables (`resident.rs`). Plain `u32`s, not options: the tile choice takes the
/// largest of each height over a batch's jobs, which over options took 4.3 us for 256 jobs
/// (unvectorized), and over `u32`s vectorizes.
pub(super) type Spans = [u32; TILE_HEIGHTS];

/// No span (see [`Spans`]): a real span that large would not fit a tile either.
pub(super) const NO_SPAN: u32 = u32::MAX;

/// The source rows a tile of `i + 1` output rows reads, at most over the tiles of an output
/// whose rows read from `first` on, `taps` each (see `ResizeSeparable`); [`NO_SPAN`] for tiles of
/// several rows where the rows do not start in order (a tile's rows would not be one run).
/// Tile by tile for each height: about `n * ln(TILE_HEIGHTS)` steps for `n` rows (a row by
/// height took 24 us a plan of 224 rows, the most of a batch's new plans' host time).
pub(super) fn tile_spans(first: &[i32], taps: usize) -> Spans {
    let ordered = first.windows(2).all(|w| w[0] <= w[1]);
    let n = first.len();
    std::array::from_fn(|i| {
        if !(ordered || i == 0) {
            return NO_SPAN;
        }
        // Each tile's last row's taps' end less its first row's first.
        let rows = i + 1;
        let most = (0..n)
            .step_by(rows)
            .map(|y| first[(y + rows).min(n) - 1] as i64 + taps as i64 - first[y] as i64)
            .fold(0i64, i64::max);
        u32::try_from(most).unwrap_or(NO_SPAN)
    })
}

/// The tile height forced by [`force_tile_rows`] (0: none).
static FORCED_ROWS: AtomicU32 = AtomicU32::new(0);

/// For tests: tiles of `rows` output rows from now on, in every launch where they fit and
/// its kernel takes them (the model's choice elsewhere, and for 0), so that every height
/// runs, not only those the model picks for the sizes tested. Any height that fits gives
/// the same bytes; only the time differs. Not part of the API.
pub fn force_tile_rows(rows: u32) {
    FORCED_ROWS.store(rows, Ordering::Relaxed);
}

/// The height [`force_tile_rows`] forces (0: none), for `replay.rs`.
pub(super) fn forced_rows() -> u32 {
    FORCED_ROWS.load(Ordering::Relaxed)
}

/// How much faster an SM makes tiles with two or more of its blocks busy than with one:
/// the tiles are bound by issuing instructions once two share an SM (on the H100, 0.67 a
/// cycle per scheduler with three), so three resident tiles are not three times one.
const SM_SPEEDUP: u64 = 2;

/// A tile's time besides its source rows and output rows, in the units of a thread's rows
/// (see [`tile_shape`]): its job and tables read, its barriers, its blocks' start. Fitted
/// to session 15's sweep of every height on the batch of 256 photos to 224x224 (cubic):
/// a wave of resident tiles took about 2.95 + 0.129 x (source rows a tile sums) us, so the
/// rest of a tile is about 5.7 thread rows beside the source rows, its output rows (1 to
/// 2) among them. With 2 here, the model gave that batch tiles of 15 rows (the area's, 15
/// and 21), 12% slower than the 24 it now gives; 4 still gave the area 21.
const TILE_REST: u64 = 5;

/// The separable kernels' most rows (`SEPARABLE_TILE_ROWS`).
const SEPARABLE: usize = SEPARABLE_TILE_ROWS as usize;
const _: () = assert!(SEPARABLE <= TILE_HEIGHTS);

/// Each of the first `N` heights' largest span over `jobs` (the others 0): a loop of a
/// constant length, which vectorizes (over a slice of the heights a launch takes, or all
/// `TILE_HEIGHTS` for the separable kernels' 32, a batch of 256 took 2 us more).
fn most_spans<S: Borrow<Spans>, const N: usize>(jobs: &[(S, u32, u32)]) -> [u32; TILE_HEIGHTS] {
    let mut most = [0u32; N];
    for (spans, ..) in jobs {
        let head: &[u32; N] = spans.borrow().first_chunk().expect("N is at most TILE_HEIGHTS");
        for (m, &s) in most.iter_mut().zip(head) {
            *m = (*m).max(s);
        }
    }
    let mut all = [0u32; TILE_HEIGHTS];
    all[..N].copy_from_slice(&most);
    all
}

/// One job as the tile choice sees it: its plan's spans (borrowed from the stream's record
/// of resident plans, not copied), its output's height and width.
pub(super) type TileRows<'a> = (&'a Spans, u32, u32);

/// The rows of a tile (see `ResizeSeparable`) for every job of a launch, and the shared
/// words it then needs, for values of `value_bytes` (4: the separable kernels' sums; 1:
/// Pillow's bytes); `None` where even one row's taps do not fit.
///
/// Of the rows that fit, the least time modelled as the tiles on the busiest of `sms`
/// multiprocessors, one after another, each taking the source rows a thread sums (two rows
/// an iteration, the block `SEPARABLE_THREADS / SEPARABLE_TILE_W` rows apart: a span of 34
/// rows takes 5 iterations, of 32 rows 4), the output rows it makes (16 a pass) and the rest
/// of a tile ([`TILE_REST`]); an SM with two tiles or more makes them [`SM_SPEEDUP`] times as fast
/// as one alone. Tall tiles share more source rows between output rows, but a small output
/// in tall tiles is a few tiles on a GPU of a hundred SMs (1080p to 224x224 is 56 tiles of
/// 16 rows), each summing its rows one after another; short tiles sum rows twice, and past
/// one tile an SM they queue. Ties go to the taller tile.
pub(super) fn tile_shape<S: Borrow<Spans>>(
    jobs: &[(S, u32, u32)],
    channels: usize,
    value_bytes: u32,
    max_rows: u32,
    sms: u64,
) -> Option<Shape> {
    let heights = (max_rows as usize).clamp(1, TILE_HEIGHTS);
    let per_row = SEPARABLE_TILE_W * channels as u32 * value_bytes;
    // The jobs summed once (a batch is 256 of them, and 32 heights are weighed): each
    // height's largest span (none where a job has none), and the outputs' distinct sizes.
    // Branch-free: a height some job has no span for is `NO_SPAN`, the largest `u32`.
    // Only the heights the kernel takes: the spans run to `TILE_HEIGHTS`, twice the
    // separable kernels' most.
    let most = match heights <= SEPARABLE {
        true => most_spans::<S, SEPARABLE>(jobs),
        false => most_spans::<S, TILE_HEIGHTS>(jobs),
    };
    let most: [Option<u32>; TILE_HEIGHTS] = most.map(|m| (m != NO_SPAN).then_some(m));
    // One output size for all (the ML case) needs no sort.
    let distinct: Vec<((u32, u32), u64)> = match jobs.first().map(|&(_, h, w)| (w, h)) {
        Some(one) if jobs.iter().all(|&(_, h, w)| (w, h) == one) => vec![(one, jobs.len() as u64)],
        _ => {
            let mut sizes: Vec<(u32, u32)> = jobs.iter().map(|&(_, h, w)| (w, h)).collect();
            sizes.sort_unstable();
            sizes.chunk_by(|a, b| a == b).map(|run| (run[0], run.len() as u64)).collect()
        }
    };
    let span = |i: usize| -> Option<u32> { most[i].filter(|m| m.checked_mul(per_row).is_some_and(|b| b <= TILE_BYTES)) };
    let tiles = |rows: u32| -> u64 {
        distinct
            .iter()
            .map(|&((w, h), n)| n * (w as u64).div_ceil(SEPARABLE_TILE_W as u64) * (h as u64).div_ceil(rows as u64))
            .sum()
    };
    let forced = forced_rows() as usize;
    if (1..=heights).contains(&forced)
        && let Some(most) = span(forced - 1)
    {
        return Some(Shape::Tiles { rows: forced as u32, words: (most * per_row).div_ceil(4) });
    }
    let pass = (SEPARABLE_THREADS / SEPARABLE_TILE_W) as u64;
    let mut best: Option<(u64, Shape)> = None;
    for i in (0..heights).rev() {
        let rows = i as u32 + 1;
        let Some(most) = span(i) else { continue };
        // A thread's source rows, its output rows (16 a pass), and the rest of a tile.
        let per_thread = 2 * (most as u64).div_ceil(2 * pass)
            + (rows as u64).div_ceil((SEPARABLE_THREADS / (SEPARABLE_TILE_W / 4)) as u64);
        let per_sm = tiles(rows).div_ceil(sms.max(1));
        let cost = per_sm * (per_thread + TILE_REST) * SM_SPEEDUP / per_sm.clamp(1, SM_SPEEDUP);
        if best.as_ref().is_none_or(|&(c, _)| cost < c) {
            best = Some((cost, Shape::Tiles { rows, words: (most * per_row).div_ceil(4) }));
        }
    }
    best.map(|(_, shape)| shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row-by-row form `tile_spans` replaced: each row closes the tiles it ends.
    fn tile_spans_by_rows(first: &[i32], taps: usize) -> Spans {
        let ordered = first.windows(2).all(|w| w[0] <= w[1]);
        let mut most = [0i64; TILE_HEIGHTS];
        let mut start = [0i64; TILE_HEIGHTS];
        for (y, &f) in first.iter().enumerate() {
            for (i, rows) in (0..TILE_HEIGHTS).map(|i| (i, i + 1)) {
                if y % rows == 0 {
                    start[i] = f as i64;
                }
                if y % rows == rows - 1 || y + 1 == first.len() {
                    most[i] = most[i].max(f as i64 + taps as i64 - start[i]);
                }
            }
        }
        std::array::from_fn(|i| if ordered || i == 0 { u32::try_from(most[i]).unwrap_or(NO_SPAN) } else { NO_SPAN })
    }

    #[test]
    fn tile_spans_match_the_row_by_row_form() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(28);
        for _ in 0..2000 {
            let n = rng.random_range(0..300);
            let taps = rng.random_range(1..40);
            let mut f = rng.random_range(-5..50);
            let mut first: Vec<i32> = (0..n)
                .map(|_| {
                    f += rng.random_range(0..4);
                    f
                })
                .collect();
            if rng.random_bool(0.2) && n > 1 {
                first.swap(0, n - 1); // out of order
            }
            assert_eq!(tile_spans(&first, taps), tile_spans_by_rows(&first, taps), "{first:?}, {taps} taps");
        }
    }

    #[test]
    fn tile_spans_are_the_rows_each_tile_reads() {
        // Output row y reads rows 2y .. 2y + 4 (a halving with 4 taps), 37 rows: a tile of
        // r rows reads 2 (r - 1) + 4, but where the last tile is shorter and no other is
        // whole (r > 37 / 2: the first tile's rows alone).
        let first: Vec<i32> = (0..37).map(|y| 2 * y).collect();
        let spans = tile_spans(&first, 4);
        for rows in 1..=TILE_HEIGHTS {
            // From 37 rows on, one tile: all of them.
            assert_eq!(spans[rows - 1], 2 * (rows.min(37) as u32 - 1) + 4, "{rows} rows");
        }
        // Rows out of order: only one-row tiles, which read their own taps.
        let spans = tile_spans(&[0, 3, 1], 2);
        assert_eq!(spans[0], 2);
        assert!(spans[1..].iter().all(|&s| s == NO_SPAN));
        assert_eq!(tile_spans(&[], 8), [0; TILE_HEIGHTS]);
    }

    #[test]
    fn tiles_are_the_tallest_that_fit_and_leave_the_gpu_busy() {
        let shape = |first: Vec<i32>, taps, (w, h), channels, resident| {
            tile_shape(&[(tile_spans(&first, taps), h, w)], channels, 4, SEPARABLE_TILE_ROWS, resident)
        };
        // An x2 upscale to 4K RGB8 with 8 taps: tiles of 32 rows (60 x 68 of them, sums of
        // 31 / 2 + 8 = 23 rows) take 31 an SM of 10 each, tiles of 16 take 62 of 7.
        let big = shape((0..2160).map(|y| y / 2).collect(), 8, (3840, 2160), 3, 132);
        assert!(matches!(big, Some(Shape::Tiles { rows: 32, words }) if words == 23 * 64 * 3), "{big:?}");
        // 8K to 4K RGB8 with 4 taps: tiles of 32 rows would sum 66 rows, more than 48 KiB;
        // tiles of 31 sum 64, 8 iterations of the block's two rows of 4; tiles of 16 sum 34,
        // 5 iterations, twice as many tiles.
        let halving = shape((0..2160).map(|y| 2 * y).collect(), 4, (3840, 2160), 3, 132);
        assert!(matches!(halving, Some(Shape::Tiles { rows: 31, words }) if words == 64 * 64 * 3), "{halving:?}");
        // 1080p to 224x224 (rows 4.82 apart, 4 taps): 56 tiles of 16 rows, one an SM, each
        // summing 76 rows, against 180 tiles of 5 rows summing 24, two on the busiest SMs
        // (of 3 rows: 300 tiles, three on some).
        let small = shape((0..224).map(|y| (y as f64 * 1080.0 / 224.0) as i32).collect(), 4, (224, 224), 3, 132);
        assert!(matches!(small, Some(Shape::Tiles { rows: 5, .. })), "{small:?}");
        // A span too tall for shared memory at 4 rows (16 rows apart, 8 taps: 56 rows of
        // 1 KiB): the tallest that fits.
        let tall = shape((0..64).map(|y| 16 * y).collect(), 8, (4096, 1024), 4, 1);
        assert!(matches!(tall, Some(Shape::Tiles { rows: 3, .. })), "{tall:?}");
    }

    /// The benchmark's batch (256 photos 640x480 within 20% a side, to 224x224) takes tiles
    /// of 24 rows for OpenCV's cubic and area (each of its two launches), 25 for the linear:
    /// session 15's sweep measured 24 rows 12% (cubic, 246 -> 217 us queued) and 8% (area)
    /// faster than the 15 the model gave before [`TILE_REST`] was fitted, 20 to 22 rows
    /// between the two, and the linear's 25 as fast as any.
    #[test]
    fn the_photo_batch_takes_the_tiles_measured_best() {
        use crate::ops::resize::plan::{Plan, area_taps};
        use crate::ops::resize::{CvInterpolation, cv};
        use rand::{Rng, SeedableRng};
        let mut r = rand::rngs::SmallRng::seed_from_u64(28);
        let sizes: Vec<(usize, usize)> = (0..256).map(|_| (r.random_range(512..=768), r.random_range(384..=576))).collect();
        // Per launch: the area's plans take two (lists of 4 across, and of 5).
        for (mode, want) in [(CvInterpolation::Cubic, [24, 24]), (CvInterpolation::Area, [24, 24]), (CvInterpolation::Linear, [25, 25])] {
            let mut launches: Vec<((usize, usize), Vec<Spans>)> = Vec::new();
            for &s in &sizes {
                let (taps, spans) = match cv::plan(s, 3, (224, 224), mode) {
                    Plan::Separable { x, y, .. } => ((x.taps, y.taps), tile_spans(&y.first, y.taps)),
                    Plan::Area { x, y } => {
                        let (tx, ty) = area_taps(&x, &y).expect("lists of at most 8");
                        ((tx, ty), tile_spans(&y.padded(ty).first, ty))
                    }
                    other => panic!("{mode:?}: {other:?}"),
                };
                match launches.iter_mut().find(|(t, _)| *t == taps) {
                    Some((_, v)) => v.push(spans),
                    None => launches.push((taps, vec![spans])),
                }
            }
            launches.sort_by_key(|(t, _)| *t);
            for (i, (taps, spans)) in launches.iter().enumerate() {
                let jobs: Vec<(&Spans, u32, u32)> = spans.iter().map(|s| (s, 224, 224)).collect();
                let got = tile_shape(&jobs, 3, 4, SEPARABLE_TILE_ROWS, 132);
                assert!(matches!(got, Some(Shape::Tiles { rows, .. }) if rows == want[i]), "{mode:?} {taps:?}: {got:?}");
            }
        }
    }

    /// The shape as the jobs one by one make it (each height's spans and tiles summed
    /// job by job, as the first form did): the one-pass sums choose the same.
    #[test]
    fn a_ragged_batch_gets_the_shape_its_jobs_one_by_one_give() {
        let one_by_one = |jobs: &[(Spans, u32, u32)], channels: usize, sms: u64| {
            let per_row = SEPARABLE_TILE_W * channels as u32 * 4;
            let pass = (SEPARABLE_THREADS / SEPARABLE_TILE_W) as u64;
            let mut best: Option<(u64, u32, u32)> = None;
            for i in (0..SEPARABLE_TILE_ROWS as usize).rev() {
                let rows = i as u32 + 1;
                let Some(most) = jobs.iter().try_fold(0, |m, (s, ..)| (s[i] != NO_SPAN).then(|| s[i].max(m))) else {
                    continue;
                };
                if most * per_row > TILE_BYTES {
                    continue;
                }
                let tiles: u64 = jobs
                    .iter()
                    .map(|&(_, h, w)| (w as u64).div_ceil(SEPARABLE_TILE_W as u64) * (h as u64).div_ceil(rows as u64))
                    .sum();
                let per_thread = 2 * (most as u64).div_ceil(2 * pass)
                    + (rows as u64).div_ceil((SEPARABLE_THREADS / (SEPARABLE_TILE_W / 4)) as u64);
                let per_sm = tiles.div_ceil(sms);
                let cost = per_sm * (per_thread + TILE_REST) * SM_SPEEDUP / per_sm.clamp(1, SM_SPEEDUP);
                if best.is_none_or(|(c, ..)| cost < c) {
                    best = Some((cost, rows, (most * per_row).div_ceil(4)));
                }
            }
            best.map(|(_, rows, words)| (rows, words))
        };
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for case in 0..40 {
            let jobs: Vec<(Spans, u32, u32)> = (0..1 + next(300))
                .map(|_| {
                    let (sh, dh) = (1 + next(1200) as u32, 1 + next(400) as u32);
                    // Every fourth batch of one output size (the path without a sort).
                    let dh = if case % 4 == 0 { 224 } else { dh };
                    let first: Vec<i32> = (0..dh).map(|y| (y as u64 * sh as u64 / dh as u64) as i32).collect();
                    let w = if case % 2 == 0 { 224 } else { 1 + next(700) as u32 };
                    (tile_spans(&first, [2, 4, 8][case % 3]), dh, w)
                })
                .collect();
            let got = tile_shape(&jobs, 3, 4, SEPARABLE_TILE_ROWS, 132).map(|s| match s {
                Shape::Tiles { rows, words } => (rows, words),
                Shape::Pixels(_) => unreachable!(),
            });
            assert_eq!(got, one_by_one(&jobs, 3, 132), "case {case}");
        }
    }

}

