//! The orientation launches: one kernel per channel count, single and batch.

use cuimg_abi::orient::{
    OrientBatch, OrientC1, OrientC1Batch, OrientC2, OrientC2Batch, OrientC3, OrientC3Batch, OrientC4, OrientC4Batch,
    OrientPitched,
};
use cuimg_abi::Kernel;
use cuimg_abi::orient::{TILE, TILE_ROWS, TILED_SHARED_BYTES};

use super::Orientation;
use crate::error::{Error, Result};
use crate::image::{Image, ImageView, check_same_size};
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Chunk, DeviceBatch, Gpu, Stream};
use crate::validate;

/// The rows a 2-D launch of `TILE` x `TILE_ROWS` blocks is sized for, and its shared memory:
/// a mapping that swaps runs the tiled form, whose blocks each take `TILE` output rows (so a
/// quarter as many rows of blocks), with a tile of shared memory; the others take one
/// output pixel per thread.
fn tiled_rows(mapping: cuimg_abi::orient::Mapping, rows: u64) -> (u64, u32) {
    match mapping.swap != 0 {
        true => (rows.div_ceil(u64::from(TILE / TILE_ROWS)), TILED_SHARED_BYTES),
        false => (rows, 0),
    }
}

impl Stream {
    /// `dst` = `src` turned or mirrored as `o` says; `dst` is `o.size(width, height)` of
    /// `src` (a region of either works).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Image, Orientation, Rgb8};
    /// let img = Image::from_fn(40, 30, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(30, 40)?;
    /// stream.orient(&src, &mut dst, Orientation::Rotate90)?;
    /// assert_eq!(stream.download(&dst)?, cuimg::cpu::orient(&img.view(), Orientation::Rotate90)?);
    /// # Ok(()) }
    /// ```
    pub fn orient<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        o: Orientation,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        validate::non_empty(src.width(), src.height())?;
        let want = o.size(src.width(), src.height());
        check_same_size("the orient destination", dst.dimensions(), want)?;
        if !self.same_context(src.img.buf.context()) || !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext("the orient source or destination".into()));
        }
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let params = OrientPitched {
            src: s,
            s_pitch: sl.pitch,
            s_width: sl.width as u64,
            s_height: sl.height as u64,
            dst: d,
            d_pitch: dl.pitch,
            d_width: dl.width as u64,
            d_height: dl.height as u64,
            mapping: o.mapping(),
        };
        match P::LAYOUT {
            Channels::One => self.orient_launch::<OrientC1>(params),
            Channels::Two => self.orient_launch::<OrientC2>(params),
            Channels::Three => self.orient_launch::<OrientC3>(params),
            Channels::Four => self.orient_launch::<OrientC4>(params),
        }
    }

    fn orient_launch<K: Kernel<Params = OrientPitched>>(&self, p: OrientPitched) -> Result<()> {
        let (rows, smem) = tiled_rows(p.mapping, p.d_height);
        let cfg = self.planar::<K>(p.d_width, rows, smem)?;
        // SAFETY: `dst` holds d_height rows of d_width pixels at d_pitch and `src` s_height
        // rows of s_width at s_pitch (views of checked sizes, the output's the source's,
        // swapped when the mapping swaps); the kernel's channel count is P's (the caller's
        // exhaustive match); blocks of TILE x TILE_ROWS threads (`planar`'s) with the tiled
        // form's shared memory when the mapping swaps.
        unsafe { self.launch::<K>(cfg, p) }
    }

    /// Every image of a batch turned or mirrored as `o` says, one launch per 65,535 images;
    /// `dst` holds each image's `o.size`.
    pub fn orient_batch<P: Pixel>(&self, src: &DeviceBatch<P>, dst: &mut DeviceBatch<P>, o: Orientation) -> Result<()> {
        let sizes: Vec<(u32, u32)> = src.sizes().into_iter().map(|(w, h)| o.size(w, h)).collect();
        self.check_batch_sizes("orient destination", sizes.into_iter(), dst)?;
        if !self.same_context(src.buf.context()) || !self.same_context(dst.buf.context()) {
            return Err(Error::WrongContext("the orient source or destination batch".into()));
        }
        let extent = dst.max_extent();
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        for chunk in Chunk::all(src.len()) {
            let params = OrientBatch {
                src: chunk.table(from.table.ptr()),
                dst: chunk.table(to_table.ptr()),
                mapping: o.mapping(),
            };
            match P::LAYOUT {
                Channels::One => self.orient_batch_launch::<OrientC1Batch>(params, extent, chunk),
                Channels::Two => self.orient_batch_launch::<OrientC2Batch>(params, extent, chunk),
                Channels::Three => self.orient_batch_launch::<OrientC3Batch>(params, extent, chunk),
                Channels::Four => self.orient_batch_launch::<OrientC4Batch>(params, extent, chunk),
            }?;
        }
        Ok(())
    }

    fn orient_batch_launch<K: Kernel<Params = OrientBatch>>(
        &self,
        params: OrientBatch,
        extent: (u64, u64),
        chunk: Chunk,
    ) -> Result<()> {
        let (rows, smem) = tiled_rows(params.mapping, extent.1);
        let cfg = self.batch_config::<K>((extent.0, rows), (TILE, TILE_ROWS), chunk.count, smem)?;
        // SAFETY: both tables hold `count` entries pointing at packed images of CHANNELS
        // bytes per pixel (the kernel's, by the caller's match) inside the guarded
        // allocations, each output its source's size (swapped when the mapping swaps).
        unsafe { self.launch::<K>(cfg, params) }
    }
}

impl Gpu {
    /// Blocking: `src` turned or mirrored as `o` says.
    pub fn orient<P: Pixel>(&self, src: &ImageView<'_, P>, o: Orientation) -> Result<Image<P>> {
        validate::non_empty(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let (w, h) = o.size(src.width(), src.height());
        let mut dst = s.alloc_for_output::<P>(w, h)?;
        s.orient(&d_src, &mut dst, o)?;
        s.download(&dst)
    }

    /// Blocking: every image turned or mirrored as `o` says, one launch for all.
    pub fn orient_batch<P: Pixel>(&self, images: &[ImageView<'_, P>], o: Orientation) -> Result<Vec<Image<P>>> {
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let sizes: Vec<(u32, u32)> = src.sizes().into_iter().map(|(w, h)| o.size(w, h)).collect();
        let mut dst = s.alloc_batch_for_output::<P>(&sizes)?;
        s.orient_batch(&src, &mut dst, o)?;
        s.download_batch(&dst)
    }
}
