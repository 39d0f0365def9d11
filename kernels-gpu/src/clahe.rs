//! CLAHE, bit-exact with OpenCV's `createCLAHE(clip, grid).apply` on 8-bit gray images
//! (`CLAHE_CalcLut_Body` and `CLAHE_Interpolation_Body` of modules/imgproc/src/clahe.cpp):
//! a table per tile, then the bilinear apply. Color images go through the same steps per
//! channel or on luma. The host's CPU reference (`host/src/ops/clahe/cpu.rs`) is the same
//! arithmetic, step for step.
//!
//! The tables: one tile's histogram would keep one block busy for the whole tile (an 8K
//! image has 64 tiles for 132 SMs), so each tile is split over `gridDim.y` blocks that add
//! their shares into a global histogram; the last one to finish (a counter per tile) clips,
//! spreads, scans and writes the table.

use crate::common::{batch_image, batch_image_at, scan_256};
use crate::device::atomic;
use crate::device::shared;
use crate::device::thread::{
    block_idx_x, block_idx_y, block_idx_z, block_stride, grid_dim_y, grid_stride_x, grid_stride_y, lane_id,
    sync_threads, thread_idx_x, warp_id,
};
use crate::device::vector;
use cuimg_abi::DevPtr;
use cuimg_abi::clahe::{
    APPLY_COLOR_PIXELS, APPLY_PIXELS, ClaheApply, ClaheApplyBatch, ClaheApplyColor, ClaheApplyColorBatch, ClaheSource,
    ClaheTables, ClaheTablesBatch, ClaheTablesColorBatch, Geometry, LUMA, TABLES_WARPS, reflect101,
};
use cuimg_abi::grayscale::Weights;

/// OpenCV's `saturate_cast<uchar>(float)`: nearest, ties to even, then clamped.
#[inline(always)]
fn saturate_u8(v: f32) -> u8 {
    core::f32::math::round_ties_even(v).clamp(0.0, 255.0) as u8
}

/// One image as a tables block reads it.
#[derive(Clone, Copy)]
struct Img {
    src: *const u8,
    pitch: u64,
    width: u32,
    height: u32,
}

/// Where one set of tables goes: the tile histograms (zeroed), the per-tile counters
/// (zeroed) and the tables.
#[derive(Clone, Copy)]
struct Set {
    hist: *mut u32,
    done: *mut u32,
    luts: *mut u8,
}

impl Set {
    /// Set number `k` of `tiles` tables each.
    ///
    /// # Safety
    /// The buffers hold at least `k + 1` sets.
    #[inline(always)]
    unsafe fn nth(hist: *mut u32, done: *mut u32, luts: *mut u8, tiles: u32, k: u32) -> Set {
        let t = (k * tiles) as usize;
        // SAFETY: the caller's contract.
        unsafe { Set { hist: hist.add(t * 256), done: done.add(t), luts: luts.add(t * 256) } }
    }
}

/// The tables body: tile `blockIdx.x`, rows `blockIdx.y` of `gridDim.y` shares of it.
/// `read(row, x)` is the value of pixel `x` of a row; `gray` allows the 16-pixel vector path
/// (one byte per pixel, read directly).
///
/// # Safety
/// Rows `0..height` of `width` pixels are readable at `src` (pitch `pitch`) and `read`
/// reads only pixel `x` of the row it gets; `set` holds `tiles_x * tiles_y` tables with
/// `blockIdx.x` below that; blocks of `TABLES_BLOCK` threads with `TABLES_SHARED_BYTES`;
/// the histograms and counters were zero when the launch began.
#[inline(always)]
unsafe fn tables(img: Img, g: Geometry, tiles_x: u32, set: Set, gray: bool, read: impl Fn(*const u8, u32) -> u32) {
    let bins = shared::dynamic::<u32>();
    let t = thread_idx_x() as usize;
    for i in block_stride(TABLES_WARPS * 256) {
        // SAFETY: i < the per-warp histograms' length.
        unsafe { *bins.add(i as usize) = 0 };
    }
    sync_threads();
    let tile = block_idx_x();
    // At least 1 (the host's checks), said so that the division cannot panic.
    let tiles_x = tiles_x.max(1);
    let (x0, y0) = ((tile % tiles_x) * g.tile_w, (tile / tiles_x) * g.tile_h);
    let share = g.tile_h.div_ceil(grid_dim_y());
    let r0 = (block_idx_y() * share).min(g.tile_h);
    let r1 = (r0 + share).min(g.tile_h);
    // SAFETY: warp_id < TABLES_WARPS: this warp's histogram.
    let mine = unsafe { bins.add(warp_id() as usize * 256) };
    let lane = lane_id();
    // The tile lies inside the image's columns (no reflection), in whole aligned vectors.
    let inside = x0 as u64 + g.tile_w as u64 <= img.width as u64;
    let vectors = gray
        && inside
        && (img.src as u64 + x0 as u64).is_multiple_of(16)
        && img.pitch.is_multiple_of(16)
        && g.tile_w.is_multiple_of(16);
    // A run of equal bytes is added once (a constant region would otherwise make every lane
    // of a warp hit one counter).
    let (mut run_v, mut run_n) = (0u32, 0u32);
    let mut r = r0 + warp_id();
    while r < r1 {
        let y = reflect101(y0 + r, img.height) as u64;
        // SAFETY: y < height.
        let row = unsafe { img.src.add((y * img.pitch) as usize) };
        if vectors {
            // SAFETY: x0 + tile_w <= width.
            let at = unsafe { row.add(x0 as usize) };
            let mut k = lane;
            while k < g.tile_w / 16 {
                // SAFETY: 16-byte aligned (checked above); 16k + 15 < tile_w: inside the row.
                let v = unsafe { vector::load(at, k as u64) };
                let b = v.byte(0);
                let splat = b * 0x0101_0101;
                if v.0 == [splat; 4] {
                    if b != run_v {
                        if run_n != 0 {
                            // SAFETY: run_v < 256.
                            unsafe { atomic::add_u32(mine.add(run_v as usize), run_n) };
                        }
                        (run_v, run_n) = (b, 0);
                    }
                    run_n += 16;
                } else {
                    for i in 0..16 {
                        // SAFETY: each byte < 256.
                        unsafe { atomic::add_u32(mine.add(v.byte(i) as usize), 1) };
                    }
                }
                k += 32;
            }
        } else {
            let mut dx = lane;
            while dx < g.tile_w {
                let x = if inside { x0 + dx } else { reflect101(x0 + dx, img.width) };
                // SAFETY: x < width; `read` returns a byte value.
                unsafe { atomic::add_u32(mine.add(read(row, x) as usize), 1) };
                dx += 32;
            }
        }
        r += TABLES_WARPS;
    }
    if run_n != 0 {
        // SAFETY: run_v < 256.
        unsafe { atomic::add_u32(mine.add(run_v as usize), run_n) };
    }
    sync_threads();
    let mut h = 0;
    for w in 0..TABLES_WARPS as usize {
        // SAFETY: bin t of warp w's histogram; the barrier ordered every count.
        h += unsafe { *bins.add(w * 256 + t) };
    }
    // SAFETY: tile < tiles: this tile's global histogram and counter.
    let (hist, done) = unsafe { (set.hist.add(tile as usize * 256), set.done.add(tile as usize)) };
    if h != 0 {
        // SAFETY: bin t of the tile's histogram.
        unsafe { atomic::add_u32(hist.add(t), h) };
    }
    // SAFETY: the two words after the per-warp histograms.
    let (last, clipped) = unsafe { (bins.add(TABLES_WARPS as usize * 256), bins.add(TABLES_WARPS as usize * 256 + 1)) };
    if t == 0 {
        // SAFETY: this block's shared word, read by `finish` after barriers.
        unsafe { *clipped = 0 };
    }
    // SAFETY: every thread is here (block-uniform); the tile's counter, which only this
    // launch's blocks of the tile touch (zeroed before it); `last` is this block's.
    if !unsafe { atomic::last_block_done(done, grid_dim_y(), last) } {
        return;
    }
    // SAFETY: bin t of the tile's histogram, complete now.
    let h = unsafe { atomic::load_u32(hist.add(t)) };
    // SAFETY: the first 256 shared words are free (read before the barriers above) and
    // `clipped` was zeroed before the last barrier; the tile's table holds 256 bytes.
    unsafe { finish(bins, clipped, t, h, g, set.luts.add(tile as usize * 256)) };
}

/// The tile's table from its histogram (`h`: bin `t`): clipped at `clip` with the excess
/// spread (`clipped / 256` to every bin, then one to each of bins `0, step, 2 step, ...`,
/// `step = max(256 / residual, 1)`, until the residual is gone), an inclusive scan, and
/// `saturate(sum * lut_scale)`.
///
/// # Safety
/// Every thread of a block of 256 calls this; `buf` has 256 free shared u32; `clipped` is
/// a shared u32, zero, written before the caller's last barrier; `lut` holds 256 bytes.
#[inline(always)]
unsafe fn finish(buf: *mut u32, clipped: *mut u32, t: usize, mut h: u32, g: Geometry, lut: *mut u8) {
    if h > g.clip {
        // SAFETY: the shared clipped count.
        unsafe { atomic::add_u32(clipped, h - g.clip) };
        h = g.clip;
    }
    sync_threads();
    // SAFETY: the barrier ordered every addition to it.
    let c = unsafe { *clipped };
    let (batch, residual) = (c / 256, c % 256);
    h += batch;
    // Written as OpenCV writes it (`if (residual != 0) { residualStep = MAX(histSize /
    // residual, 1); ... i % step ...}`), so the two read side by side.
    #[allow(clippy::manual_checked_ops, clippy::manual_is_multiple_of)]
    if residual != 0 {
        let step = (256 / residual).max(1);
        if t as u32 % step == 0 && (t as u32) / step < residual {
            h += 1;
        }
    }
    // SAFETY: t < 256; nothing reads these slots before the scan's first barrier.
    unsafe { *buf.add(t) = h };
    // SAFETY: 256 shared u32, every thread of the block here.
    unsafe { scan_256(buf, t) };
    // SAFETY: the barrier ordered the scan; the sum of a tile fits in i32 (Geometry::new).
    let sum = unsafe { *buf.add(t) } as i32;
    // SAFETY: t < 256.
    unsafe { *lut.add(t) = saturate_u8(sum as f32 * g.lut_scale) };
}

/// The tables of one image, gray or color: set `blockIdx.z` from channel `mode + z`, or
/// from the luma (`mode` = `LUMA`, one set).
///
/// # Safety
/// `tables`' contract for the image, the source (every channel offset below `channels`,
/// `mode + gridDim.z <= channels` unless `LUMA`), and `gridDim.z` sets of buffers.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_tables(p: ClaheTables) {
    let img = Img { src: p.src.ptr(), pitch: p.pitch, width: p.width, height: p.height };
    let tiles = p.tiles.x * p.tiles.y;
    let z = block_idx_z();
    // SAFETY: gridDim.z sets.
    let set = unsafe { Set::nth(p.hist.ptr(), p.done.ptr(), p.luts.ptr(), tiles, z) };
    // SAFETY: the forwarded contract.
    unsafe { source_tables(img, p.geometry, p.tiles.x, set, p.source, z) }
}

abi!(cuimg_abi::clahe::ClaheTablesKernel, clahe_tables);

/// The tables body for what `s` says to read: gray bytes, the luma, or channel `s.mode + k`.
///
/// # Safety
/// `tables`' contract for the image; every channel offset the source names (with `k`) is
/// below `s.channels`.
#[inline(always)]
unsafe fn source_tables(img: Img, g: Geometry, tiles_x: u32, set: Set, s: ClaheSource, k: u32) {
    let ch = s.channels as usize;
    // SAFETY (all three): the forwarded contract; `read` stays inside pixel x.
    if ch == 1 {
        unsafe { tables(img, g, tiles_x, set, true, |row, x| *row.add(x as usize) as u32) }
    } else if s.mode == LUMA {
        let [r, gi, b] = s.rgb.map(|c| c as usize);
        unsafe {
            tables(img, g, tiles_x, set, false, |row, x| {
                let px = row.add(x as usize * ch);
                s.weights.luma(*px.add(r) as u32, *px.add(gi) as u32, *px.add(b) as u32)
            })
        }
    } else {
        let c = (s.mode + k) as usize;
        unsafe { tables(img, g, tiles_x, set, false, |row, x| *row.add(x as usize * ch + c) as u32) }
    }
}

/// The tables of a gray batch: image `blockIdx.z`, its geometry worked out here.
///
/// # Safety
/// `src` holds `gridDim.z` entries of packed gray images, each valid for `Geometry::new`
/// with `tiles`; the buffers hold `gridDim.z` sets of `tiles.x * tiles.y` tables;
/// `tables`' launch shape.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_tables_batch(p: ClaheTablesBatch) {
    // SAFETY: the launch contract.
    let (src, width, height) = unsafe { batch_image(p.src) };
    let Some(g) = Geometry::new(width as u32, height as u32, p.tiles.x, p.tiles.y, p.tiles.clip_limit) else {
        // Never taken: the host checks every image. Block-uniform.
        return;
    };
    let img = Img { src, pitch: width, width: width as u32, height: height as u32 };
    // SAFETY: gridDim.z sets.
    let set = unsafe { Set::nth(p.hist.ptr(), p.done.ptr(), p.luts.ptr(), p.tiles.x * p.tiles.y, block_idx_z()) };
    // SAFETY: the forwarded contract.
    unsafe { tables(img, g, p.tiles.x, set, true, |row, x| *row.add(x as usize) as u32) }
}

abi!(cuimg_abi::clahe::ClaheTablesBatchKernel, clahe_tables_batch);

/// The tables of a color batch: layer `z` of `gridDim.z` = images x `sets` is set
/// `z % sets` of image `z / sets`, its geometry worked out here.
///
/// # Safety
/// `src` holds `gridDim.z / sets` entries of packed images of `source.channels` bytes per
/// pixel, each valid for `Geometry::new` with `tiles`; the source's channel offsets (with
/// `z % sets`) are below `channels`; the buffers hold `gridDim.z` sets of
/// `tiles.x * tiles.y` tables; `tables`' launch shape.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_tables_color_batch(p: ClaheTablesColorBatch) {
    let z = block_idx_z();
    // At least 1 (the host's calls), said so that the division cannot panic.
    let sets = p.sets.max(1);
    // SAFETY: z / sets < the number of images (the contract).
    let (src, width, height) = unsafe { batch_image_at(p.src, z / sets) };
    let Some(g) = Geometry::new(width as u32, height as u32, p.tiles.x, p.tiles.y, p.tiles.clip_limit) else {
        // Never taken: the host checks every image. Block-uniform.
        return;
    };
    let pitch = width * p.source.channels as u64;
    let img = Img { src, pitch, width: width as u32, height: height as u32 };
    // SAFETY: gridDim.z sets.
    let set = unsafe { Set::nth(p.hist.ptr(), p.done.ptr(), p.luts.ptr(), p.tiles.x * p.tiles.y, z) };
    // SAFETY: the forwarded contract.
    unsafe { source_tables(img, g, p.tiles.x, set, p.source, z % sets) }
}

abi!(cuimg_abi::clahe::ClaheTablesColorBatchKernel, clahe_tables_color_batch);

/// The tile rows above and below a pixel row (as offsets of their first table: tile index
/// times 256) and their weights, as OpenCV's `CLAHE_Interpolation_Body` works them out.
#[derive(Clone, Copy)]
struct Row {
    r1: usize,
    r2: usize,
    ya: f32,
    ya1: f32,
}

impl Row {
    #[inline(always)]
    fn new(y: u64, g: &Geometry, tiles: (u32, u32)) -> Row {
        let (tx, ty) = (tiles.0 as i32, tiles.1 as i32);
        let tyf = y as f32 * g.inv_th - 0.5f32;
        let t1 = core::f32::math::floor(tyf) as i32;
        let ya = tyf - t1 as f32;
        let r1 = t1.max(0) as usize * tx as usize * 256;
        let r2 = (t1 + 1).min(ty - 1) as usize * tx as usize * 256;
        Row { r1, r2, ya, ya1: 1.0f32 - ya }
    }
}

/// The tile columns left and right of a pixel column (times 256) and their weights.
#[derive(Clone, Copy)]
struct Col {
    c1: usize,
    c2: usize,
    xa: f32,
    xa1: f32,
}

impl Col {
    #[inline(always)]
    fn new(x: u64, g: &Geometry, tiles_x: u32) -> Col {
        let txf = x as f32 * g.inv_tw - 0.5f32;
        let c1 = core::f32::math::floor(txf) as i32;
        let xa = txf - c1 as f32;
        let c2 = (c1 + 1).min(tiles_x as i32 - 1) as usize * 256;
        Col { c1: c1.max(0) as usize * 256, c2, xa, xa1: 1.0f32 - xa }
    }
}

/// `v` (a byte) as f32 with one integer OR and one add (exact: `2^23 + v` is representable)
/// instead of a conversion, which runs at a quarter of the rate: with four table values per
/// pixel, conversions bounded the apply.
#[inline(always)]
fn byte_f32(v: u8) -> f32 {
    f32::from_bits(0x4B00_0000 | v as u32) - 8_388_608.0f32
}

/// [`saturate_u8`] for the apply's values, which are never below 0 nor far above 255 (a
/// weighted mean of bytes, weights in [0, 1]): adding `2^23` rounds to an integer, to
/// nearest with ties to even as `rint` does, and the integer is the low bits. No conversion
/// instructions (see [`byte_f32`]).
#[inline(always)]
fn round_u8(v: f32) -> u8 {
    let r = (v.max(0.0f32) + 8_388_608.0f32).to_bits() - 0x4B00_0000;
    r.min(255) as u8
}

/// The bilinear value of `v` through one set of tables at `luts`, in OpenCV's f32 order of
/// operations (the PTX keeps every multiply and add rounded on its own).
///
/// # Safety
/// `luts` holds the tables `r` and `c` index; `v < 256`.
#[inline(always)]
unsafe fn bilinear(luts: *const u8, r: &Row, c: &Col, v: usize) -> f32 {
    // SAFETY: the caller's contract.
    let l = |at: usize| byte_f32(unsafe { *luts.add(at + v) });
    (l(r.r1 + c.c1) * c.xa1 + l(r.r1 + c.c2) * c.xa) * r.ya1 + (l(r.r2 + c.c1) * c.xa1 + l(r.r2 + c.c2) * c.xa) * r.ya
}

/// A gray image through its tables, [`APPLY_PIXELS`] consecutive pixels of a row per
/// thread (x over `ceil(width / APPLY_PIXELS)` groups). Columns outside, rows inside: a
/// thread's column weights are worked out once for every row it visits.
///
/// # Safety
/// Rows `0..height` of `width` bytes are readable at `src` (pitch `s_pitch`) and writable at
/// `dst` (pitch `d_pitch`); `luts` holds `256 * tiles_x * tiles_y` bytes; `geometry` is
/// the image's; 2-D launch.
#[inline(always)]
unsafe fn apply_gray(p: ClaheApply) {
    const N: u64 = APPLY_PIXELS;
    let (src, dst, luts) = (p.src.ptr(), p.dst.ptr(), p.luts.ptr());
    let tiles = (p.tiles_x, p.tiles_y);
    let g = &p.geometry;
    let aligned = (p.src.addr() | p.dst.addr() | p.s_pitch | p.d_pitch).is_multiple_of(N);
    for k in grid_stride_x(p.width.div_ceil(N)) {
        let x0 = k * N;
        if aligned && x0 + N <= p.width {
            let cols: [Col; N as usize] = core::array::from_fn(|i| Col::new(x0 + i as u64, g, p.tiles_x));
            for y in grid_stride_y(p.height) {
                let r = Row::new(y, g, tiles);
                // SAFETY: N-byte aligned, x0 + N <= width: inside row y of both images.
                let (s, d) =
                    unsafe { (src.add((y * p.s_pitch + x0) as usize), dst.add((y * p.d_pitch + x0) as usize)) };
                // SAFETY: as above.
                let v = unsafe { *(s as *const u64) };
                let mut out = 0u64;
                for (i, c) in cols.iter().enumerate() {
                    // SAFETY: the tables; a byte value.
                    let o = unsafe { bilinear(luts, &r, c, (v >> (8 * i) & 0xff) as usize) };
                    out |= (round_u8(o) as u64) << (8 * i);
                }
                // SAFETY: as for the load.
                unsafe { *(d as *mut u64) = out };
            }
        } else {
            for y in grid_stride_y(p.height) {
                let r = Row::new(y, g, tiles);
                for x in x0..(x0 + N).min(p.width) {
                    let c = Col::new(x, g, p.tiles_x);
                    // SAFETY: x < width, y < height: inside both images; the tables.
                    unsafe {
                        let v = *src.add((y * p.s_pitch + x) as usize) as usize;
                        *dst.add((y * p.d_pitch + x) as usize) = round_u8(bilinear(luts, &r, &c, v));
                    }
                }
            }
        }
    }
}

/// A gray image through its tables; see [`apply_gray`].
///
/// # Safety
/// As for [`apply_gray`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_apply(p: ClaheApply) {
    // SAFETY: forwarded contract.
    unsafe { apply_gray(p) }
}

abi!(cuimg_abi::clahe::ClaheApplyKernel, clahe_apply);

/// A color image: per channel (bytes 0, 1, 2 through sets 0, 1, 2) or on luma (`out =
/// clamp(in + clahe(y) - y)`, set 0); a fourth byte (alpha) copied.
///
/// # Safety
/// As for [`apply_gray`] with rows of `width * channels` bytes, `channels` 3 or 4, `rgb`
/// offsets below 3, and 3 sets of tables per channel (1 on luma).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_apply_color(p: ClaheApplyColor) {
    // SAFETY: forwarded contract.
    unsafe { apply_color(p.image, p.source) }
}

abi!(cuimg_abi::clahe::ClaheApplyColorKernel, clahe_apply_color);

/// The body of [`clahe_apply_color`], for the batch kernel too.
///
/// # Safety
/// As for [`clahe_apply_color`]; 2-D over x (groups of [`APPLY_COLOR_PIXELS`]) and y (any
/// `gridDim.z`).
#[inline(always)]
unsafe fn apply_color(i: ClaheApply, s: ClaheSource) {
    // SAFETY (both): forwarded; `channels` is 3 or 4 (the contract).
    if s.channels == 4 { unsafe { apply_color_n::<4>(i, s) } } else { unsafe { apply_color_n::<3>(i, s) } }
}

/// The color apply for `C` bytes per pixel: [`APPLY_COLOR_PIXELS`] consecutive pixels of a
/// row per thread, their column weights made once for all the rows the thread visits, read
/// and written as `C` 4-byte words where the row allows (as [`apply_gray`] does with bytes).
///
/// # Safety
/// As for [`apply_color`], with `channels == C`.
#[inline(always)]
unsafe fn apply_color_n<const C: usize>(i: ClaheApply, s: ClaheSource) {
    const N: u64 = APPLY_COLOR_PIXELS;
    let (src, dst, luts) = (i.src.ptr(), i.dst.ptr(), i.luts.ptr());
    let set = (i.tiles_x * i.tiles_y) as usize * 256;
    let tiles = (i.tiles_x, i.tiles_y);
    let geo = &i.geometry;
    // The luma weights in byte order, picked without indexing by the channel order.
    let w = s.weights;
    let pick = |byte: u32| {
        if s.rgb[0] == byte {
            w.r
        } else if s.rgb[1] == byte {
            w.g
        } else {
            w.b
        }
    };
    let weights = Weights { r: pick(0), g: pick(1), b: pick(2), ..w };
    let luma = (s.mode == LUMA).then_some(&weights);
    // Group k starts at byte 4kC of its row: 4-byte aligned when both rows are.
    let aligned = (i.src.addr() | i.dst.addr() | i.s_pitch | i.d_pitch).is_multiple_of(4);
    for k in grid_stride_x(i.width.div_ceil(N)) {
        let x0 = k * N;
        if aligned && x0 + N <= i.width {
            let cols: [Col; N as usize] = core::array::from_fn(|p| Col::new(x0 + p as u64, geo, i.tiles_x));
            for y in grid_stride_y(i.height) {
                let rw = Row::new(y, geo, tiles);
                // SAFETY: 4-byte aligned, x0 + N <= width: the group's 4C bytes lie inside
                // row y of both images.
                let (sp, dp) = unsafe {
                    (
                        src.add((y * i.s_pitch + x0 * C as u64) as usize) as *const u32,
                        dst.add((y * i.d_pitch + x0 * C as u64) as usize) as *mut u32,
                    )
                };
                let mut words = [0u32; C];
                for (q, w) in words.iter_mut().enumerate() {
                    // SAFETY: as above.
                    *w = unsafe { *sp.add(q) };
                }
                let mut out = [0u32; C];
                for (p, c) in cols.iter().enumerate() {
                    let at = p * C;
                    let v = |ch: usize| (words[(at + ch) / 4] >> (8 * ((at + ch) % 4))) & 0xff;
                    let put = |ch: usize, val: u32| out[(at + ch) / 4] |= val << (8 * ((at + ch) % 4));
                    // SAFETY: the tables (the contract).
                    unsafe { color_pixel::<C>(luma, luts, set, &rw, c, v, put) };
                }
                for (q, w) in out.iter().enumerate() {
                    // SAFETY: as for the loads.
                    unsafe { *dp.add(q) = *w };
                }
            }
        } else {
            for y in grid_stride_y(i.height) {
                let rw = Row::new(y, geo, tiles);
                for x in x0..(x0 + N).min(i.width) {
                    let c = Col::new(x, geo, i.tiles_x);
                    // SAFETY: x < width, y < height: pixel (x, y)'s C bytes in both images.
                    let (sp, dp) = unsafe {
                        (
                            src.add((y * i.s_pitch + x * C as u64) as usize),
                            dst.add((y * i.d_pitch + x * C as u64) as usize),
                        )
                    };
                    // SAFETY (both): ch < C, inside the pixel.
                    let v = |ch: usize| unsafe { *sp.add(ch) } as u32;
                    // SAFETY: the tables; ch < C, inside the pixel.
                    unsafe { color_pixel::<C>(luma, luts, set, &rw, &c, v, |ch, val| *dp.add(ch) = val as u8) };
                }
            }
        }
    }
}

/// One color pixel (byte `ch` of it is `v(ch)`) through the tables at row and column weights
/// `rw`, `c`, written through `out(ch, value)`: on luma (`luma`: its weights in byte order), every
/// color byte moves by the luma's change; per channel, byte k through set k (`set` bytes
/// apart); alpha (byte 3 of 4) copied.
///
/// # Safety
/// `luts` holds the sets and tiles `rw` and `c` index; `v` returns byte values.
#[inline(always)]
unsafe fn color_pixel<const C: usize>(
    luma: Option<&Weights>,
    luts: *const u8,
    set: usize,
    rw: &Row,
    c: &Col,
    v: impl Fn(usize) -> u32,
    mut out: impl FnMut(usize, u32),
) {
    if let Some(weights) = luma {
        // Bytes 0, 1, 2 with `weights` in byte order: every color byte moves alike, so no
        // index depends on the channel order (a run-time index into the pixel's words would
        // put them in local memory).
        let (v0, v1, v2) = (v(0), v(1), v(2));
        let l = weights.luma(v0, v1, v2);
        // SAFETY: the first set; l < 256.
        let delta = round_u8(unsafe { bilinear(luts, rw, c, l as usize) }) as i32 - l as i32;
        out(0, (v0 as i32 + delta).clamp(0, 255) as u32);
        out(1, (v1 as i32 + delta).clamp(0, 255) as u32);
        out(2, (v2 as i32 + delta).clamp(0, 255) as u32);
    } else {
        for k in 0..3 {
            // SAFETY: set k of the three; a byte value.
            out(k, round_u8(unsafe { bilinear(luts.add(k * set), rw, c, v(k) as usize) }) as u32);
        }
    }
    if C == 4 {
        out(3, v(3));
    }
}

/// A gray batch: image `blockIdx.z` through its tables, its geometry worked out here.
///
/// # Safety
/// `src` and `dst` hold `gridDim.z` entries of equal sizes, each valid for
/// `Geometry::new` with `tiles`; `luts` holds `gridDim.z` sets of `tiles.x * tiles.y`
/// tables; 2-D over x and y.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_apply_batch(p: ClaheApplyBatch) {
    // SAFETY: the launch contract.
    let ((src, width, height), (dst, ..)) = unsafe { (batch_image(p.src), batch_image(p.dst)) };
    let Some(g) = Geometry::new(width as u32, height as u32, p.tiles.x, p.tiles.y, p.tiles.clip_limit) else {
        return;
    };
    let set = (p.tiles.x * p.tiles.y) as u64 * 256 * block_idx_z() as u64;
    let one = ClaheApply {
        src: DevPtr::new(src as u64),
        s_pitch: width,
        dst: cuimg_abi::DevPtrMut::new(dst as u64),
        d_pitch: width,
        width,
        height,
        tiles_x: p.tiles.x,
        tiles_y: p.tiles.y,
        geometry: g,
        _pad: 0,
        luts: p.luts.offset(set),
    };
    // SAFETY: one image of the batch, its own tables.
    unsafe { apply_gray(one) }
}

abi!(cuimg_abi::clahe::ClaheApplyBatchKernel, clahe_apply_batch);

/// A color batch: image `blockIdx.z` through its sets of tables, its geometry worked out
/// here.
///
/// # Safety
/// `src` and `dst` hold `gridDim.z` entries of equal sizes, packed, `source.channels` (3
/// or 4, alpha fourth) bytes per pixel, each valid for `Geometry::new` with `tiles`; the
/// source's channel offsets are below 3; `luts` holds `gridDim.z` groups of sets (3 per
/// channel, 1 on luma) of `tiles.x * tiles.y` tables; 2-D over x and y.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_apply_color_batch(p: ClaheApplyColorBatch) {
    // SAFETY: the launch contract.
    let ((src, width, height), (dst, ..)) = unsafe { (batch_image(p.src), batch_image(p.dst)) };
    let Some(g) = Geometry::new(width as u32, height as u32, p.tiles.x, p.tiles.y, p.tiles.clip_limit) else {
        return;
    };
    let sets = if p.source.mode == LUMA { 1 } else { 3 };
    let first = (p.tiles.x * p.tiles.y) as u64 * 256 * sets * block_idx_z() as u64;
    let pitch = width * p.source.channels as u64;
    let one = ClaheApply {
        src: DevPtr::new(src as u64),
        s_pitch: pitch,
        dst: cuimg_abi::DevPtrMut::new(dst as u64),
        d_pitch: pitch,
        width,
        height,
        tiles_x: p.tiles.x,
        tiles_y: p.tiles.y,
        geometry: g,
        _pad: 0,
        luts: p.luts.offset(first),
    };
    // SAFETY: one image of the batch, its own tables.
    unsafe { apply_color(one, p.source) }
}

abi!(cuimg_abi::clahe::ClaheApplyColorBatchKernel, clahe_apply_color_batch);
