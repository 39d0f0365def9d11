//! Lookup tables on the GPU.

use cuimg_abi::lut::{
    LutBatch, LutC1Batch, LutC1Flat, LutC1FlatReversed, LutC2Batch, LutC2Flat, LutC3Batch, LutC3Flat, LutC4Batch,
    LutC4Flat, LutFlat, LutPitched, LutPitchedKernel, shared_bytes,
};
use cuimg_abi::{BLOCK, DevPtr, DevPtrMut, Kernel};

use super::Lut;
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::pixel::{Channels, Pixel};
use crate::runtime::{
    AsDeviceView, AsDeviceViewMut, Chunk, DeviceBatch, DeviceView, DeviceViewMut, Gpu, Layout, Stream, Tracked,
};
use crate::validate;

/// Lookup tables in device memory, one per channel.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// use cuimg::{Image, Lut, Rgb8};
/// let stream = gpu.stream()?;
/// let luts = stream.upload_lut::<Rgb8>(&Lut::invert())?;
/// assert_eq!(luts.channels(), 3);
/// let src = stream.upload(&Image::<Rgb8>::filled(5, 5, 10).view())?;
/// let mut dst = stream.alloc::<Rgb8>(5, 5)?;
/// stream.apply_lut(&src, &mut dst, &luts)?;
/// assert!(stream.download(&dst)?.as_bytes().iter().all(|&b| b == 245));
/// # Ok(()) }
/// ```
pub struct DeviceLuts {
    pub(crate) buf: Tracked<u8>,
    channels: usize,
    /// 1: the same tables for every image; else one set per image of a batch.
    images: usize,
}

impl std::fmt::Debug for DeviceLuts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceLuts({} channels)", self.channels)
    }
}

impl DeviceLuts {
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Sets of tables: 1, or one per image of a batch.
    pub fn images(&self) -> usize {
        self.images
    }
}

/// The order a contiguous gray image is walked in. Equalization applies its table right
/// after the histogram read the image from the first byte: walked from the last, the part of
/// the image still in L2 is read first, before the apply's own traffic evicts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    Forward,
    Reverse,
}

impl Stream {
    /// One table per channel (1 to 4 of them), copied to the device.
    pub fn upload_luts(&self, luts: &[Lut]) -> Result<DeviceLuts> {
        if !(1..=4).contains(&luts.len()) {
            return Err(Error::WrongLength { what: "lookup tables (1 to 4)".into(), expected: 4, actual: luts.len() });
        }
        let flat: Vec<u8> = luts.iter().flat_map(|l| l.0).collect();
        Ok(DeviceLuts { buf: self.upload_tracked(&flat)?, channels: luts.len(), images: 1 })
    }

    /// The same table for every channel of `P`.
    pub fn upload_lut<P: Pixel>(&self, lut: &Lut) -> Result<DeviceLuts> {
        self.upload_luts(&vec![*lut; P::CHANNELS])
    }

    /// `dst = table[c](src)` for each channel `c`; same size, any pitch or region.
    pub fn apply_lut<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        luts: &DeviceLuts,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        self.check_pair("LUT", &src, &dst)?;
        if luts.channels != P::CHANNELS {
            return Err(Error::WrongLength {
                what: format!("lookup tables for {}", P::NAME),
                expected: P::CHANNELS,
                actual: luts.channels,
            });
        }
        if luts.images != 1 {
            return Err(Error::WrongLength {
                what: "sets of lookup tables for one image".into(),
                expected: 1,
                actual: luts.images,
            });
        }
        self.check_context("the lookup tables", luts.buf.context())?;
        let tables = luts.buf.read(&self.raw)?;
        self.apply_lut_at(&src, &mut dst, tables.ptr(), Order::Forward)
    }

    /// `img = table[c](img)` for each channel `c`, in place (no second image needed).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Gray8, Image, Lut};
    /// let stream = gpu.stream()?;
    /// let mut img = stream.upload(&Image::<Gray8>::filled(7, 3, 10).view())?;
    /// stream.apply_lut_in_place(&mut img, &stream.upload_lut::<Gray8>(&Lut::invert())?)?;
    /// assert!(stream.download(&img)?.as_bytes().iter().all(|&b| b == 245));
    /// # Ok(()) }
    /// ```
    pub fn apply_lut_in_place<P: Pixel>(&self, img: &mut impl AsDeviceViewMut<P>, luts: &DeviceLuts) -> Result<()> {
        let mut img = img.device_view_mut();
        validate::non_empty(img.width(), img.height())?;
        self.check_context("the LUT image", img.img.buf.context())?;
        if luts.channels != P::CHANNELS || luts.images != 1 {
            return Err(Error::WrongLength {
                what: format!("lookup tables for {}", P::NAME),
                expected: P::CHANNELS,
                actual: luts.channels * luts.images,
            });
        }
        self.check_context("the lookup tables", luts.buf.context())?;
        let tables = luts.buf.read(&self.raw)?;
        self.apply_lut_in_place_at(&mut img, tables.ptr(), Order::Forward)
    }

    /// Applies the tables at `lut` (256 bytes per channel, ordered by the caller's guard) to
    /// checked views: same size, non-empty, this context.
    pub(crate) fn apply_lut_at<P: Pixel>(
        &self,
        src: &DeviceView<'_, P>,
        dst: &mut DeviceViewMut<'_, P>,
        lut: DevPtr<u8>,
        order: Order,
    ) -> Result<()> {
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        self.lut_launch::<P>((s, sl), (d, dl), lut, order)
    }

    /// `img = table[c](img)` in place: each element is read and written by the same thread.
    /// The view is checked (non-empty, this context); `lut` is under the caller's guard.
    pub(crate) fn apply_lut_in_place_at<P: Pixel>(
        &self,
        img: &mut DeviceViewMut<'_, P>,
        lut: DevPtr<u8>,
        order: Order,
    ) -> Result<()> {
        let l = img.layout();
        let (d, _write) = img.ptr_mut(&self.raw)?;
        self.lut_launch::<P>((d.as_const(), l), (d, l), lut, order)
    }

    /// The LUT kernel for a source and destination of the same size (possibly the same
    /// bytes), each with its layout.
    fn lut_launch<P: Pixel>(
        &self,
        (s, sl): (DevPtr<u8>, Layout),
        (d, dl): (DevPtrMut<u8>, Layout),
        lut: DevPtr<u8>,
        order: Order,
    ) -> Result<()> {
        let smem = shared_bytes(P::CHANNELS as u32);
        if sl.flat && dl.flat {
            let params = LutFlat { src: s, dst: d, n: sl.width as u64 * sl.height as u64, lut };
            return match P::LAYOUT {
                Channels::One if order == Order::Reverse => self.lut_flat::<LutC1FlatReversed>(params, smem),
                Channels::One => self.lut_flat::<LutC1Flat>(params, smem),
                Channels::Two => self.lut_flat::<LutC2Flat>(params, smem),
                Channels::Three => self.lut_flat::<LutC3Flat>(params, smem),
                Channels::Four => self.lut_flat::<LutC4Flat>(params, smem),
            };
        }
        let row_bytes = sl.width as u64 * P::CHANNELS as u64;
        let params = LutPitched {
            src: s,
            s_pitch: sl.pitch,
            dst: d,
            d_pitch: dl.pitch,
            row_bytes,
            height: sl.height as u64,
            lut,
            channels: P::CHANNELS as u32,
        };
        let cfg = self.planar::<LutPitchedKernel>(row_bytes, sl.height as u64, smem)?;
        // SAFETY: rows 0..height of `row_bytes` bytes at src + y*s_pitch and dst + y*d_pitch
        // lie in their images (same dimensions, checked; the same bytes in place, where each
        // thread reads an element before writing it); `lut` holds 256 * channels bytes;
        // shared memory as the kernel documents.
        unsafe { self.launch::<LutPitchedKernel>(cfg, params) }
    }

    /// One of the contiguous kernels, whose channel count is `P::CHANNELS` (the caller's
    /// exhaustive match picks it).
    fn lut_flat<K: Kernel<Params = LutFlat>>(&self, params: LutFlat, smem: u32) -> Result<()> {
        let cfg = self.linear::<K>(params.n / 16, smem)?;
        // SAFETY: both views are contiguous, 16-byte aligned and hold n * CHANNELS bytes;
        // `lut` holds 256 * CHANNELS bytes; shared memory as the kernel documents.
        unsafe { self.launch::<K>(cfg, params) }
    }
}

impl Gpu {
    /// Blocking: the same table on every channel.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Gray8, Image, Lut};
    /// let img = Image::from_fn(17, 5, |x, _| Gray8([x as u8 * 10]));
    /// let out = gpu.apply_lut(&img.view(), &Lut::gamma(2.2))?;
    /// assert_eq!(out, cuimg::cpu::apply_lut(&img.view(), &Lut::gamma(2.2))?);
    /// # Ok(()) }
    /// ```
    pub fn apply_lut<P: Pixel>(&self, src: &ImageView<'_, P>, lut: &Lut) -> Result<Image<P>> {
        self.apply_luts(src, &vec![*lut; P::CHANNELS])
    }

    /// Blocking: table `c` on channel `c`, one per channel.
    pub fn apply_luts<P: Pixel>(&self, src: &ImageView<'_, P>, luts: &[Lut]) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        super::check_count(luts, P::CHANNELS)?;
        let s = self.blocking_stream();
        let d_luts = s.upload_luts(luts)?;
        let d_src = s.upload(src)?;
        let mut d_dst = s.alloc_for_output::<P>(src.width(), src.height())?;
        let tables = d_luts.buf.read(&s.raw)?;
        s.apply_lut_at(&d_src.view(), &mut d_dst.view_mut(), tables.ptr(), Order::Forward)?;
        drop(tables);
        s.download(&d_dst)
    }
}

impl Stream {
    /// One set of tables per image of a batch (each `P::CHANNELS` tables), copied to the
    /// device.
    pub fn upload_batch_luts<P: Pixel>(&self, per_image: &[Vec<Lut>]) -> Result<DeviceLuts> {
        if per_image.is_empty() {
            return Err(Error::EmptyBatch);
        }
        for luts in per_image {
            super::check_count(luts, P::CHANNELS)?;
        }
        let flat: Vec<u8> = per_image.iter().flatten().flat_map(|l| l.0).collect();
        Ok(DeviceLuts { buf: self.upload_tracked(&flat)?, channels: P::CHANNELS, images: per_image.len() })
    }

    /// `dst = table[c](src)` for every image of a batch: one set of tables for all
    /// ([`Stream::upload_lut`]) or one per image ([`Stream::upload_batch_luts`]).
    pub fn apply_lut_batch<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        luts: &DeviceLuts,
    ) -> Result<()> {
        self.check_batch_pair("LUT", src, dst)?;
        if luts.channels != P::CHANNELS || (luts.images != 1 && luts.images != src.len()) {
            return Err(Error::WrongLength {
                what: format!("lookup tables for {} images of {} (one set, or one per image)", src.len(), P::NAME),
                expected: src.len() * P::CHANNELS,
                actual: luts.images * luts.channels,
            });
        }
        self.check_context("the lookup tables", luts.buf.context())?;
        let tables = luts.buf.read(&self.raw)?;
        let stride = if luts.images == 1 { 0 } else { 256 * P::CHANNELS as u64 };
        self.apply_lut_batch_at(src, dst, tables.ptr(), stride)
    }

    /// Applies the tables at `lut` (`lut_stride` bytes apart per image, 0 for one set) to
    /// checked batches.
    pub(crate) fn apply_lut_batch_at<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        lut: DevPtr<u8>,
        lut_stride: u64,
    ) -> Result<()> {
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        let smem = shared_bytes(P::CHANNELS as u32);
        for chunk in Chunk::all(src.len()) {
            let params = LutBatch {
                src: chunk.table(from.table.ptr()),
                dst: chunk.table(to_table.ptr()),
                lut: lut.offset(chunk.start as u64 * lut_stride),
                lut_stride,
            };
            let per_image = (src.max_pixels() / 16, 1);
            match P::LAYOUT {
                Channels::One => self.lut_batch_launch::<LutC1Batch>(params, per_image, chunk, smem),
                Channels::Two => self.lut_batch_launch::<LutC2Batch>(params, per_image, chunk, smem),
                Channels::Three => self.lut_batch_launch::<LutC3Batch>(params, per_image, chunk, smem),
                Channels::Four => self.lut_batch_launch::<LutC4Batch>(params, per_image, chunk, smem),
            }?;
        }
        Ok(())
    }

    fn lut_batch_launch<K: Kernel<Params = LutBatch>>(
        &self,
        params: LutBatch,
        per_image: (u64, u64),
        chunk: Chunk,
        smem: u32,
    ) -> Result<()> {
        let cfg = self.batch_config::<K>(per_image, (BLOCK, 1), chunk.count, smem)?;
        // SAFETY: both tables hold `count` entries of equal sizes pointing at packed, 256-byte
        // aligned images of CHANNELS bytes per pixel (the kernel's, by the caller's match)
        // inside the guarded allocations; every image's tables (256 * CHANNELS bytes) lie in
        // the guarded table buffer; shared memory as the kernel documents.
        unsafe { self.launch::<K>(cfg, params) }
    }
}

impl Gpu {
    /// Blocking: the same table on every channel of many host images.
    pub fn apply_lut_batch<P: Pixel>(&self, images: &[ImageView<'_, P>], lut: &Lut) -> Result<Vec<Image<P>>> {
        self.apply_luts_batch(images, &vec![*lut; P::CHANNELS])
    }

    /// Blocking: table `c` on channel `c` of many host images (one set for all).
    pub fn apply_luts_batch<P: Pixel>(&self, images: &[ImageView<'_, P>], luts: &[Lut]) -> Result<Vec<Image<P>>> {
        super::check_count(luts, P::CHANNELS)?;
        let s = self.blocking_stream();
        let luts = s.upload_luts(luts)?;
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(&src.sizes())?;
        s.apply_lut_batch(&src, &mut dst, &luts)?;
        s.download_batch(&dst)
    }
}
