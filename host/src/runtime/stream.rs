//! Streams: ordered queues of copies and kernels, and the transfers between host and device.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream, DeviceRepr, ValidAsZeroBits};

use super::context::Gpu;
use super::memory::{AsDeviceView, DeviceBuffer, DeviceImage, PinnedImage};
use super::tracked::{HostRead, HostWrite, Tracked, TrackedHost};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView, Rect, byte_len, check_same_size, row_bytes};
use crate::pixel::Pixel;
use crate::validate;

/// A queue of GPU work. Operations on one stream run in order; operations on different
/// streams may overlap. Most methods return as soon as the work is queued.
///
/// A `Stream` is `Send` but not `Sync`: hand it to another thread, but don't queue work on it
/// from two threads at once (make one stream per thread; see [`Gpu::stream`]). Sharing one
/// is a compile error:
///
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// # let gpu: cuimg::Gpu = unimplemented!();
/// shared(&gpu.stream().unwrap());
/// ```
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// use cuimg::{Gray8, GrayWeights, Image, Rgb8};
/// let img = Image::<Rgb8>::filled(256, 256, 90);
/// let stream = gpu.stream()?;
/// let src = stream.upload(&img.view())?;
/// let mut gray = stream.alloc::<Gray8>(256, 256)?;
/// stream.grayscale(&src, &mut gray, GrayWeights::Bt601)?;
/// let out = stream.download(&gray)?; // waits for the stream
/// assert!(out.pixels().iter().all(|p| p.0 == [90]));
/// # Ok(()) }
/// ```
pub struct Stream {
    pub(crate) gpu: Gpu,
    pub(crate) raw: Arc<CudaStream>,
    /// Reused device scratch (histogram bins, tables), so repeated calls don't allocate.
    pub(crate) scratch: RefCell<Option<Scratch>>,
    /// Reused pinned staging for batch transfers; grows to the largest batch seen.
    pub(crate) staging: RefCell<Option<TrackedHost>>,
    /// Reused device memory for launches' small tables (see [`Stream::with_table`]).
    tables: RefCell<Option<Tracked<u8>>>,
    /// What operations keep between their calls on this stream, one value per type (see
    /// [`Stream::kept`]); the runtime does not know what they are.
    kept: RefCell<Vec<Box<dyn std::any::Any + Send>>>,
    /// The launches of a call being recorded for replays (see [`Stream::record`]).
    pub(super) recording: RefCell<Option<super::replay::Recording>>,
    _not_sync: PhantomData<Cell<()>>,
}

/// The largest table [`Stream::with_table`] copies into the stream's kept buffer: 1 MiB
/// (a batch of 256 resize jobs is 26 KiB; larger tables, whose copies take longer than the
/// allocation saved, get buffers of their own rather than holding memory for good).
pub(crate) const TABLE_KEPT: usize = 1 << 20;

pub(crate) struct Scratch {
    pub hist: Tracked<u32>,
    pub lut: Tracked<u8>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("gpu", &self.gpu.name()).finish()
    }
}

impl Stream {
    pub(crate) fn wrap(gpu: &Gpu, raw: Arc<CudaStream>) -> Stream {
        Stream {
            gpu: gpu.clone(),
            raw,
            scratch: RefCell::new(None),
            staging: RefCell::new(None),
            tables: RefCell::new(None),
            kept: RefCell::new(Vec::new()),
            recording: RefCell::new(None),
            _not_sync: PhantomData,
        }
    }

    /// Runs `f` on this stream's kept value of type `T` (made by `Default` on first use): an
    /// operation's state between calls, freed with the stream. Only this stream's work uses
    /// it, so device memory in it is never waited on by another stream. `f` may queue work
    /// on the stream, but not ask for a kept value itself.
    pub(crate) fn kept<T: std::any::Any + Send + Default, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut kept = self.kept.borrow_mut();
        let i = match kept.iter().position(|k| k.is::<T>()) {
            Some(i) => i,
            None => {
                kept.push(Box::new(T::default()));
                kept.len() - 1
            }
        };
        f(kept[i].downcast_mut::<T>().expect("found by its type"))
    }

    /// A stream of another library (cudarc, cust, the CUDA runtime's `cudaStream_t`) as a
    /// cuimg stream: cuimg's work queues on it, in order with the owner's.
    ///
    /// # Safety
    /// `raw` is a `CUstream` of `gpu`'s context (the device's primary context), and stays
    /// alive while the returned stream, and any work queued through it, may use it. cuimg
    /// never destroys it.
    pub unsafe fn from_raw(gpu: &Gpu, raw: *mut std::ffi::c_void) -> Stream {
        // SAFETY: the caller's contract above, which is cudarc's for a borrowed stream.
        let borrowed = unsafe { gpu.inner.ctx.wrap_borrowed_stream(raw.cast()) };
        Stream::wrap(gpu, borrowed)
    }

    /// The raw `CUstream`, for other libraries' launches and copies in order with cuimg's.
    pub fn as_raw(&self) -> *mut std::ffi::c_void {
        self.raw.cu_stream().cast()
    }

    /// The GPU this stream runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Waits until all work queued so far has finished, and reports any error it raised.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.raw.synchronize()?)
    }

    /// Marks the current point of the stream for timing; see [`Mark::elapsed_ms`].
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let stream = gpu.stream()?;
    /// let start = stream.mark()?;
    /// let img = stream.alloc::<cuimg::Gray8>(1024, 1024)?;
    /// let ms = start.elapsed_ms(&stream.mark()?)?;
    /// assert!(ms >= 0.0);
    /// # let _ = img; Ok(()) }
    /// ```
    pub fn mark(&self) -> Result<Mark> {
        Ok(Mark(self.raw.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?))
    }

    pub(crate) fn check_context(&self, what: &str, ctx: &Arc<cudarc::driver::CudaContext>) -> Result<()> {
        if self.same_context(ctx) { Ok(()) } else { Err(Error::WrongContext(what.into())) }
    }

    /// True when memory of `ctx` may be used on this stream.
    pub(crate) fn same_context(&self, ctx: &Arc<cudarc::driver::CudaContext>) -> bool {
        ctx == &self.gpu.inner.ctx
    }

    pub(crate) fn scratch(&self, channels: usize) -> Result<std::cell::RefMut<'_, Scratch>> {
        let mut slot = self.scratch.borrow_mut();
        if slot.is_none() {
            *slot =
                Some(Scratch { hist: self.alloc_tracked::<u32>(4 * 256)?, lut: self.alloc_tracked::<u8>(4 * 256)? });
        }
        debug_assert!(channels <= 4);
        Ok(std::cell::RefMut::map(slot, |s| s.as_mut().expect("filled above")))
    }

    /// The stream's pinned staging buffer, at least `bytes` long (reallocated larger when
    /// needed; the old one's drop waits for the copies that use it).
    pub(crate) fn staging(&self, bytes: usize) -> Result<std::cell::RefMut<'_, TrackedHost>> {
        let mut slot = self.staging.borrow_mut();
        if slot.as_ref().is_none_or(|s| s.len() < bytes) {
            *slot = None;
            // Not write-combined: the host reads downloads back from it too.
            // SAFETY: flags 0 asks for plain page-locked memory; callers write before read.
            let buf = unsafe { self.gpu.inner.ctx.alloc_pinned_with_flags::<u8>(bytes.max(1), 0) }?;
            *slot = Some(TrackedHost::new(buf));
        }
        Ok(std::cell::RefMut::map(slot, |s| s.as_mut().expect("filled above")))
    }

    /// Runs `launch(device address)` with `bytes` copied to the device for the launches it
    /// queues on this stream (a launch's job list and tables), and returns its result.
    ///
    /// Tables up to [`TABLE_KEPT`] bytes go to one buffer that the stream keeps and reuses:
    /// an allocation, two events and a free each launch, stream-ordered, took 3 to 4 us of
    /// a batch call's host time before its kernel and 6 to 8 us of the GPU's on one lent
    /// H100, nothing measurable on another (session 15). The buffer is this
    /// stream's alone, read only by launches queued on it: the next call's copy into it is
    /// queued on the same stream after them, so it runs after they have read it, and no
    /// event is needed. The copy is from pageable memory, which the driver has taken by the
    /// time it returns. Larger tables get a buffer of their own, freed after the launches.
    ///
    /// `launch` must queue its work on this stream (the address is nothing elsewhere), and
    /// may not ask for a table itself (a panic: the buffer is borrowed while it runs).
    pub(crate) fn with_table<R>(&self, bytes: &[u8], launch: impl FnOnce(u64) -> Result<R>) -> Result<R> {
        // A recorded call's launches read a buffer of their own too, which the recording
        // holds (`hold_table`; dropped otherwise, after the launches): the kept one is
        // overwritten by the next call's copy.
        if self.recording() || bytes.len() > TABLE_KEPT || !super::knobs::kept_tables() {
            let table: DeviceBuffer<u8> = self.upload_slice(bytes)?;
            let r = launch(table.buf.read(&self.raw)?.ptr().addr());
            self.hold_table(table);
            return r;
        }
        let mut slot = self.tables.borrow_mut();
        if slot.as_ref().is_none_or(|t| t.len() < bytes.len()) {
            // The old buffer's drop frees it after the launches queued before (stream-ordered).
            *slot = None;
            *slot = Some(self.alloc_overwritten::<u8>(bytes.len().next_power_of_two().max(4096))?);
        }
        let addr = slot.as_ref().expect("filled above").device_addr();
        if !bytes.is_empty() {
            self.raw.context().bind_to_thread()?;
            // SAFETY: `addr` is this stream's table memory, at least `bytes.len()` long and
            // alive while the slot is borrowed (until `launch` has queued its work); only
            // copies and launches on this stream touch it, so the copy runs after every
            // launch queued before has read it (see above), and `bytes` is host memory the
            // driver copies from before it returns (pageable).
            unsafe { cudarc::driver::result::memcpy_htod_async(addr, bytes, self.raw.cu_stream()) }?;
        }
        launch(addr)
    }

    /// Queues a copy of pinned bytes `range` to device address `dst`.
    pub(crate) fn copy_to_device(&self, from: &HostRead<'_>, range: std::ops::Range<usize>, dst: u64) -> Result<()> {
        debug_assert!(std::sync::Arc::ptr_eq(from.stream(), &self.raw));
        let bytes = &from.bytes()?[range];
        self.raw.context().bind_to_thread()?;
        // SAFETY: `bytes` is page-locked memory that the read guard keeps alive and ordered
        // until the copy is done (a host write waits for it); `dst` is device memory of at
        // least `bytes.len()` bytes under the caller's write guard, on this stream's context.
        unsafe { cudarc::driver::result::memcpy_htod_async(dst, bytes, self.raw.cu_stream()) }?;
        Ok(())
    }

    /// Queues a copy from device address `src` into pinned bytes `range`.
    pub(crate) fn copy_to_host(&self, src: u64, to: &mut HostWrite<'_>, range: std::ops::Range<usize>) -> Result<()> {
        debug_assert!(std::sync::Arc::ptr_eq(to.stream(), &self.raw));
        let bytes = &mut to.bytes()?[range];
        self.raw.context().bind_to_thread()?;
        // SAFETY: `bytes` is page-locked memory the write guard keeps alive and ordered (the
        // host reads it only after waiting for this copy); `src` holds at least
        // `bytes.len()` bytes under the caller's read guard, on this stream's context.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(bytes, src, self.raw.cu_stream()) }?;
        Ok(())
    }

    /// `len` zeroed elements of device memory, allocated on this stream and ordered for
    /// every other (see `tracked.rs`).
    pub(crate) fn alloc_tracked<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<Tracked<T>> {
        Ok(Tracked::written(self.raw.alloc_zeros::<T>(len)?, &self.raw)?)
    }

    /// `data` copied into new device memory (at least one element), without zeroing it
    /// first.
    pub(crate) fn upload_tracked<T: DeviceRepr + Pod>(&self, data: &[T]) -> Result<Tracked<T>> {
        debug_assert!(!data.is_empty());
        let mut buf = self.alloc_overwritten::<T>(data.len())?;
        self.raw.memcpy_htod(data, buf.write(&self.raw)?.slice())?;
        Ok(buf)
    }

    /// A new device image of zeroed pixels.
    pub fn alloc<P: Pixel>(&self, width: u32, height: u32) -> Result<DeviceImage<P>> {
        validate::non_empty(width, height)?;
        let bytes = byte_len::<P>(width, height)?;
        Ok(DeviceImage::from_raw(self.alloc_tracked::<u8>(bytes)?, width, height))
    }

    /// `len` elements of device memory that the caller overwrites on this stream before
    /// anything reads them (an upload, a kernel's whole output, bins it clears): no memset,
    /// which would be a full extra pass.
    pub(crate) fn alloc_overwritten<T: DeviceRepr + Pod>(&self, len: usize) -> Result<Tracked<T>> {
        // SAFETY: `T: Pod` is valid whatever bytes it holds, so the unset memory is never an
        // invalid value; callers write it all before reading (initcheck in `run.sh sanitize`
        // flags a read of device bytes never written).
        let buf = unsafe { self.raw.alloc::<T>(len) }?;
        Ok(Tracked::written(buf, &self.raw)?)
    }

    /// A device image whose every byte the caller writes before anything reads it.
    pub(crate) fn alloc_for_output<P: Pixel>(&self, width: u32, height: u32) -> Result<DeviceImage<P>> {
        validate::non_empty(width, height)?;
        let bytes = byte_len::<P>(width, height)?;
        Ok(DeviceImage::from_raw(self.alloc_overwritten::<u8>(bytes)?, width, height))
    }

    /// Copies a host view (any pitch) into a new device image. The source may be reused
    /// when this returns.
    pub fn upload<P: Pixel>(&self, src: &ImageView<'_, P>) -> Result<DeviceImage<P>> {
        let mut dst = self.alloc_for_output::<P>(src.width(), src.height())?;
        self.upload_into(src, &mut dst)?;
        Ok(dst)
    }

    /// Copies a host view into the full-width rows `rows` of a device image.
    pub(crate) fn upload_rows<P: Pixel>(
        &self,
        src: &ImageView<'_, P>,
        dst: &mut DeviceImage<P>,
        rows: Rect,
    ) -> Result<()> {
        rows.check_inside(dst.width(), dst.height())?;
        check_same_size("upload rows", (rows.width, rows.height), src.dimensions())?;
        debug_assert!(rows.x == 0 && rows.width == dst.width(), "whole rows only");
        let (pitch, packed) = (dst.pitch(), src.contiguous_bytes().map(std::borrow::Cow::Borrowed));
        let bytes = packed.unwrap_or_else(|| std::borrow::Cow::Owned(src.to_image().as_bytes().to_vec()));
        let start = rows.y as usize * pitch;
        let mut to = dst.buf.write(&self.raw)?;
        self.raw.memcpy_htod(&*bytes, &mut to.slice().slice_mut(start..start + bytes.len()))?;
        Ok(())
    }

    /// Copies a host view into an existing device image of the same size.
    pub fn upload_into<P: Pixel>(&self, src: &ImageView<'_, P>, dst: &mut DeviceImage<P>) -> Result<()> {
        check_same_size("upload destination", dst.dimensions(), src.dimensions())?;
        self.check_context("the upload destination", dst.buf.context())?;
        let mut to = dst.buf.write(&self.raw)?;
        match src.contiguous_bytes() {
            Some(bytes) => self.raw.memcpy_htod(bytes, to.slice())?,
            None => self.raw.memcpy_htod(src.to_image().as_bytes(), to.slice())?,
        }
        Ok(())
    }

    /// Copies a pinned image into a new device image, asynchronously.
    pub fn upload_pinned<P: Pixel>(&self, src: &PinnedImage<P>) -> Result<DeviceImage<P>> {
        // Not zeroed first: the copy writes every byte.
        let mut dst = self.alloc_for_output::<P>(src.width(), src.height())?;
        self.upload_pinned_into(src, &mut dst)?;
        Ok(dst)
    }

    /// Copies a pinned image into a device image of the same size, asynchronously.
    pub fn upload_pinned_into<P: Pixel>(&self, src: &PinnedImage<P>, dst: &mut DeviceImage<P>) -> Result<()> {
        check_same_size("upload destination", dst.dimensions(), src.dimensions())?;
        self.check_context("the upload destination", dst.buf.context())?;
        self.check_context("the pinned upload source", src.buf.context())?;
        let from = src.buf.read(&self.raw)?;
        let mut to = dst.buf.write(&self.raw)?;
        Ok(self.raw.memcpy_htod(from.slice(), to.slice())?)
    }

    /// Copies a device image or view back into a new host image, waiting for the stream.
    pub fn download<P: Pixel>(&self, src: &impl AsDeviceView<P>) -> Result<Image<P>> {
        let v = src.device_view();
        validate::non_empty(v.width(), v.height())?;
        self.check_context("the download source", v.img.buf.context())?;
        let l = v.layout();
        let (pitch, row) = (l.pitch as usize, row_bytes::<P>(l.width));
        let start = l.offset as usize;
        let from = v.img.buf.read(&self.raw)?;
        if row == pitch || l.height == 1 {
            // Contiguous rows: one copy, straight into the image returned.
            let mut out = Image::<P>::try_new(l.width, l.height)?;
            let bytes = out.as_bytes_mut();
            self.raw.memcpy_dtoh(&from.slice().slice(start..start + bytes.len()), bytes)?;
            return Ok(out);
        }
        // A region narrower than its image: copy the band of rows it spans, then cut the
        // columns out on the host.
        let band = (l.height as usize - 1) * pitch + row;
        let mut host = vec![0u8; band];
        self.raw.memcpy_dtoh(&from.slice().slice(start..start + band), &mut host)?;
        Ok(ImageView::<P>::new(&host, l.width, l.height, pitch)?.to_image())
    }

    /// Copies a whole device image into a pinned image of the same size, asynchronously.
    pub fn download_pinned<P: Pixel>(&self, src: &DeviceImage<P>, dst: &mut PinnedImage<P>) -> Result<()> {
        check_same_size("download destination", dst.dimensions(), src.dimensions())?;
        self.check_context("the download source", src.buf.context())?;
        self.check_context("the pinned download destination", dst.buf.context())?;
        let from = src.buf.read(&self.raw)?;
        let mut to = dst.buf.write(&self.raw)?;
        Ok(self.raw.memcpy_dtoh(from.slice(), to.slice())?)
    }

    /// Copies a slice into a new device buffer.
    pub fn upload_slice<T: Pod>(&self, src: &[T]) -> Result<DeviceBuffer<T>> {
        let bytes: &[u8] = bytemuck::cast_slice(src);
        // The driver rejects empty allocations: an empty buffer holds one unused byte.
        let buf = if bytes.is_empty() { self.alloc_tracked::<u8>(1)? } else { self.upload_tracked(bytes)? };
        Ok(DeviceBuffer::from_raw(buf, src.len()))
    }

    /// A new device buffer of `len` zeroed elements.
    pub fn alloc_slice<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::TooLarge {
            what: "device buffer".into(),
            size: len as u64,
            limit: usize::MAX as u64,
        })?;
        Ok(DeviceBuffer::from_raw(self.alloc_tracked::<u8>(bytes.max(1))?, len))
    }

    /// A new device buffer of `len` elements that the caller overwrites on this stream
    /// before anything reads them (a kernel's whole output): no memset.
    pub(crate) fn alloc_slice_for_output<T: Pod + DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::TooLarge {
            what: "device buffer".into(),
            size: len as u64,
            limit: usize::MAX as u64,
        })?;
        Ok(DeviceBuffer::from_raw(self.alloc_overwritten::<u8>(bytes.max(1))?, len))
    }

    /// `bytes` bytes of device memory another library owns, as a buffer cuimg's work orders
    /// itself on (see [`DeviceImage::from_raw_parts`]); dropping it frees nothing.
    ///
    /// # Safety
    /// As [`DeviceImage::from_raw_parts`], for `bytes` bytes at `ptr`.
    #[cfg(feature = "dlpack")]
    pub(crate) unsafe fn borrow_slice(&self, ptr: u64, bytes: usize) -> Result<DeviceBuffer<u8>> {
        // SAFETY: the caller's contract; `Tracked::borrowed` never frees the memory.
        let slice = unsafe { self.raw.upgrade_device_ptr::<u8>(ptr, bytes) };
        Ok(DeviceBuffer::from_raw(Tracked::borrowed(slice, &self.raw)?, bytes))
    }

    /// Copies one device buffer into another of the same length, on the device.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let stream = gpu.stream()?;
    /// let a = stream.upload_slice(&[1u16, 2, 3])?;
    /// let mut b = stream.alloc_slice::<u16>(3)?;
    /// stream.copy_slice(&a, &mut b)?;
    /// assert_eq!(stream.download_slice(&b)?, vec![1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn copy_slice<T: Pod>(&self, src: &DeviceBuffer<T>, dst: &mut DeviceBuffer<T>) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::WrongLength { what: "copy destination".into(), expected: src.len(), actual: dst.len() });
        }
        self.check_context("the copy source", src.buf.context())?;
        self.check_context("the copy destination", dst.buf.context())?;
        let bytes = src.len() * std::mem::size_of::<T>();
        if bytes > 0 {
            let from = src.buf.read(&self.raw)?;
            let mut to = dst.buf.write(&self.raw)?;
            self.raw.memcpy_dtod(&from.slice().slice(0..bytes), &mut to.slice().slice_mut(0..bytes))?;
        }
        Ok(())
    }

    /// Copies a device buffer back, waiting for the stream.
    pub fn download_slice<T: Pod>(&self, src: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.check_context("the download source", src.buf.context())?;
        let mut out = vec![T::zeroed(); src.len()];
        if !out.is_empty() {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
            let from = src.buf.read(&self.raw)?;
            self.raw.memcpy_dtoh(&from.slice().slice(0..bytes.len()), bytes)?;
        }
        Ok(out)
    }
}

/// How the GPU orders a stream's kernels against other streams' when both wait for the SMs
/// ([`Gpu::stream_with_priority`]); running kernels are not interrupted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamPriority {
    Low,
    Normal,
    High,
}

/// A recorded point of a stream, for timing with device events.
pub struct Mark(CudaEvent);

impl std::fmt::Debug for Mark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mark")
    }
}

impl Mark {
    /// Milliseconds of GPU time from this mark to `end` (waits for `end`).
    pub fn elapsed_ms(&self, end: &Mark) -> Result<f32> {
        end.0.synchronize()?;
        Ok(self.0.elapsed_ms(&end.0)?)
    }
}

impl Gpu {
    /// A new stream on this GPU, for asynchronous work.
    pub fn stream(&self) -> Result<Stream> {
        Ok(Stream::wrap(self, self.inner.ctx.new_stream()?))
    }

    /// A new stream whose work the GPU schedules before (`High`) or after (`Low`) that of
    /// ordinary streams when both are waiting for the SMs: for work that feeds a fixed-rate
    /// engine (the hardware JPEG decoder) beside bulk work that can wait.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let urgent = gpu.stream_with_priority(cuimg::StreamPriority::High)?;
    /// let bulk = gpu.stream_with_priority(cuimg::StreamPriority::Low)?;
    /// # let _ = (urgent, bulk);
    /// # Ok(()) }
    /// ```
    pub fn stream_with_priority(&self, priority: StreamPriority) -> Result<Stream> {
        self.bind()?;
        // (least, greatest): numerically, the greatest priority is the lowest number.
        let (least, greatest) = cudarc::driver::result::stream::get_priority_range()?;
        let value = match priority {
            StreamPriority::Low => least,
            StreamPriority::Normal => 0, // the default stream priority
            StreamPriority::High => greatest,
        };
        Ok(Stream::wrap(self, self.inner.ctx.new_stream_with_priority(value)?))
    }

    /// The stream the blocking calls use.
    pub(crate) fn blocking_stream(&self) -> Stream {
        Stream::wrap(self, self.inner.stream.clone())
    }
}
