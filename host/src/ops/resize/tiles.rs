//! How the resize launches cover their jobs: pixels a thread, or tiles of output rows
//! whose source rows are summed once into shared memory (see `ResizeSeparable`), and the
//! choice of a tile's rows.

use cuimg_abi::resize::{SEPARABLE_THREADS, SEPARABLE_TILE_ROWS, SEPARABLE_TILE_W};


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

/// The heights a tile may take: `SEPARABLE_TILE_ROWS` halved down to one row.
pub(super) const TILE_HEIGHTS: usize = SEPARABLE_TILE_ROWS.trailing_zeros() as usize + 1;

/// The source rows a tile of `SEPARABLE_TILE_ROWS >> i` output rows reads at most (`None`
/// where the rows do not start in order, or for plans without tiles); worked out once per
/// plan and kept with its tables (`resident.rs`).
pub(super) type Spans = [Option<u32>; TILE_HEIGHTS];

/// The source rows a tile of `SEPARABLE_TILE_ROWS >> i` output rows reads, at most over
/// the tiles of an output whose rows read from `first` on, `taps` each (see
/// `ResizeSeparable`); `None` for tiles of several rows where the rows do not start in
/// order (a tile's rows would not be one run). One pass over the rows.
pub(super) fn tile_spans(first: &[i32], taps: usize) -> Spans {
    let ordered = first.windows(2).all(|w| w[0] <= w[1]);
    let mut most = [0i64; TILE_HEIGHTS];
    let mut start = [0i64; TILE_HEIGHTS];
    for (y, &f) in first.iter().enumerate() {
        for (i, rows) in (0..TILE_HEIGHTS).map(|i| (i, (SEPARABLE_TILE_ROWS >> i) as usize)) {
            if y % rows == 0 {
                start[i] = f as i64;
            }
            if y % rows == rows - 1 || y + 1 == first.len() {
                most[i] = most[i].max(f as i64 + taps as i64 - start[i]);
            }
        }
    }
    std::array::from_fn(|i| if ordered || SEPARABLE_TILE_ROWS >> i == 1 { u32::try_from(most[i]).ok() } else { None })
}

/// One job as the tile choice sees it: its plan's spans, its output's height and width.
pub(super) type TileRows = (Spans, u32, u32);

/// The rows of a tile (see `ResizeSeparable`) for every job of a launch, and the shared
/// words it then needs, for values of `value_bytes` (4: the separable kernels' sums; 1:
/// Pillow's bytes); `None` where even one row's taps do not fit.
///
/// Of the rows that fit, the least time modelled as waves of `resident` tiles, one after
/// another, each taking the source rows a thread sums (a tile's rows, `SEPARABLE_THREADS /
/// SEPARABLE_TILE_W` at a time), the output rows it makes (16 a pass) and two for the rest
/// of a tile. Tall tiles share more
/// source rows between output rows, but a small output in tall tiles is a few tiles on a
/// GPU of hundreds of slots (1080p to 224x224 is 56 tiles of 16 rows), each summing its
/// rows one after another. Ties go to the taller tile.
pub(super) fn tile_shape(jobs: &[TileRows], channels: usize, value_bytes: u32, resident: u64) -> Option<Shape> {
    let per_row = SEPARABLE_TILE_W * channels as u32 * value_bytes;
    let span = |i: usize| -> Option<u32> {
        let mut most = 0;
        for (spans, ..) in jobs {
            most = most.max(spans[i]?);
        }
        (most.checked_mul(per_row)? <= TILE_BYTES).then_some(most)
    };
    let tiles = |rows: u32| -> u64 {
        jobs.iter().map(|&(_, h, w)| (w as u64).div_ceil(SEPARABLE_TILE_W as u64) * (h as u64).div_ceil(rows as u64)).sum()
    };
    let mut best: Option<(u64, Shape)> = None;
    for i in 0..TILE_HEIGHTS {
        let rows = SEPARABLE_TILE_ROWS >> i;
        let Some(most) = span(i) else { continue };
        // A thread's source rows, its output rows (16 a pass), and the rest of a tile.
        let per_thread = (most as u64).div_ceil((SEPARABLE_THREADS / SEPARABLE_TILE_W) as u64)
            + (rows as u64).div_ceil((SEPARABLE_THREADS / (SEPARABLE_TILE_W / 4)) as u64);
        let cost = tiles(rows).div_ceil(resident.max(1)) * (per_thread + 2);
        if best.as_ref().is_none_or(|&(c, _)| cost < c) {
            best = Some((cost, Shape::Tiles { rows, words: (most * per_row).div_ceil(4) }));
        }
    }
    best.map(|(_, shape)| shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_spans_are_the_rows_each_tile_reads() {
        // Output row y reads rows 2y .. 2y + 4 (a halving with 4 taps), 37 rows: the last
        // tile of 32 has 5 rows (32..37), of 16 has 5, of 8 has 5, of 4 has 1.
        let first: Vec<i32> = (0..37).map(|y| 2 * y).collect();
        assert_eq!(tile_spans(&first, 4), [Some(66), Some(34), Some(18), Some(10), Some(6), Some(4)]);
        // Rows out of order: only one-row tiles, which read their own taps.
        assert_eq!(tile_spans(&[0, 3, 1], 2), [None, None, None, None, None, Some(2)]);
        assert_eq!(tile_spans(&[], 8), [Some(0); 6]);
    }

    #[test]
    fn tiles_are_the_tallest_that_fit_and_leave_the_gpu_busy() {
        let spans = tile_spans(&(0..2160).map(|y| y / 2).collect::<Vec<_>>(), 8);
        // An x2 upscale to 4K RGB8 with 8 taps: tiles of 32 rows (60 x 68 of them, sums of
        // 31 / 2 + 8 = 23 rows) take 11 waves of 10, tiles of 16 take 21 of 7.
        let big = tile_shape(&[(spans, 2160, 3840)], 3, 4, 396);
        assert!(matches!(big, Some(Shape::Tiles { rows: 32, words }) if words == 23 * 64 * 3), "{big:?}");
        // 1080p to 224x224 (rows 4.82 apart, 4 taps): 56 tiles of 16 rows on 396 slots, each
        // summing 76 rows, against one wave of 224 tiles of 4 rows summing 19.
        let small: Vec<i32> = (0..224).map(|y| (y as f64 * 1080.0 / 224.0) as i32).collect();
        let shape = tile_shape(&[(tile_spans(&small, 4), 224, 224)], 3, 4, 396);
        assert!(matches!(shape, Some(Shape::Tiles { rows: 4, .. })), "{shape:?}");
        // A span too tall for shared memory at 16 rows: the tallest that fits.
        let tall = tile_spans(&(0..64).map(|y| 16 * y).collect::<Vec<_>>(), 8);
        let shape = tile_shape(&[(tall, 1024, 4096)], 4, 4, 1);
        assert!(matches!(shape, Some(Shape::Tiles { rows: 2, .. })), "{shape:?}");
    }
}
