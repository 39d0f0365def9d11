//! Device images and buffers, and page-locked host images for asynchronous copies.
//!
//! Device images are always packed (pitch = row bytes) and their allocations are 256-byte
//! aligned, so whole-image operations take the kernels' 16-byte vector paths; views of a
//! region (ROIs) take the general pitched kernels.

use std::marker::PhantomData;

use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::CudaStream;

use cuimg_abi::{DevPtr, DevPtrMut};

use super::context::Gpu;
use super::tracked::{Read, Reads, Tracked, TrackedHost, Write};

use crate::error::Result;
use crate::image::{ImageView, ImageViewMut, Rect, byte_len, check_same_size, row_bytes};
use crate::pixel::Pixel;
use crate::validate;

/// An image in device memory, packed, with its pixel format in its type.
///
/// Made by [`Stream::upload`](crate::Stream::upload) or
/// [`Stream::alloc`](crate::Stream::alloc); never empty.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// let stream = gpu.stream()?;
/// let img = stream.alloc::<cuimg::Rgb8>(640, 480)?;
/// assert_eq!(img.dimensions(), (640, 480));
/// assert_eq!(img.pitch(), 640 * 3);
/// # Ok(()) }
/// ```
pub struct DeviceImage<P: Pixel> {
    pub(crate) buf: Tracked<u8>,
    width: u32,
    height: u32,
    _p: PhantomData<P>,
}

crate::image::dimensions! {
    impl[P: Pixel] DeviceImage<P> => |s| (s.width, s.height);
    impl['a, P: Pixel] DeviceView<'a, P> => |s| (s.rect.width, s.rect.height);
    impl['a, P: Pixel] DeviceViewMut<'a, P> => |s| (s.rect.width, s.rect.height);
    impl[P: Pixel] PinnedImage<P> => |s| (s.width, s.height);
}

impl<P: Pixel> std::fmt::Debug for DeviceImage<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceImage<{}>({}x{})", P::NAME, self.width, self.height)
    }
}

impl<P: Pixel> DeviceImage<P> {
    pub(crate) fn from_raw(buf: Tracked<u8>, width: u32, height: u32) -> DeviceImage<P> {
        debug_assert_eq!(buf.len(), row_bytes::<P>(width) * height as usize);
        DeviceImage { buf, width, height, _p: PhantomData }
    }

    /// Bytes per row (the images are packed).
    pub fn pitch(&self) -> usize {
        row_bytes::<P>(self.width)
    }

    /// Device memory of another library (cudarc, cust, CUDA C) as a device image, without a
    /// copy: cuimg's operations then read and write it in place. Dropping the image frees
    /// nothing; it waits until cuimg's work on the memory has finished.
    ///
    /// # Safety
    /// - `ptr` is device memory of the context of `stream`'s GPU (the device's primary
    ///   context, which cudarc's `CudaContext::new` and the CUDA runtime also use), holding
    ///   `height` packed rows of `width` pixels (`width * P::CHANNELS` bytes each), readable
    ///   and writable;
    /// - it stays allocated while the returned image lives;
    /// - the caller orders other work on it with cuimg's: cuimg's accesses come after the
    ///   work queued on `stream` before this call, and work the caller queues elsewhere while
    ///   the image lives must wait for cuimg's (the same stream, or [`Stream::synchronize`](super::Stream::synchronize)).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let s = gpu.stream()?;
    /// let mine = s.upload(&cuimg::Image::<cuimg::Gray8>::filled(8, 2, 5).view())?;
    /// // SAFETY: `mine` holds 2 packed rows of 8 gray pixels and outlives `alias`, which only
    /// // this stream uses.
    /// let alias = unsafe { cuimg::DeviceImage::<cuimg::Gray8>::from_raw_parts(&s, mine.as_raw_ptr(), 8, 2)? };
    /// assert!(s.download(&alias)?.as_bytes().iter().all(|&b| b == 5));
    /// # Ok(()) }
    /// ```
    pub unsafe fn from_raw_parts(stream: &super::Stream, ptr: u64, width: u32, height: u32) -> Result<DeviceImage<P>> {
        crate::validate::non_empty(width, height)?;
        let bytes = crate::image::byte_len::<P>(width, height)?;
        if ptr == 0 {
            return Err(crate::Error::WrongLength { what: "a device pointer (null)".into(), expected: 1, actual: 0 });
        }
        // SAFETY: the caller's contract: `bytes` bytes of this context's device memory at
        // `ptr`, alive as long as the image; `Tracked::borrowed` never frees them.
        let slice = unsafe { stream.raw.upgrade_device_ptr::<u8>(ptr, bytes) };
        Ok(DeviceImage::from_raw(Tracked::borrowed(slice, &stream.raw)?, width, height))
    }

    /// The device address of the first pixel (rows packed, [`DeviceImage::pitch`] bytes
    /// apart), for other libraries' kernels and copies. cuimg orders only its own work: order
    /// yours after it ([`Stream::synchronize`](super::Stream::synchronize), or the stream of [`Stream::as_raw`](super::Stream::as_raw)) and do not
    /// use the address after the image is dropped.
    pub fn as_raw_ptr(&self) -> u64 {
        self.buf.device_addr()
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.buf.len()
    }

    fn full(&self) -> Rect {
        Rect::new(0, 0, self.width, self.height)
    }

    /// The whole image as a view.
    pub fn view(&self) -> DeviceView<'_, P> {
        DeviceView { img: self, rect: self.full() }
    }

    /// The whole image as a mutable view.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, P> {
        let rect = self.full();
        DeviceViewMut { img: self, rect }
    }

    /// A region of the image.
    pub fn roi(&self, rect: Rect) -> Result<DeviceView<'_, P>> {
        rect.check_inside(self.width, self.height)?;
        Ok(DeviceView { img: self, rect })
    }

    /// A mutable region of the image.
    pub fn roi_mut(&mut self, rect: Rect) -> Result<DeviceViewMut<'_, P>> {
        rect.check_inside(self.width, self.height)?;
        Ok(DeviceViewMut { img: self, rect })
    }
}

/// A read-only region of a [`DeviceImage`].
#[derive(Clone, Copy, Debug)]
pub struct DeviceView<'a, P: Pixel> {
    pub(crate) img: &'a DeviceImage<P>,
    pub(crate) rect: Rect,
}

/// A mutable region of a [`DeviceImage`].
#[derive(Debug)]
pub struct DeviceViewMut<'a, P: Pixel> {
    pub(crate) img: &'a mut DeviceImage<P>,
    pub(crate) rect: Rect,
}

/// What a kernel needs to address a view: where its first pixel is, how far apart rows are,
/// and whether the fast contiguous path applies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub offset: u64,
    pub pitch: u64,
    pub width: u32,
    pub height: u32,
    /// Rows follow each other and the first byte is 16-byte aligned: the vector path.
    pub flat: bool,
}

fn layout<P: Pixel>(img: &DeviceImage<P>, rect: Rect) -> Layout {
    let pitch = img.pitch() as u64;
    let offset = rect.y as u64 * pitch + (rect.x as usize * P::CHANNELS) as u64;
    let contiguous = rect.width == img.width || rect.height <= 1;
    Layout { offset, pitch, width: rect.width, height: rect.height, flat: contiguous && offset.is_multiple_of(16) }
}

impl<'a, P: Pixel> DeviceView<'a, P> {
    /// The region within its image.
    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// A region of this view (coordinates relative to it).
    pub fn roi(&self, rect: Rect) -> Result<DeviceView<'a, P>> {
        rect.check_inside(self.rect.width, self.rect.height)?;
        Ok(DeviceView {
            img: self.img,
            rect: Rect::new(self.rect.x + rect.x, self.rect.y + rect.y, rect.width, rect.height),
        })
    }

    pub(crate) fn layout(&self) -> Layout {
        layout(self.img, self.rect)
    }

    /// The device address of the first pixel, for work queued on `stream` while the
    /// returned guard lives: `stream` waits for the image's last write, and the guard
    /// records the read when it drops (see `tracked.rs`).
    pub(crate) fn ptr(&self, stream: &'a Arc<CudaStream>) -> Result<(DevPtr<u8>, Read<'a, u8>)> {
        let guard = self.img.buf.read(stream)?;
        Ok((guard.ptr().offset(self.layout().offset), guard))
    }

    /// The device address of each view's first pixel, for work queued on `stream` while the
    /// returned guard lives: as [`DeviceView::ptr`] for each, the reads recorded by one
    /// event when it drops.
    pub(crate) fn ptrs(
        views: &[DeviceView<'a, P>],
        stream: &'a Arc<CudaStream>,
    ) -> Result<(Vec<DevPtr<u8>>, Reads<'a>)> {
        let mut reads = Reads::new(stream);
        let ptrs = views.iter().map(|v| Ok(reads.add(&v.img.buf)?.offset(v.layout().offset))).collect::<Result<_>>()?;
        Ok((ptrs, reads))
    }
}

impl<'a, P: Pixel> DeviceViewMut<'a, P> {
    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// A read-only view of the same region.
    pub fn as_view(&self) -> DeviceView<'_, P> {
        DeviceView { img: self.img, rect: self.rect }
    }

    pub(crate) fn layout(&self) -> Layout {
        layout(self.img, self.rect)
    }

    /// As [`DeviceView::ptr`], for writing: `stream` waits for every earlier access.
    pub(crate) fn ptr_mut<'s>(&'s mut self, stream: &'s Arc<CudaStream>) -> Result<(DevPtrMut<u8>, Write<'s, u8>)> {
        let offset = self.layout().offset;
        let mut guard = self.img.buf.write(stream)?;
        Ok((guard.ptr().offset(offset), guard))
    }
}

/// Anything that reads as a device view: a [`DeviceImage`] (all of it) or a [`DeviceView`].
pub trait AsDeviceView<P: Pixel> {
    fn device_view(&self) -> DeviceView<'_, P>;
}

impl<P: Pixel> AsDeviceView<P> for DeviceImage<P> {
    fn device_view(&self) -> DeviceView<'_, P> {
        self.view()
    }
}

impl<P: Pixel> AsDeviceView<P> for DeviceView<'_, P> {
    fn device_view(&self) -> DeviceView<'_, P> {
        *self
    }
}

/// Anything that writes as a device view: a [`DeviceImage`] or a [`DeviceViewMut`].
pub trait AsDeviceViewMut<P: Pixel> {
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, P>;
}

impl<P: Pixel> AsDeviceViewMut<P> for DeviceImage<P> {
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, P> {
        self.view_mut()
    }
}

impl<P: Pixel> AsDeviceViewMut<P> for DeviceViewMut<'_, P> {
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, P> {
        DeviceViewMut { img: self.img, rect: self.rect }
    }
}

/// A typed array in device memory (the operands of [`Stream::gather`](crate::Stream::gather)).
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// let stream = gpu.stream()?;
/// let buf = stream.upload_slice(&[1.5f64, 2.5])?;
/// assert_eq!(stream.download_slice(&buf)?, vec![1.5, 2.5]);
/// # Ok(()) }
/// ```
pub struct DeviceBuffer<T: Pod> {
    /// At least one byte: the driver rejects empty allocations.
    pub(crate) buf: Tracked<u8>,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Pod> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer<{}>(len {})", std::any::type_name::<T>(), self.len)
    }
}

impl<T: Pod> DeviceBuffer<T> {
    pub(crate) fn from_raw(buf: Tracked<u8>, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer { buf, len, _t: PhantomData }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A page-locked host image: copies from and to it run asynchronously on a stream, at full
/// PCIe speed. Reading it waits for the copies in flight, so it is never seen half-written.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// let mut pinned = gpu.alloc_pinned::<cuimg::Gray8>(64, 64)?;
/// pinned.as_bytes_mut()?.fill(7);
/// let stream = gpu.stream()?;
/// let dev = stream.upload_pinned(&pinned)?; // returns at once
/// stream.download_pinned(&dev, &mut pinned)?;
/// assert!(pinned.as_bytes()?.iter().all(|&b| b == 7)); // waits for the copy
/// # Ok(()) }
/// ```
pub struct PinnedImage<P: Pixel> {
    pub(crate) buf: TrackedHost,
    width: u32,
    height: u32,
    _p: PhantomData<P>,
}

impl<P: Pixel> std::fmt::Debug for PinnedImage<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PinnedImage<{}>({}x{})", P::NAME, self.width, self.height)
    }
}

impl<P: Pixel> PinnedImage<P> {
    pub(crate) fn from_raw(buf: TrackedHost, width: u32, height: u32) -> PinnedImage<P> {
        PinnedImage { buf, width, height, _p: PhantomData }
    }

    /// The bytes, once the copies from the device into them have finished.
    pub fn as_bytes(&self) -> Result<&[u8]> {
        Ok(self.buf.host_bytes()?)
    }

    /// The bytes for writing, once every copy from or to them, on any stream, has finished.
    pub fn as_bytes_mut(&mut self) -> Result<&mut [u8]> {
        Ok(self.buf.host_bytes_mut()?)
    }

    /// A view, once the copies in flight have finished.
    pub fn view(&self) -> Result<ImageView<'_, P>> {
        let (w, h) = self.dimensions();
        ImageView::new(self.as_bytes()?, w, h, row_bytes::<P>(w))
    }

    /// A mutable view, once the copies in flight have finished.
    pub fn view_mut(&mut self) -> Result<ImageViewMut<'_, P>> {
        let (w, h) = self.dimensions();
        ImageViewMut::new(self.as_bytes_mut()?, w, h, row_bytes::<P>(w))
    }

    /// Copies `src` (same dimensions) in.
    pub fn copy_from(&mut self, src: &ImageView<'_, P>) -> Result<()> {
        check_same_size("pinned image", self.dimensions(), src.dimensions())?;
        self.view_mut()?.copy_from(src)
    }
}

impl Gpu {
    /// A page-locked host image of zeroed pixels, for asynchronous copies.
    pub fn alloc_pinned<P: Pixel>(&self, width: u32, height: u32) -> Result<PinnedImage<P>> {
        validate::non_empty(width, height)?;
        let bytes = byte_len::<P>(width, height)?;
        // Not write-combined: reading a download back must be fast too.
        // SAFETY: flags 0 asks for plain page-locked memory; it is zeroed below before use.
        let buf = unsafe { self.inner.ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }?;
        let mut buf = TrackedHost::new(buf);
        buf.host_bytes_mut()?.fill(0);
        Ok(PinnedImage::from_raw(buf, width, height))
    }
}
