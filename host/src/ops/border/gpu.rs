//! The border launches: one kernel per channel count.

use cuimg_abi::Kernel;
use cuimg_abi::border::{
    BorderBatch, BorderC1, BorderC1Batch, BorderC2, BorderC2Batch, BorderC3, BorderC3Batch, BorderC4, BorderC4Batch,
    BorderPitched,
};

use super::{Border, Padding, output_size};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView, check_same_size};
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Chunk, DeviceBatch, Gpu, Stream};

impl Stream {
    /// `dst` = `src` with `pad` pixels added on each side as `border` makes them; `dst` is
    /// the padded size (a region of either works).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Border, Image, Padding, Rgb8};
    /// let img = Image::from_fn(4, 3, |x, y| Rgb8([x as u8, y as u8, 7]));
    /// let pad = Padding { top: 1, bottom: 2, left: 3, right: 0 };
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let mut dst = stream.alloc::<Rgb8>(7, 6)?;
    /// stream.copy_make_border(&src, &mut dst, pad, Border::Wrap)?;
    /// assert_eq!(stream.download(&dst)?, cuimg::cpu::copy_make_border(&img.view(), pad, Border::Wrap)?);
    /// # Ok(()) }
    /// ```
    pub fn copy_make_border<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        dst: &mut impl AsDeviceViewMut<P>,
        pad: Padding,
        border: Border,
    ) -> Result<()> {
        let (src, mut dst) = (src.device_view(), dst.device_view_mut());
        let want = output_size(src.width(), src.height(), pad)?;
        check_same_size("the border destination", dst.dimensions(), want)?;
        if !self.same_context(src.img.buf.context()) || !self.same_context(dst.img.buf.context()) {
            return Err(Error::WrongContext("the border source or destination".into()));
        }
        let (sl, dl) = (src.layout(), dst.layout());
        let (s, _read) = src.ptr(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let params = BorderPitched {
            src: s,
            s_pitch: sl.pitch,
            s_width: sl.width as u64,
            s_height: sl.height as u64,
            dst: d,
            d_pitch: dl.pitch,
            d_width: dl.width as u64,
            d_height: dl.height as u64,
            left: pad.left as u64,
            top: pad.top as u64,
            kind: border.kind(),
            value: border.packed(),
        };
        match P::LAYOUT {
            Channels::One => self.border_launch::<BorderC1>(params),
            Channels::Two => self.border_launch::<BorderC2>(params),
            Channels::Three => self.border_launch::<BorderC3>(params),
            Channels::Four => self.border_launch::<BorderC4>(params),
        }
    }

    fn border_launch<K: Kernel<Params = BorderPitched>>(&self, p: BorderPitched) -> Result<()> {
        let cfg = self.planar::<K>(p.d_width, p.d_height, 0)?;
        // SAFETY: `src` holds s_height rows of s_width pixels at s_pitch and `dst` d_height
        // rows of d_width at d_pitch (views of checked sizes, the output the padded size);
        // the kernel's channel count is P's (the caller's exhaustive match).
        unsafe { self.launch::<K>(cfg, p) }
    }

    /// Every image of a batch padded as `border` makes it, one launch per 65,535 images;
    /// `dst` holds each image's padded size.
    pub fn copy_make_border_batch<P: Pixel>(
        &self,
        src: &DeviceBatch<P>,
        dst: &mut DeviceBatch<P>,
        pad: Padding,
        border: Border,
    ) -> Result<()> {
        let sizes = src.sizes().into_iter().map(|(w, h)| output_size(w, h, pad)).collect::<Result<Vec<_>>>()?;
        self.check_batch_sizes("border destination", sizes.into_iter(), dst)?;
        if !self.same_context(src.buf.context()) || !self.same_context(dst.buf.context()) {
            return Err(Error::WrongContext("the border source or destination batch".into()));
        }
        let extent = dst.max_extent();
        let from = src.read(&self.raw)?;
        let to_table = dst.table.read(&self.raw)?;
        let _to = dst.buf.write(&self.raw)?;
        for chunk in Chunk::all(src.len()) {
            let params = BorderBatch {
                src: chunk.table(from.table.ptr()),
                dst: chunk.table(to_table.ptr()),
                left: pad.left as u64,
                top: pad.top as u64,
                kind: border.kind(),
                value: border.packed(),
            };
            match P::LAYOUT {
                Channels::One => self.border_batch_launch::<BorderC1Batch>(params, extent, chunk),
                Channels::Two => self.border_batch_launch::<BorderC2Batch>(params, extent, chunk),
                Channels::Three => self.border_batch_launch::<BorderC3Batch>(params, extent, chunk),
                Channels::Four => self.border_batch_launch::<BorderC4Batch>(params, extent, chunk),
            }?;
        }
        Ok(())
    }

    fn border_batch_launch<K: Kernel<Params = BorderBatch>>(
        &self,
        params: BorderBatch,
        extent: (u64, u64),
        chunk: Chunk,
    ) -> Result<()> {
        let cfg = self.batch_config::<K>(extent, (32, 8), chunk.count, 0)?;
        // SAFETY: both tables hold `count` entries pointing at packed images of CHANNELS
        // bytes per pixel (the kernel's, by the caller's match) inside the guarded
        // allocations, each output its source's size padded by `pad`.
        unsafe { self.launch::<K>(cfg, params) }
    }
}

impl Gpu {
    /// Blocking: `src` with `pad` pixels added on each side as `border` makes them.
    pub fn copy_make_border<P: Pixel>(&self, src: &ImageView<'_, P>, pad: Padding, border: Border) -> Result<Image<P>> {
        let (w, h) = output_size(src.width(), src.height(), pad)?;
        let s = self.blocking_stream();
        let d_src = s.upload(src)?;
        let mut dst = s.alloc_for_output::<P>(w, h)?;
        s.copy_make_border(&d_src, &mut dst, pad, border)?;
        s.download(&dst)
    }

    /// Blocking: every image padded as `border` makes it, one launch for all.
    pub fn copy_make_border_batch<P: Pixel>(
        &self,
        images: &[ImageView<'_, P>],
        pad: Padding,
        border: Border,
    ) -> Result<Vec<Image<P>>> {
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let sizes = src.sizes().into_iter().map(|(w, h)| output_size(w, h, pad)).collect::<Result<Vec<_>>>()?;
        let mut dst = s.alloc_batch_for_output::<P>(&sizes)?;
        s.copy_make_border_batch(&src, &mut dst, pad, border)?;
        s.download_batch(&dst)
    }
}
