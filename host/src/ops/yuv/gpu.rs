//! The YUV launches: one kernel per channel count each way, one thread per unit.

use cuimg_abi::yuv::{
    YuvDecode, YuvDecodeC1, YuvDecodeC3, YuvDecodeC4, YuvEncode, YuvEncodeC1, YuvEncodeC3, YuvEncodeC4,
};

use super::{DeviceYuvFrame, YuvFrame, YuvLayout, YuvPixel, YuvSpec};
use crate::error::Result;
use crate::image::{Image, ImageView, check_same_size};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, Gpu, Stream};

impl Stream {
    /// A new device frame of zeroed bytes (sides checked for the layout).
    pub fn alloc_yuv(&self, layout: YuvLayout, width: u32, height: u32) -> Result<DeviceYuvFrame> {
        let n = layout.frame_bytes(width, height)?;
        Ok(DeviceYuvFrame { buf: self.alloc_slice(n)?, width, height, layout })
    }

    /// Copies a frame to the device.
    pub fn upload_yuv(&self, frame: &YuvFrame) -> Result<DeviceYuvFrame> {
        Ok(DeviceYuvFrame {
            buf: self.upload_slice(&frame.bytes)?,
            width: frame.width,
            height: frame.height,
            layout: frame.layout,
        })
    }

    /// Copies a device frame back, waiting for the stream.
    pub fn download_yuv(&self, frame: &DeviceYuvFrame) -> Result<YuvFrame> {
        YuvFrame::from_bytes(frame.layout, frame.width, frame.height, self.download_slice(&frame.buf)?)
    }

    /// `src` decoded into `dst` (an image or region of its size).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{Bgr8, YuvFrame, YuvLayout, YuvSpec};
    /// let frame = YuvFrame::from_bytes(YuvLayout::Nv12, 4, 2, vec![128; 12])?;
    /// let s = gpu.stream()?;
    /// let d = s.upload_yuv(&frame)?;
    /// let mut out = s.alloc::<Bgr8>(4, 2)?;
    /// s.yuv_to_image(&d, YuvSpec::default(), &mut out)?;
    /// assert_eq!(s.download(&out)?, cuimg::cpu::yuv_to_image::<Bgr8>(&frame, YuvSpec::default())?);
    /// # Ok(()) }
    /// ```
    pub fn yuv_to_image<P: YuvPixel>(
        &self,
        src: &DeviceYuvFrame,
        spec: YuvSpec,
        dst: &mut impl AsDeviceViewMut<P>,
    ) -> Result<()> {
        let mut dst = dst.device_view_mut();
        check_same_size("the YUV destination", dst.dimensions(), (src.width, src.height))?;
        self.check_context("the YUV frame", src.buf.buf.context())?;
        self.check_context("the YUV destination", dst.img.buf.context())?;
        let l = dst.layout();
        let read = src.buf.buf.read(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let frame = src.frame(read.ptr().addr());
        let p = YuvDecode { frame, dst: d.addr(), pitch: l.pitch, bgr: u32::from(P::BGR), _pad: 0, coef: spec.decode() };
        let (uw, uh) = frame.units();
        // SAFETY: the frame is the guarded buffer of `frame.bytes()` bytes (its sides checked
        // even when it was made); the view is P's, the frame's size (checked), guarded;
        // the kernel's channel count is P's (the match).
        unsafe {
            match P::CHANNELS {
                1 => self.launch::<YuvDecodeC1>(self.planar::<YuvDecodeC1>(uw as u64, uh as u64, 0)?, p),
                3 => self.launch::<YuvDecodeC3>(self.planar::<YuvDecodeC3>(uw as u64, uh as u64, 0)?, p),
                _ => self.launch::<YuvDecodeC4>(self.planar::<YuvDecodeC4>(uw as u64, uh as u64, 0)?, p),
            }
        }
    }

    /// `src` (an image or region) encoded into `dst`, a frame of its size.
    pub fn image_to_yuv<P: YuvPixel>(
        &self,
        src: &impl AsDeviceView<P>,
        spec: YuvSpec,
        dst: &mut DeviceYuvFrame,
    ) -> Result<()> {
        let src = src.device_view();
        check_same_size("the YUV frame", (dst.width, dst.height), src.dimensions())?;
        self.check_context("the image source", src.img.buf.context())?;
        self.check_context("the YUV frame", dst.buf.buf.context())?;
        let l = src.layout();
        let (s, _read) = src.ptr(&self.raw)?;
        let layout = dst.layout;
        let mut write = dst.buf.buf.write(&self.raw)?;
        let frame = layout.frame(l.width, l.height, write.ptr().addr());
        let p = YuvEncode {
            frame,
            src: s.addr(),
            pitch: l.pitch,
            bgr: u32::from(P::BGR),
            _pad: 0,
            coef: spec.encode(layout),
        };
        let (uw, uh) = frame.units();
        // SAFETY: as `yuv_to_image`, the view read and the frame written.
        unsafe {
            match P::CHANNELS {
                1 => self.launch::<YuvEncodeC1>(self.planar::<YuvEncodeC1>(uw as u64, uh as u64, 0)?, p),
                3 => self.launch::<YuvEncodeC3>(self.planar::<YuvEncodeC3>(uw as u64, uh as u64, 0)?, p),
                _ => self.launch::<YuvEncodeC4>(self.planar::<YuvEncodeC4>(uw as u64, uh as u64, 0)?, p),
            }
        }
    }
}

impl Gpu {
    /// Blocking: `frame` as an image of `P`.
    pub fn yuv_to_image<P: YuvPixel>(&self, frame: &YuvFrame, spec: YuvSpec) -> Result<Image<P>> {
        let s = self.blocking_stream();
        let d = s.upload_yuv(frame)?;
        let mut out = s.alloc_for_output::<P>(frame.width, frame.height)?;
        s.yuv_to_image(&d, spec, &mut out)?;
        s.download(&out)
    }

    /// Blocking: `src` as a frame of `layout`.
    pub fn image_to_yuv<P: YuvPixel>(&self, src: &ImageView<'_, P>, layout: YuvLayout, spec: YuvSpec) -> Result<YuvFrame> {
        let n = layout.frame_bytes(src.width(), src.height())?;
        let s = self.blocking_stream();
        let d = s.upload(src)?;
        let mut frame = DeviceYuvFrame {
            buf: s.alloc_slice_for_output(n)?,
            width: src.width(),
            height: src.height(),
            layout,
        };
        s.image_to_yuv(&d, spec, &mut frame)?;
        s.download_yuv(&frame)
    }
}
