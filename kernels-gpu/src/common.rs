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

/// Copies one table into the word layout of `cuimg_abi::lut::GRAY_SHARED_BYTES`: word
/// `v * 32 + lane` holds `table[v]` for every lane, so a warp's 32 lookups fall in 32 banks
/// and a lookup's byte address is `v << 7 | lane << 2`. Block-uniform; ends with a barrier.
///
/// # Safety
/// `lut` holds 256 bytes; the launch provides `GRAY_SHARED_BYTES` of dynamic shared memory.
#[inline(always)]
pub unsafe fn load_table_words(lut: *const u8) -> *const u8 {
    let sh = shared::dynamic::<u32>();
    for i in block_stride(256 * 32) {
        // SAFETY: i / 32 < 256; i < the shared length in words.
        unsafe { *sh.add(i as usize) = *lut.add(i as usize / 32) as u32 };
    }
    sync_threads();
    sh as *const u8
}

/// The table entries of the four bytes of `w` from a [`load_table_words`] table, packed back
/// into a word: per byte a shift, a mask with the lane's offset (`lane4 = lane << 2`) and one
/// shared load, then three byte permutes for the four. The compiler's own extraction and
/// packing took about ten instructions per byte.
///
/// # Safety
/// `t` came from [`load_table_words`]; `lane4` is this thread's lane times 4.
#[inline(always)]
pub unsafe fn lookup_word(t: *const u8, w: u32, lane4: u32) -> u32 {
    const M: u32 = 0xff << 7;
    let at = [(w << 7) & M, (w >> 1) & M, (w >> 9) & M, (w >> 17) & M];
    // SAFETY: every offset is v << 7 | lane << 2 with v < 256: inside the 32 KiB table.
    let r = at.map(|a| unsafe { *(t.add((a | lane4) as usize) as *const u32) });
    crate::device::bytes::pack4(r)
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
