//! Pieces several kernels share, in one place: the replicated lookup tables (applied by the
//! LUT kernels and by color equalization), the 256-bin scan (equalization and CLAHE tables)
//! and the image of a batch launch. The luma formula is shared with the host's CPU
//! reference and lives in `cuimg_abi::grayscale::Weights`.

use crate::device::shared;
use crate::device::thread::{block_idx_z, block_stride, lane_id, sync_threads};
use cuimg_abi::lut::TABLE_BYTES;
use cuimg_abi::{BatchImage, DevPtr};

/// Inclusive scan (Hillis-Steele) of 256 u32 in shared memory by a block of 256 threads,
/// thread `t` owning slot `t`: the equalization and CLAHE tables' running sums. Starts and
/// ends with a barrier, so the caller's writes before it and reads after it are ordered.
///
/// # Safety
/// `buf` points to 256 shared u32; every thread of a block of exactly 256 calls this with
/// its own `t = threadIdx.x`.
#[inline(always)]
pub unsafe fn scan_256(buf: *mut u32, t: usize) {
    sync_threads();
    let mut offset = 1;
    while offset < 256 {
        // SAFETY: t - offset < 256 when t >= offset.
        let add = if t >= offset { unsafe { *buf.add(t - offset) } } else { 0 };
        sync_threads();
        // SAFETY: t < 256.
        unsafe { *buf.add(t) += add };
        sync_threads();
        offset *= 2;
    }
}

/// This block's image of a batch launch: `table[blockIdx.z]`, as `(pixels, width, height)`.
///
/// # Safety
/// `table` holds `gridDim.z` entries.
#[inline(always)]
pub unsafe fn batch_image(table: DevPtr<BatchImage>) -> (*mut u8, u64, u64) {
    // SAFETY: blockIdx.z < gridDim.z, the table's length.
    unsafe { batch_image_at(table, block_idx_z()) }
}

/// Image `i` of a batch launch's table, as `(pixels, width, height)`: for launches with more
/// than one grid layer per image.
///
/// # Safety
/// `table` holds more than `i` entries.
#[inline(always)]
pub unsafe fn batch_image_at(table: DevPtr<BatchImage>, i: u32) -> (*mut u8, u64, u64) {
    // SAFETY: the caller's contract.
    let img = unsafe { *table.ptr().add(i as usize) };
    (img.data as usize as *mut u8, img.width as u64, img.height as u64)
}

/// Copies `channels` tables from global memory into the replicated shared layout
/// (`cuimg_abi::lut::TABLE_BYTES`): every lane reads its own bank whatever value it looks up.
/// Block-uniform; ends with a barrier.
///
/// # Safety
/// `lut` holds `256 * channels` bytes; the launch provides `lut::shared_bytes(channels)`
/// bytes of dynamic shared memory.
#[inline(always)]
pub unsafe fn load_tables(lut: *const u8, channels: u32) -> *const u8 {
    let sh = shared::dynamic::<u32>();
    for i in block_stride(channels * TABLE_BYTES / 4) {
        let c = i / 2048;
        let quad = (i % 2048) / 32;
        let src = (c * 256 + quad * 4) as usize;
        // SAFETY: c < channels and quad < 64, so src + 3 < 256 * channels.
        let word = unsafe {
            *lut.add(src) as u32
                | (*lut.add(src + 1) as u32) << 8
                | (*lut.add(src + 2) as u32) << 16
                | (*lut.add(src + 3) as u32) << 24
        };
        // SAFETY: i < the shared length in words.
        unsafe { *sh.add(i as usize) = word };
    }
    sync_threads();
    sh as *const u8
}

/// `table[c][v]` for the calling lane.
///
/// # Safety
/// `tables` came from [`load_tables`] with more than `c` channels; `v < 256`.
#[inline(always)]
pub unsafe fn lookup(tables: *const u8, c: u32, v: u32) -> u32 {
    let at = c * TABLE_BYTES + ((v & 0xfc) << 5) + (lane_id() << 2) + (v & 3);
    // SAFETY: at < channels * TABLE_BYTES by the layout.
    unsafe { *tables.add(at as usize) as u32 }
}
