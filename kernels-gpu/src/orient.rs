//! Flips, transposes and quarter turns (`cuimg_abi::orient`): each thread copies one output
//! pixel from the source pixel the mapping names.

use crate::common::batch_image;
use crate::device::shared;
use crate::device::thread::{
    block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, grid_stride_x, grid_stride_y, sync_threads, thread_idx_x,
    thread_idx_y,
};
use cuimg_abi::orient::{Mapping, OrientBatch, OrientPitched};
use cuimg_abi::orient::{TILE, TILE_ROWS};

/// Output rows `0..d_height` of `d_width` pixels of `C` bytes, each read from the source
/// pixel `mapping.source` names.
///
/// # Safety
/// `src` holds `s_height` rows of `s_width` pixels at `s_pitch`; `dst` holds `d_height`
/// rows of `d_width` pixels at `d_pitch`; the sizes are equal, or swapped when
/// `mapping.swap`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn orient<const C: usize>(
    src: *const u8,
    s_pitch: u64,
    (s_width, s_height): (u64, u64),
    dst: *mut u8,
    d_pitch: u64,
    (d_width, d_height): (u64, u64),
    mapping: Mapping,
) {
    for y in grid_stride_y(d_height) {
        for x in grid_stride_x(d_width) {
            let (sx, sy) = mapping.source(x, y, s_width, s_height);
            let from = (sy * s_pitch + sx * C as u64) as usize;
            let to = (y * d_pitch + x * C as u64) as usize;
            for c in 0..C {
                // SAFETY: (x, y) is inside the output and (sx, sy) inside the source (the
                // mapping maps one rectangle onto the other).
                unsafe { *dst.add(to + c) = *src.add(from + c) };
            }
        }
    }
}

/// A pixel of `C` bytes at `p`, packed little-endian into a `u32`.
///
/// # Safety
/// `p` holds `C` readable bytes.
#[inline(always)]
unsafe fn load<const C: usize>(p: *const u8) -> u32 {
    let mut v = 0u32;
    for c in 0..C {
        // SAFETY: the caller's contract.
        v |= (unsafe { *p.add(c) } as u32) << (8 * c);
    }
    v
}

/// Writes the `C` bytes of `v` (as [`load`] packed them) to `p`.
///
/// # Safety
/// `p` holds `C` writable bytes.
#[inline(always)]
unsafe fn store<const C: usize>(p: *mut u8, v: u32) {
    for c in 0..C {
        // SAFETY: the caller's contract.
        unsafe { *p.add(c) = (v >> (8 * c)) as u8 };
    }
}

/// The orientations that swap rows and columns (transposes and quarter turns), through
/// shared memory: per `TILE` x `TILE` tile of the output, the block reads the source tile
/// it comes from along the source's rows, then writes the output tile along its rows, so
/// both sides are read and written row by row (the per-pixel form reads a quarter turn's
/// source down its columns). A block of `TILE` x `TILE_ROWS` threads takes tiles in a
/// grid-stride loop; `TILE * (TILE + 1)` `u32`s of shared memory (the extra column keeps
/// a column's reads on distinct banks).
///
/// # Safety
/// As [`orient`], with `mapping.swap` set; the launch is 2-D with blocks of `TILE` x
/// `TILE_ROWS` threads and `cuimg_abi::orient::TILED_SHARED_BYTES` of shared memory.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn orient_tiled<const C: usize>(
    src: *const u8,
    s_pitch: u64,
    (s_width, s_height): (u64, u64),
    dst: *mut u8,
    d_pitch: u64,
    (d_width, d_height): (u64, u64),
    mapping: Mapping,
) {
    let tile = shared::dynamic::<u32>();
    let (tx, ty) = (thread_idx_x() as u64, thread_idx_y() as u64);
    let t = TILE as u64;
    let (tiles_x, tiles_y) = (d_width.div_ceil(t), d_height.div_ceil(t));
    let mut by = block_idx_y() as u64;
    while by < tiles_y {
        let mut bx = block_idx_x() as u64;
        while bx < tiles_x {
            let (x0, y0) = (bx * t, by * t);
            let (w, h) = ((d_width - x0).min(t), (d_height - y0).min(t));
            // Output (x0 + lx, y0 + ly) reads source (sx(ly), sy(lx)): the source tile is
            // columns sx over ly < h and rows sy over lx < w, each a contiguous run.
            let (sx0, sy0) = {
                let (a, b) = mapping.source(x0, y0, s_width, s_height);
                let (c, d) = mapping.source(x0 + w - 1, y0 + h - 1, s_width, s_height);
                (a.min(c), b.min(d))
            };
            // Load: source rows sy0 + r (r < w), columns sx0 + tx (tx < h), along rows.
            let mut r = ty;
            while r < w {
                if tx < h {
                    let at = ((sy0 + r) * s_pitch + (sx0 + tx) * C as u64) as usize;
                    // SAFETY: (sx0 + tx, sy0 + r) lies in the source (the tile's image under
                    // the mapping); the tile index is below TILE * (TILE + 1).
                    unsafe { *tile.add((r * (t + 1) + tx) as usize) = load::<C>(src.add(at)) };
                }
                r += TILE_ROWS as u64;
            }
            sync_threads();
            // Write: output rows y0 + ly (ly < h), columns x0 + tx (tx < w), along rows.
            let mut ly = ty;
            while ly < h {
                if tx < w {
                    let (sx, sy) = mapping.source(x0 + tx, y0 + ly, s_width, s_height);
                    // SAFETY: (sx - sx0, sy - sy0) is a pixel this tile loaded, below
                    // (h, w), so the index is below TILE * (TILE + 1); the loads are synced.
                    let v = unsafe { *tile.add(((sy - sy0) * (t + 1) + (sx - sx0)) as usize) };
                    let at = ((y0 + ly) * d_pitch + (x0 + tx) * C as u64) as usize;
                    // SAFETY: (x0 + tx, y0 + ly) lies in the output.
                    unsafe { store::<C>(dst.add(at), v) };
                }
                ly += TILE_ROWS as u64;
            }
            // The next tile's loads wait for this tile's reads.
            sync_threads();
            bx += grid_dim_x() as u64;
        }
        by += grid_dim_y() as u64;
    }
}

macro_rules! orient_kernels {
    ($single:ident, $marker:ident, $batch:ident, $batch_marker:ident, $c:literal) => {
        /// See [`orient`]; 2-D launch over the output.
        ///
        /// # Safety
        /// As [`orient`], for the parameters' views.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $single(p: OrientPitched) {
            // SAFETY: forwarded contract (the host launches the tiled form's blocks and
            // shared memory when the mapping swaps).
            unsafe {
                let (src, dst) = (p.src.ptr(), p.dst.ptr());
                let (s, d) = ((p.s_width, p.s_height), (p.d_width, p.d_height));
                if p.mapping.swap != 0 {
                    orient_tiled::<$c>(src, p.s_pitch, s, dst, p.d_pitch, d, p.mapping)
                } else {
                    orient::<$c>(src, p.s_pitch, s, dst, p.d_pitch, d, p.mapping)
                }
            }
        }
        abi!(cuimg_abi::orient::$marker, $single);

        /// Image `blockIdx.z` of a batch: packed images, each output its source's size
        /// (swapped when `mapping.swap`).
        ///
        /// # Safety
        /// Both tables hold `gridDim.z` entries of matching sizes; 2-D launch.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $batch(p: OrientBatch) {
            // SAFETY: forwarded contract; blockIdx.z < gridDim.z.
            unsafe {
                let ((src, sw, sh), (dst, dw, dh)) = (batch_image(p.src), batch_image(p.dst));
                if p.mapping.swap != 0 {
                    orient_tiled::<$c>(src, sw * $c, (sw, sh), dst, dw * $c, (dw, dh), p.mapping)
                } else {
                    orient::<$c>(src, sw * $c, (sw, sh), dst, dw * $c, (dw, dh), p.mapping)
                }
            }
        }
        abi!(cuimg_abi::orient::$batch_marker, $batch);
    };
}

orient_kernels!(orient_c1, OrientC1, orient_c1_batch, OrientC1Batch, 1);
orient_kernels!(orient_c2, OrientC2, orient_c2_batch, OrientC2Batch, 2);
orient_kernels!(orient_c3, OrientC3, orient_c3_batch, OrientC3Batch, 3);
orient_kernels!(orient_c4, OrientC4, orient_c4_batch, OrientC4Batch, 4);
