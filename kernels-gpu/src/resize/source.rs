//! Where the tiled kernels' source pixels come from: 8-bit images (the job's `src` plane,
//! read by each kernel's own loads), or YUV frames, each pixel decoded to RGB as it is read
//! (`cuimg_abi::resize::ResizeSeparableYuv`): the bytes `yuv_to_image` would have written,
//! so the resize's sums are the reference's over the decoded image. The image kernels take
//! [`Bytes`], whose [`Source::YUV`] is false: their code is as it was.

use super::{clamp, clamp32};
use cuimg_abi::resize::{Plane, ResizeJob};
use cuimg_abi::yuv::{Decode, Frame, Strides};

/// A tiled kernel's source.
pub(super) trait Source: Copy {
    /// YUV frames: the kernel reads through [`Source::yuv`]; else the job's `src` plane.
    const YUV: bool;

    /// The job's frame and decoding (for a YUV source).
    fn yuv(&self, j: &ResizeJob) -> Yuv;
}

/// The job's `src` plane of 8-bit pixels.
#[derive(Clone, Copy)]
pub(super) struct Bytes;

impl Source for Bytes {
    const YUV: bool = false;

    #[inline(always)]
    fn yuv(&self, _: &ResizeJob) -> Yuv {
        Yuv { data: 0, width: 1, height: 1, is_420: false, strides: FLAT, coef: Decode::BT601_LIMITED }
    }
}

/// Strides of nothing ([`Bytes`] has no frame).
const FLAT: Strides =
    Strides { luma_pitch: 0, luma_step: 0, luma_at: 0, chroma_pitch: 0, chroma_step: 0, u_at: 0, v_at: 0 };

/// Frames of `layout`, decoded by `coef`: each job's `src.data` is a frame's first byte,
/// `src.width` and `src.height` its image's size.
#[derive(Clone, Copy)]
pub(super) struct YuvFrames {
    pub layout: u32,
    pub coef: Decode,
}

impl Source for YuvFrames {
    const YUV: bool = true;

    #[inline(always)]
    fn yuv(&self, j: &ResizeJob) -> Yuv {
        let f = Frame { data: j.src.data, width: j.src.width, height: j.src.height, layout: self.layout, _pad: 0 };
        Yuv {
            data: f.data,
            width: f.width,
            height: f.height,
            is_420: f.is_420(),
            strides: f.strides(),
            coef: self.coef,
        }
    }
}

/// One job's frame, where its samples lie and how they decode.
#[derive(Clone, Copy)]
pub(super) struct Yuv {
    data: u64,
    width: u32,
    height: u32,
    is_420: bool,
    strides: Strides,
    coef: Decode,
}

impl Yuv {
    /// Source row `r`, clamped into the frame: the offsets of its luma row and its chroma
    /// row.
    #[inline(always)]
    pub fn row(&self, r: i64) -> (u32, u32) {
        let y = clamp(r, self.height) as u32;
        let cy = if self.is_420 { y / 2 } else { y };
        (y * self.strides.luma_pitch, cy * self.strides.chroma_pitch)
    }

    /// Pixel `col` (clamped into the frame) of a row from [`Yuv::row`] as `[R, G, B, 255]`,
    /// as the YUV kernels decode it (alpha opaque).
    ///
    /// # Safety
    /// The frame is readable, of its layout's bytes.
    #[inline(always)]
    pub unsafe fn rgb(&self, col: i64, (luma, chroma): (u32, u32)) -> [i32; 4] {
        let s = &self.strides;
        let x = clamp(col, self.width) as u32;
        let src = self.data as usize as *const u8;
        let c = chroma + (x / 2) * s.chroma_step;
        // SAFETY: the samples of a pixel of the frame (`Strides`' offsets).
        let (l, u, v) = unsafe {
            (
                *src.add((luma + x * s.luma_step + s.luma_at) as usize),
                *src.add((c + s.u_at) as usize),
                *src.add((c + s.v_at) as usize),
            )
        };
        let p = self.coef.rgb(l, self.coef.chroma(u, v));
        [p[0] as i32, p[1] as i32, p[2] as i32, 255]
    }
}

/// The first byte of row `r` of the image `src` at `data`, `r` clamped into it (by
/// `clamp32`: `clamp`'s 64-bit compares and product took a dozen instructions a row).
///
/// # Safety
/// `data` is `src`'s first byte and `src` describes readable memory of at least one row.
#[inline(always)]
pub(super) unsafe fn row(data: *const u8, r: i32, src: &Plane) -> *const u8 {
    let r = clamp32(r, src.height);
    // SAFETY: the clamped row lies in the image (the caller's contract).
    unsafe { data.add((r as u64 * src.pitch) as usize) }
}

/// The most aligned words a [`window`] reads (a column's 8 taps of 4 channels, 32 bytes,
/// and the word past them).
pub(super) const WINDOW_WORDS: usize = 9;

/// The aligned words [`window`] reads for `n` bytes.
#[inline(always)]
pub(super) const fn window_words(n: usize) -> usize {
    n.div_ceil(4) + 1
}

/// Whether [`window`] may read a job's source `src`, of `C` channels: a packed image (rows
/// back to back) that starts 4-byte aligned, as cuimg's own images are (not a view of a
/// larger image, whose bytes between rows may be unwritten, nor a YUV frame).
#[inline(always)]
pub(super) fn words_readable<const C: usize>(src: &Plane, yuv: bool) -> bool {
    !yuv && src.data.is_multiple_of(4) && src.pitch == src.width as u64 * C as u64
}

/// Whether the [`window`] of `n` bytes from byte `at` of a row lies inside the image, in
/// every row of a [`words_readable`] image of `pitch`. For the row at offset `o`: its first
/// word, aligned down from `data + o + at`, starts at or after `data` (itself aligned); its
/// last ends at most at `data + o + at + 4 * window_words(n)`, within `data + o + pitch`,
/// the next row's start or the image's end. The bytes around the taps are neighbouring
/// pixels, written like them, and are shifted out unused.
#[inline(always)]
pub(super) fn window_in_rows(at: u64, n: usize, pitch: u64) -> bool {
    at + 4 * window_words(n) as u64 <= pitch
}

/// The `n` bytes at `p` (`n` a constant, at most 32), byte `k` at
/// `(w[k / 4] >> 8 * (k % 4)) & 0xFF` of the result: read as the [`window_words`] aligned
/// words that hold them, each funnel-shifted by `p`'s misalignment into place. One load a
/// word where a byte a load made a warp touch the same sectors 4 times or more.
///
/// # Safety
/// The aligned words from `p & !3`, [`window_words`]`(n)` of them, are readable global
/// memory.
#[allow(clippy::needless_range_loop)] // indexed loops unroll; iterators over arrays do not
#[inline(always)]
pub(super) unsafe fn window(p: *const u8, n: usize) -> [u32; WINDOW_WORDS] {
    let base = (p as u64 & !3) as usize as *const u32;
    let shift = (p as u64 & 3) as u32 * 8;
    let mut raw = [0u32; WINDOW_WORDS];
    for i in 0..WINDOW_WORDS {
        if i < window_words(n) {
            // SAFETY: word `i` of the caller's words.
            raw[i] = unsafe { crate::device::vector::load_global_u32(base.add(i)) };
        }
    }
    let mut w = [0u32; WINDOW_WORDS];
    for i in 0..WINDOW_WORDS - 1 {
        if i + 1 < window_words(n) {
            // (A 64-bit shift of two words: LLVM's funnel shift, one `shf` instruction.)
            w[i] = ((raw[i] as u64 | (raw[i + 1] as u64) << 32) >> shift) as u32;
        }
    }
    w
}

/// Byte `k` of a [`window`] (a constant after unrolling: a shift and a mask, or one
/// `prmt`).
#[inline(always)]
pub(super) fn window_byte(w: &[u32; WINDOW_WORDS], k: usize) -> i32 {
    ((w[k / 4] >> (8 * (k % 4))) & 0xFF) as i32
}
