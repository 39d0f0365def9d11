//! CLAHE, bit-exact with OpenCV's `createCLAHE(clip, grid).apply` on 8-bit gray images
//! (`CLAHE_CalcLut_Body` and `CLAHE_Interpolation_Body` of modules/imgproc/src/clahe.cpp):
//! a table per tile, then the bilinear apply. The host's CPU reference
//! (`host/src/ops/clahe/cpu.rs`) is the same arithmetic, step for step.

use crate::common::scan_256;
use crate::device::atomic;
use crate::device::shared;
use crate::device::thread::{block_idx_x, block_stride, grid_stride_x, grid_stride_y, sync_threads, thread_idx_x};
use cuimg_abi::clahe::{ClaheApply, ClaheLuts, reflect101};

/// OpenCV's `saturate_cast<uchar>(float)`: nearest, ties to even, then clamped.
#[inline(always)]
fn saturate_u8(v: f32) -> u8 {
    core::f32::math::round_ties_even(v).clamp(0.0, 255.0) as u8
}

/// One block of 256 threads per tile (`blockIdx.x`): the tile's histogram (shared-memory
/// atomics), clipped at `clip` with the excess spread (`clipped / 256` to every bin, then
/// one to each of bins `0, step, 2 step, ...`, `step = max(256 / residual, 1)`, until the
/// residual is gone), an inclusive scan, and the table.
///
/// # Safety
/// Rows `0..height` of `width` bytes are readable at `src` (pitch `pitch`); `luts` holds
/// `256 * gridDim.x` bytes; `gridDim.x = tiles_x * tiles_y`; `tile_w * tile_h` fits in
/// u32; blocks of exactly 256 threads; `LUTS_SHARED_BYTES` of shared memory.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_luts(p: ClaheLuts) {
    let hist = shared::dynamic::<u32>();
    // SAFETY: the shared allocation holds 257 u32: the bins, then the clipped count.
    let clipped = unsafe { hist.add(256) };
    let t = thread_idx_x() as usize;
    // SAFETY: t < 256; slot 256 exists. Every thread zeroes its bin before the barrier.
    unsafe {
        *hist.add(t) = 0;
        if t == 0 {
            *clipped = 0;
        }
    }
    sync_threads();
    let tile = block_idx_x();
    let (x0, y0) = ((tile % p.tiles_x) * p.tile_w, (tile / p.tiles_x) * p.tile_h);
    let src = p.src.ptr();
    for i in block_stride(p.tile_w * p.tile_h) {
        let (dx, dy) = (i as u32 % p.tile_w, i as u32 / p.tile_w);
        let x = reflect101(x0 + dx, p.width) as u64;
        let y = reflect101(y0 + dy, p.height) as u64;
        // SAFETY: reflect101 maps into 0..width and 0..height, which the contract covers.
        let v = unsafe { *src.add((y * p.pitch + x) as usize) };
        // SAFETY: v < 256: a bin of the shared histogram.
        unsafe { atomic::add_u32(hist.add(v as usize), 1) };
    }
    sync_threads();
    // SAFETY: t < 256; the barrier ordered every count.
    let mut h = unsafe { *hist.add(t) };
    if h > p.clip {
        // SAFETY: the shared clipped count.
        unsafe { atomic::add_u32(clipped, h - p.clip) };
        h = p.clip;
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
    // SAFETY: t < 256; every read of the bins happened before the barrier above.
    unsafe { *hist.add(t) = h };
    // SAFETY: 256 shared u32, every thread of the block here (the scan's first barrier
    // orders the writes just above).
    unsafe { scan_256(hist, t) };
    // SAFETY: the barrier ordered the scan; the sum of a tile fits in i32 (the host checks).
    let sum = unsafe { *hist.add(t) } as i32;
    // SAFETY: tile * 256 + t < 256 * gridDim.x.
    unsafe { *p.luts.ptr().add(tile as usize * 256 + t) = saturate_u8(sum as f32 * p.lut_scale) };
}

abi!(cuimg_abi::clahe::ClaheLutsKernel, clahe_luts);

/// Each pixel through the four nearest tiles' tables, weighted as OpenCV does (in f32, in
/// its order of operations; the PTX keeps every multiply and add rounded on its own).
///
/// # Safety
/// Rows `0..height` of `width` bytes are readable at `src` (pitch `s_pitch`) and writable at
/// `dst` (pitch `d_pitch`); `luts` holds `256 * tiles_x * tiles_y` bytes; 2-D launch.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn clahe_apply(p: ClaheApply) {
    let (src, dst, luts) = (p.src.ptr(), p.dst.ptr(), p.luts.ptr());
    let (tx, ty) = (p.tiles_x as i32, p.tiles_y as i32);
    for y in grid_stride_y(p.height) {
        let tyf = y as f32 * p.inv_th - 0.5f32;
        let t1 = core::f32::math::floor(tyf) as i32;
        let ya = tyf - t1 as f32;
        let ya1 = 1.0f32 - ya;
        let r1 = t1.max(0) as usize * tx as usize;
        let r2 = (t1 + 1).min(ty - 1) as usize * tx as usize;
        for x in grid_stride_x(p.width) {
            let txf = x as f32 * p.inv_tw - 0.5f32;
            let c1 = core::f32::math::floor(txf) as i32;
            let xa = txf - c1 as f32;
            let xa1 = 1.0f32 - xa;
            let (c2, c1) = ((c1 + 1).min(tx - 1) as usize, c1.max(0) as usize);
            // SAFETY: pixel (x, y) is inside the source.
            let v = unsafe { *src.add((y * p.s_pitch + x) as usize) } as usize;
            // SAFETY: every tile index < tiles_x * tiles_y, v < 256.
            let l = |tile: usize| unsafe { *luts.add(tile * 256 + v) } as f32;
            let res = (l(r1 + c1) * xa1 + l(r1 + c2) * xa) * ya1 + (l(r2 + c1) * xa1 + l(r2 + c2) * xa) * ya;
            // SAFETY: pixel (x, y) is inside the destination.
            unsafe { *dst.add((y * p.d_pitch + x) as usize) = saturate_u8(res) };
        }
    }
}

abi!(cuimg_abi::clahe::ClaheApplyKernel, clahe_apply);
