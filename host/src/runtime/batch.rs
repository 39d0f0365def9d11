//! Batches: many images of one format in one device allocation, so one launch processes them
//! all. Images may differ in size (a ragged batch); each is packed and starts 256-byte
//! aligned, and the batch keeps a table of where each one is on the device
//! (`cuimg_abi::BatchImage`), which the batch kernels index with `blockIdx.z`.
//!
//! Host images go in and come out through a pinned staging buffer of the stream, in one copy
//! each way for the whole batch.

use std::marker::PhantomData;

use cudarc::driver::LaunchConfig;
use cuimg_abi::{BatchImage, DevPtr, MAX_BATCH_LAUNCH};

use super::memory::DeviceImage;
use super::stream::Stream;
use super::tracked::{Read, Tracked};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView, byte_len, check_same_size};
use crate::pixel::Pixel;
use crate::validate;

/// Where one image of a batch lies in the batch's allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub offset: usize,
    pub width: u32,
    pub height: u32,
}

/// Images of format `P` on the device, one allocation and one launch per operation for all
/// of them. Made by [`Stream::upload_batch`] or [`Stream::alloc_batch`].
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// use cuimg::{Gray8, GrayWeights, Image, Rgb8};
/// let images = [Image::<Rgb8>::filled(640, 480, 10), Image::<Rgb8>::filled(3, 1, 20)];
/// let views: Vec<_> = images.iter().map(|i| i.view()).collect();
/// let stream = gpu.stream()?;
/// let src = stream.upload_batch(&views)?; // a ragged batch: sizes may differ
/// let mut gray = stream.alloc_batch::<Gray8>(&src.sizes())?;
/// stream.grayscale_batch(&src, &mut gray, GrayWeights::Bt601)?; // one launch
/// let out = stream.download_batch(&gray)?;
/// assert_eq!(out[1].as_bytes(), &[20, 20, 20]);
/// # Ok(()) }
/// ```
pub struct DeviceBatch<P: Pixel> {
    pub(crate) buf: Tracked<u8>,
    /// `BatchImage`s as pairs of `u64` (address, `width | height << 32`): the `repr(C)`
    /// layout on the little-endian GPUs CUDA runs on.
    pub(crate) table: Tracked<u64>,
    pub(crate) entries: Vec<Entry>,
    _p: PhantomData<P>,
}

impl<P: Pixel> std::fmt::Debug for DeviceBatch<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBatch<{}>({} images)", P::NAME, self.entries.len())
    }
}

impl<P: Pixel> DeviceBatch<P> {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Never true: batches hold at least one image.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(width, height)` of every image, in order.
    pub fn sizes(&self) -> Vec<(u32, u32)> {
        self.entries.iter().map(|e| (e.width, e.height)).collect()
    }

    /// True when every image has the size of the first.
    pub fn is_uniform(&self) -> bool {
        self.entries.iter().all(|e| (e.width, e.height) == (self.entries[0].width, self.entries[0].height))
    }

    /// The largest image's pixel count: what a launch must cover per image.
    pub(crate) fn max_pixels(&self) -> u64 {
        self.entries.iter().map(|e| e.width as u64 * e.height as u64).max().unwrap_or(0)
    }

    /// The largest width and height: the 2-D extent a launch must cover per image.
    pub(crate) fn max_extent(&self) -> (u64, u64) {
        let w = self.entries.iter().map(|e| e.width).max().unwrap_or(0);
        let h = self.entries.iter().map(|e| e.height).max().unwrap_or(0);
        (w as u64, h as u64)
    }
}

/// The layout of a batch of `sizes`: each image 256-byte aligned (so the 16-byte vector
/// kernels apply to each), and the total bytes.
fn layout<P: Pixel>(sizes: &[(u32, u32)]) -> Result<(Vec<Entry>, usize)> {
    if sizes.is_empty() {
        return Err(Error::EmptyBatch);
    }
    let mut entries = Vec::with_capacity(sizes.len());
    let mut total = 0usize;
    for &(width, height) in sizes {
        validate::non_empty(width, height)?;
        let bytes = byte_len::<P>(width, height)?;
        entries.push(Entry { offset: total, width, height });
        total = total
            .checked_add(bytes.next_multiple_of(256))
            .filter(|&t| t <= isize::MAX as usize)
            .ok_or_else(|| Error::TooLarge { what: "a batch".into(), size: u64::MAX, limit: isize::MAX as u64 })?;
    }
    Ok((entries, total))
}

/// The byte ranges the images of a batch cover, adjacent images merged: one copy for a
/// batch without padding (image sizes that are multiples of 256 bytes), one per gap else.
fn runs<P: Pixel>(entries: &[Entry]) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for e in entries {
        let end = e.offset + e.width as usize * e.height as usize * P::CHANNELS;
        match runs.last_mut() {
            Some(last) if last.end == e.offset => last.end = end,
            _ => runs.push(e.offset..end),
        }
    }
    runs
}

/// A batch of `sizes` as the host describes it to the GPU, without a GPU: each image's
/// `(offset, width, height)`, the total bytes, the copy runs and the launch chunks
/// `(first image, count)`. For the fuzz target of the batch descriptors (`host/fuzz`); not
/// part of the API.
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub fn describe<P: Pixel>(
    sizes: &[(u32, u32)],
) -> Result<(Vec<(usize, u32, u32)>, usize, Vec<std::ops::Range<usize>>, Vec<(usize, u32)>)> {
    let (entries, total) = layout::<P>(sizes)?;
    let runs = runs::<P>(&entries);
    let chunks = Chunk::all(entries.len()).map(|c| (c.start, c.count)).collect();
    Ok((entries.iter().map(|e| (e.offset, e.width, e.height)).collect(), total, runs, chunks))
}

/// One launch's share of a batch: images `start..start + count`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chunk {
    pub start: usize,
    pub count: u32,
}

impl Chunk {
    /// The chunks of a batch of `n` images, each at most `gridDim.z` allows.
    pub fn all(n: usize) -> impl Iterator<Item = Chunk> {
        Chunk::layered(n, 1)
    }

    /// The chunks of a batch of `n` images for launches of `layers` grid layers per image
    /// (`gridDim.z = count * layers`, at most what `gridDim.z` allows).
    pub fn layered(n: usize, layers: u32) -> impl Iterator<Item = Chunk> {
        let most = (MAX_BATCH_LAUNCH / layers.max(1)).max(1) as usize;
        (0..n).step_by(most).map(move |start| Chunk { start, count: (n - start).min(most) as u32 })
    }

    /// The table entry of this chunk's first image.
    pub fn table(&self, table: DevPtr<u64>) -> DevPtr<BatchImage> {
        table.offset(self.start as u64 * 16).cast()
    }
}

/// The most page-locked memory [`Stream::upload_staged`] keeps for a stream (64 MiB): a
/// 16-megapixel RGBA image goes through in one copy, a larger one in bands of rows.
pub const STAGED_CHUNK_BYTES: usize = 64 << 20;

impl Stream {
    /// Device images of `sizes` in one allocation, zeroed.
    pub fn alloc_batch<P: Pixel>(&self, sizes: &[(u32, u32)]) -> Result<DeviceBatch<P>> {
        let (entries, total) = layout::<P>(sizes)?;
        let buf = self.alloc_tracked::<u8>(total)?;
        self.batch_with(buf, entries)
    }

    /// A batch whose bytes the caller overwrites before reading them.
    pub(crate) fn alloc_batch_for_output<P: Pixel>(&self, sizes: &[(u32, u32)]) -> Result<DeviceBatch<P>> {
        let (entries, total) = layout::<P>(sizes)?;
        let buf = self.alloc_overwritten::<u8>(total)?;
        self.batch_with(buf, entries)
    }

    fn batch_with<P: Pixel>(&self, buf: Tracked<u8>, entries: Vec<Entry>) -> Result<DeviceBatch<P>> {
        let base = buf.device_addr();
        let pairs: Vec<u64> =
            entries.iter().flat_map(|e| [base + e.offset as u64, e.width as u64 | (e.height as u64) << 32]).collect();
        let table = self.upload_tracked(&pairs)?;
        Ok(DeviceBatch { buf, table, entries, _p: PhantomData })
    }

    /// Copies host images (any sizes, any pitches) into a new batch: packed into the
    /// stream's pinned staging buffer, then one copy to the device. The images may be reused
    /// when this returns.
    pub fn upload_batch<P: Pixel>(&self, images: &[ImageView<'_, P>]) -> Result<DeviceBatch<P>> {
        let sizes: Vec<(u32, u32)> = images.iter().map(|v| v.dimensions()).collect();
        let mut batch = self.alloc_batch_for_output::<P>(&sizes)?;
        self.upload_batch_into(images, &mut batch)?;
        Ok(batch)
    }

    /// Copies a host view (any pitch) into a new device image through the same pinned
    /// staging buffer, asynchronously; the view may be reused when this returns. For a thread
    /// uploading one image after another: from ordinary memory the driver stages the copy
    /// itself and holds its lock meanwhile, which stalled every other thread's CUDA calls in
    /// the `cuimg` tool for 5 to 20 ms a 12-megapixel upload (docs/BENCHMARKS.md). The buffer
    /// grows to the image, up to [`STAGED_CHUNK_BYTES`], and stays with the stream: a larger
    /// image goes through it in bands of rows, each copy waiting for the one before, so a
    /// stream never holds more page-locked memory than that for its uploads.
    pub fn upload_staged<P: Pixel>(&self, src: &ImageView<'_, P>) -> Result<DeviceImage<P>> {
        let mut dst = self.alloc_for_output::<P>(src.width(), src.height())?;
        let row = src.row_bytes();
        let band = (STAGED_CHUNK_BYTES / row.max(1)).max(1);
        let mut staging = self.staging(row * band.min(src.height() as usize))?;
        for (k, rows) in src.rows().collect::<Vec<_>>().chunks(band).enumerate() {
            let host = staging.host_bytes_mut()?; // waits for the last copy from it
            for (y, r) in rows.iter().enumerate() {
                host[y * row..(y + 1) * row].copy_from_slice(bytemuck::cast_slice(r));
            }
            let from = staging.read(&self.raw)?;
            let mut to = dst.buf.write(&self.raw)?;
            let at = (k * band * row) as u64;
            self.copy_to_device(&from, 0..rows.len() * row, to.ptr().addr() + at)?;
            drop(to);
        }
        Ok(dst)
    }

    /// Copies host images into an existing batch of the same sizes.
    pub fn upload_batch_into<P: Pixel>(&self, images: &[ImageView<'_, P>], dst: &mut DeviceBatch<P>) -> Result<()> {
        self.check_batch_sizes("upload batch destination", images.iter().map(|v| v.dimensions()), dst)?;
        self.check_context("the batch", dst.buf.context())?;
        let total = dst.buf.len();
        let mut staging = self.staging(total)?;
        let host = staging.host_bytes_mut()?;
        for (view, e) in images.iter().zip(&dst.entries) {
            let row = view.row_bytes();
            for (y, r) in view.rows().enumerate() {
                let at = e.offset + y * row;
                host[at..at + row].copy_from_slice(bytemuck::cast_slice(r));
            }
        }
        let from = staging.read(&self.raw)?;
        let mut to = dst.buf.write(&self.raw)?;
        let base = to.ptr().addr();
        for run in runs::<P>(&dst.entries) {
            self.copy_to_device(&from, run.clone(), base + run.start as u64)?;
        }
        Ok(())
    }

    /// Copies a batch back into host images, one copy through the pinned staging buffer;
    /// waits for the stream.
    pub fn download_batch<P: Pixel>(&self, src: &DeviceBatch<P>) -> Result<Vec<Image<P>>> {
        self.check_context("the batch", src.buf.context())?;
        let total = src.buf.len();
        let mut staging = self.staging(total)?;
        {
            let from = src.buf.read(&self.raw)?;
            let mut to = staging.write(&self.raw)?;
            // Only the images' bytes: the alignment padding between them is never written.
            for run in runs::<P>(&src.entries) {
                self.copy_to_host(from.ptr().addr() + run.start as u64, &mut to, run)?;
            }
        }
        let host = staging.host_bytes()?;
        src.entries
            .iter()
            .map(|e| {
                let mut img = Image::<P>::try_new(e.width, e.height)?;
                let n = img.as_bytes().len();
                img.as_bytes_mut().copy_from_slice(&host[e.offset..e.offset + n]);
                Ok(img)
            })
            .collect()
    }

    /// Copies image `i` of a batch into a device image of its size, on the device.
    pub fn copy_from_batch<P: Pixel>(&self, src: &DeviceBatch<P>, i: usize, dst: &mut DeviceImage<P>) -> Result<()> {
        let e = *src.entries.get(i).ok_or(Error::WrongLength {
            what: "batch image index (less than the batch's length)".into(),
            expected: src.len(),
            actual: i,
        })?;
        check_same_size("the copy destination", dst.dimensions(), (e.width, e.height))?;
        self.check_context("the batch", src.buf.context())?;
        self.check_context("the copy destination", dst.buf.context())?;
        let n = dst.byte_len();
        let from = src.buf.read(&self.raw)?;
        let mut to = dst.buf.write(&self.raw)?;
        self.raw.memcpy_dtod(&from.slice().slice(e.offset..e.offset + n), to.slice())?;
        Ok(())
    }

    /// `Err` unless `sizes` are the sizes of `batch`'s images, in order.
    pub(crate) fn check_batch_sizes<P: Pixel>(
        &self,
        what: &str,
        sizes: impl ExactSizeIterator<Item = (u32, u32)>,
        batch: &DeviceBatch<P>,
    ) -> Result<()> {
        if sizes.len() != batch.len() {
            return Err(Error::WrongLength {
                what: format!("images for the {what}"),
                expected: batch.len(),
                actual: sizes.len(),
            });
        }
        for (i, (size, e)) in sizes.zip(&batch.entries).enumerate() {
            // The message only on failure: this runs once per image per call.
            if size != (e.width, e.height) {
                check_same_size(&format!("image {i} of the {what}"), size, (e.width, e.height))?;
            }
        }
        Ok(())
    }

    /// Two batches on this stream's GPU whose images have the same sizes.
    pub(crate) fn check_batch_pair<P: Pixel, Q: Pixel>(
        &self,
        op: &str,
        src: &DeviceBatch<P>,
        dst: &DeviceBatch<Q>,
    ) -> Result<()> {
        let same = src.entries.len() == dst.entries.len()
            && src.entries.iter().zip(&dst.entries).all(|(a, b)| (a.width, a.height) == (b.width, b.height));
        if !same {
            self.check_batch_sizes(&format!("{op} destination"), src.entries.iter().map(|e| (e.width, e.height)), dst)?;
        }
        if !self.same_context(src.buf.context()) {
            return Err(Error::WrongContext(format!("the {op} source batch")));
        }
        if !self.same_context(dst.buf.context()) {
            return Err(Error::WrongContext(format!("the {op} destination batch")));
        }
        Ok(())
    }

    /// A launch of a batch chunk: `x_blocks` blocks per image along x (and `y_blocks` along
    /// y), `count` images along z. The per-image grid shrinks as the batch grows, so the
    /// whole launch stays near the GPU's resident capacity.
    pub(crate) fn batch_config<K: cuimg_abi::Kernel>(
        &self,
        per_image: (u64, u64),
        block: (u32, u32),
        count: u32,
        smem: u32,
    ) -> Result<LaunchConfig> {
        let resident = self.resident_blocks::<K>(smem)? as u64 * super::knobs::grid_waves() as u64;
        let cap = (resident / count as u64).max(1);
        let gx = per_image.0.div_ceil(block.0 as u64).clamp(1, cap);
        let gy = per_image.1.div_ceil(block.1 as u64).clamp(1, (cap / gx).clamp(1, 65535));
        Ok(LaunchConfig {
            grid_dim: (gx as u32, gy as u32, count),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: smem,
        })
    }
}

/// The read guards a batch launch holds: the images and their table.
pub(crate) struct BatchRead<'a> {
    /// Held for ordering: the images the table points into.
    pub _data: Read<'a, u8>,
    pub table: Read<'a, u64>,
}

impl<P: Pixel> DeviceBatch<P> {
    /// Reads of the images and the table on `stream`, for a launch queued while they live.
    pub(crate) fn read<'a>(&'a self, stream: &'a std::sync::Arc<cudarc::driver::CudaStream>) -> Result<BatchRead<'a>> {
        Ok(BatchRead { _data: self.buf.read(stream)?, table: self.table.read(stream)? })
    }
}
