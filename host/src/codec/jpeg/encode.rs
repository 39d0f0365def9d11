//! Device images to JPEG bytes with nvJPEG's encoder.

use std::ffi::{c_int, c_uchar};

use super::result;
use super::sys::*;
use super::{Jpeg, JpegPixel};
use crate::error::Result;
use crate::image::check_same_size;
use crate::runtime::{DeviceImage, Stream};

impl Jpeg {
    /// The encoder's state and parameters, made when first used.
    fn encoder(&self, stream: &Stream) -> Result<std::sync::MutexGuard<'_, Option<(State, State)>>> {
        let mut enc = self.encoder.lock().unwrap_or_else(|e| e.into_inner());
        if enc.is_none() {
            stream.raw.context().bind_to_thread()?;
            // SAFETY: the codec's handle, live while it is; `stream` is of its GPU's context,
            // current on this thread.
            *enc = Some(unsafe { result::encoder_create(self.handle, stream.raw.cu_stream()) }?);
        }
        Ok(enc)
    }

    /// Encodes a device image to JPEG bytes at `quality` (1 to 100): RGB as 4:2:0, gray as
    /// one component; waits for the stream.
    pub fn encode<P: JpegPixel>(&self, stream: &Stream, img: &DeviceImage<P>, quality: u8) -> Result<Vec<u8>> {
        self.encode_raw(
            stream,
            img.buf.read(&stream.raw)?.ptr().addr(),
            img.width() as usize * P::CHANNELS,
            img.dimensions(),
            quality,
            P::GRAY,
        )
    }

    fn encode_raw(
        &self,
        stream: &Stream,
        src: u64,
        pitch: usize,
        (w, h): (u32, u32),
        quality: u8,
        gray: bool,
    ) -> Result<Vec<u8>> {
        check_same_size("JPEG size (at most 65535 x 65535)", (w.min(65535), h.min(65535)), (w, h))?;
        let enc = self.encoder(stream)?;
        let objects = enc.expect("made by encoder()");
        let s = stream.raw.cu_stream();
        let image = NvImage::one_plane(src as *mut c_uchar, pitch);
        stream.raw.context().bind_to_thread()?;
        let (css, format) = if gray { (CSS_GRAY, CSS_GRAY) } else { (CSS_420, INPUT_RGBI) };
        // SAFETY: the encoder state and params are ours under the lock; `image` points at the
        // device image (`pitch * h` bytes, read under the caller's guard) on `stream`'s
        // context, which is current (NVIDIA's samples ask for the length, then synchronize).
        let len = unsafe {
            result::encoder_params_set(objects.1, quality.clamp(1, 100) as c_int, css, s)?;
            result::encode(self.handle, objects, &image, gray, format, (w as c_int, h as c_int), s)?;
            let len = result::encoded_length(self.handle, objects.0, s)?;
            stream.synchronize()?;
            len
        };
        // Into the stream's page-locked staging buffer: from ordinary memory the driver
        // stages a copy from the device itself and holds its lock meanwhile, and every other
        // thread's CUDA calls waited on it (docs/BENCHMARKS.md, the CUPTI timeline).
        let mut staging = stream.staging(len)?;
        let len = {
            let mut to = staging.write(&stream.raw)?;
            let to = &mut to.bytes()?[..len];
            // SAFETY: `to` is page-locked memory (the staging buffer grows to what is asked),
            // written by a copy on `s` under the write guard; the host reads it only through
            // `host_bytes`, which waits for that copy.
            unsafe { result::retrieve_bitstream(self.handle, objects.0, to, s) }?
        };
        Ok(staging.host_bytes()?[..len].to_vec())
    }
}
