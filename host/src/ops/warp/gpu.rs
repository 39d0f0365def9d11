//! The warp launches: one job per image (its planes, its `f32` map), one launch for a
//! single image or a whole ragged batch.

use cuimg_abi::resize::{Plane, pair};
use cuimg_abi::warp::{WarpC1, WarpC3, WarpC4, WarpJob, WarpParams};
use cuimg_abi::{DevPtr, Kernel, MAX_BATCH_LAUNCH};

use super::{Warp, WarpFilter, job};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::border::Border;
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, DeviceBatch, Gpu, Stream};

/// A job as the `u64` words of its `repr(C)` layout (little-endian, as every GPU CUDA runs
/// on), to upload without an unsafe cast.
fn words(j: &WarpJob) -> [u64; 12] {
    const _: () = assert!(std::mem::size_of::<WarpJob>() == 96);
    let f = |i: usize| j.m[i].to_bits();
    let (s, d) = (j.src.words(), j.dst.words());
    [
        s[0],
        s[1],
        s[2],
        d[0],
        d[1],
        d[2],
        pair(f(0), f(1)),
        pair(f(2), f(3)),
        pair(f(4), f(5)),
        pair(f(6), f(7)),
        pair(f(8), j.flags),
        pair(j.value, j._pad),
    ]
}

/// The warps of a batch: one for all, or one per image.
fn per_image(warps: &[Warp], len: usize) -> Result<impl Iterator<Item = &Warp>> {
    if warps.len() != 1 && warps.len() != len {
        return Err(Error::WrongLength { what: "the warps of a batch (one, or one per image)".into(), expected: len, actual: warps.len() });
    }
    Ok(warps.iter().cycle().take(len))
}

impl Stream {
    /// `dst` = `src` warped as `cv2.warpAffine` or `cv2.warpPerspective` warps it into an
    /// image of `dst`'s size (a region of either works).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Border, Image, Rgb8, Warp, WarpFilter};
    /// let img = Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let turn = Warp::rotation((32.0, 24.0), 17.5, 1.0);
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(64, 48)?;
    /// stream.warp(&src, &mut dst, &turn, WarpFilter::Linear, Border::Replicate)?;
    /// let want = cuimg::cpu::warp(&img.view(), &turn, 64, 48, WarpFilter::Linear, Border::Replicate)?;
    /// assert_eq!(stream.download(&dst)?, want);
    /// # Ok(()) }
    /// ```
    pub fn warp<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        warp: &Warp,
        filter: WarpFilter,
        border: Border,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        let mut j = job::<P>(warp, filter, border, src.dimensions(), dst.dimensions())?;
        if !self.same_context(src.img.buf.context()) || !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext("the warp source or destination".into()));
        }
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        j.src = Plane { data: s.addr(), pitch: sl.pitch, width: sl.width, height: sl.height };
        j.dst = Plane { data: d.addr(), pitch: dl.pitch, width: dl.width, height: dl.height };
        self.warp_jobs::<P>(&[j])
    }

    /// Every image of a batch warped into its image in `dst` (any sizes each): `warps` holds
    /// one warp for all, or one per image. One launch for the batch.
    pub fn warp_batch<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        warps: &[Warp],
        filter: WarpFilter,
        border: Border,
    ) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::WrongLength { what: "the warp destination batch".into(), expected: src.len(), actual: dst.len() });
        }
        if src.is_empty() {
            return Err(Error::EmptyBatch);
        }
        let mut jobs = src
            .entries
            .iter()
            .zip(&dst.entries)
            .zip(per_image(warps, src.len())?)
            .map(|((s, d), w)| job::<P>(w, filter, border, (s.width, s.height), (d.width, d.height)))
            .collect::<Result<Vec<_>>>()?;
        if !self.same_context(src.buf.context()) || !self.same_context(dst.buf.context()) {
            return Err(Error::WrongContext("the warp source or destination batch".into()));
        }
        let from = src.read(&self.raw)?;
        let base_in = from._data.ptr().addr();
        let mut to = dst.buf.write(&self.raw)?;
        let base_out = to.ptr().addr();
        let c = P::CHANNELS as u64;
        for ((j, s), d) in jobs.iter_mut().zip(&src.entries).zip(&dst.entries) {
            j.src = Plane { data: base_in + s.offset as u64, pitch: s.width as u64 * c, width: s.width, height: s.height };
            j.dst = Plane { data: base_out + d.offset as u64, pitch: d.width as u64 * c, width: d.width, height: d.height };
        }
        self.warp_jobs::<P>(&jobs)
    }

    /// Launches the jobs (whose planes are held under their guards by the caller).
    fn warp_jobs<P: Pixel>(&self, jobs: &[WarpJob]) -> Result<()> {
        // SAFETY: each job's planes are guarded views of P's channel count (the kernel's, by
        // the match), the source at least one pixel (checked by `job`).
        unsafe {
            match P::LAYOUT {
                Channels::One => self.warp_launch::<WarpC1>(jobs),
                Channels::Three => self.warp_launch::<WarpC3>(jobs),
                Channels::Four => self.warp_launch::<WarpC4>(jobs),
                Channels::Two => Err(Error::UnsupportedFormat(format!("warps take no {} images", P::NAME))),
            }
        }
    }

    /// Launches `K` over `jobs` (uploaded here), in chunks of at most `MAX_BATCH_LAUNCH`.
    ///
    /// # Safety
    /// Every job's planes describe memory `K` may read (source) and write (destination),
    /// of `K`'s channel count, the source at least one pixel.
    unsafe fn warp_launch<K: Kernel<Params = WarpParams>>(&self, jobs: &[WarpJob]) -> Result<()> {
        let words: Vec<u64> = jobs.iter().flat_map(words).collect();
        let size = std::mem::size_of::<WarpJob>() as u64;
        self.with_table(bytemuck::cast_slice(&words), |base| {
            let base: DevPtr<WarpJob> = DevPtr::new(base);
            for (i, chunk) in jobs.chunks(MAX_BATCH_LAUNCH as usize).enumerate() {
                let extent =
                    chunk.iter().fold((1u64, 1u64), |(w, h), j| (w.max(j.dst.width as u64), h.max(j.dst.height as u64)));
                let cfg = self.batch_config::<K>(extent, (32, 8), chunk.len() as u32, 0)?;
                let jobs = base.offset(i as u64 * MAX_BATCH_LAUNCH as u64 * size);
                // SAFETY: the caller's contract, for this chunk's jobs, one grid layer each;
                // the table is on the device for the launches `with_table` runs, on this
                // stream.
                unsafe { self.launch::<K>(cfg, WarpParams { jobs, count: chunk.len() as u32, _pad: 0 })? };
            }
            Ok(())
        })
    }
}

impl Gpu {
    /// Blocking: `src` warped into a `width` x `height` image (see [`Stream::warp`]).
    pub fn warp<P: Pixel>(
        &self,
        src: &ImageView<'_, P>,
        warp: &Warp,
        width: u32,
        height: u32,
        filter: WarpFilter,
        border: Border,
    ) -> Result<Image<P>> {
        job::<P>(warp, filter, border, src.dimensions(), (width, height))?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut dst = s.alloc_for_output::<P>(width, height)?;
        s.warp(&d_src, &mut dst, warp, filter, border)?;
        s.download(&dst)
    }

    /// Blocking: every image warped into an image of its size in `sizes`, `warps` one for
    /// all or one per image; one launch for all.
    pub fn warp_batch<P: Pixel>(
        &self,
        images: &[ImageView<'_, P>],
        warps: &[Warp],
        sizes: &[(u32, u32)],
        filter: WarpFilter,
        border: Border,
    ) -> Result<Vec<Image<P>>> {
        if sizes.len() != images.len() {
            return Err(Error::WrongLength { what: "the warp output sizes".into(), expected: images.len(), actual: sizes.len() });
        }
        for ((img, w), &size) in images.iter().zip(per_image(warps, images.len())?).zip(sizes) {
            job::<P>(w, filter, border, img.dimensions(), size)?;
        }
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = s.alloc_batch_for_output::<P>(sizes)?;
        s.warp_batch(&src, &mut dst, warps, filter, border)?;
        s.download_batch(&dst)
    }
}
