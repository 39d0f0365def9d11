//! Many JPEGs in one call: the hardware decoder's batches, and the checks before them.

use std::ffi::{c_int, c_uchar};

use super::markers::{baseline_color_or_gray, is_complete};
use super::sys::*;
use super::{Batched, Jpeg, JpegPixel, hardware_lock, states_exclusive, states_shared, truncated};
use crate::error::{Error, Result};
use crate::runtime::TrackedHost;
use crate::runtime::{DeviceImage, Stream};

impl Jpeg {
    /// Makes the hardware decoder's batched state now instead of at the first batch: the
    /// first of a process took 0.34 s on the H100, and while a state is made no other codec
    /// of the process decodes (see `STATES`), so call this before other threads decode. Does
    /// nothing on a codec without the hardware decoder, or once the state is made; if it
    /// cannot be made, says why (then batches decode one file at a time).
    pub fn prepare_hardware_decoder(&self) -> Result<()> {
        if !self.hardware {
            return Ok(());
        }
        let mut batched = self.batched.lock().unwrap_or_else(|e| e.into_inner());
        if batched.state.is_null() && batched.unavailable.is_none() {
            let _exclusive = states_exclusive();
            let mut state: State = std::ptr::null_mut();
            self.owner.gpu.bind()?;
            // SAFETY: a valid handle and out-pointer; then the state just made, with a size
            // hint of one 1x1 image: what NVIDIA's decoders do so that the hardware decoder
            // draws on a memory pool (they measured over 20% faster).
            let made = unsafe {
                check("nvjpegJpegStateCreate", (self.lib.nvjpegJpegStateCreate)(self.handle, &mut state)).and_then(
                    |()| {
                        check(
                            "nvjpegDecodeBatchedPreAllocate",
                            (self.lib.nvjpegDecodeBatchedPreAllocate)(
                                self.handle,
                                state,
                                1,
                                1,
                                1,
                                CSS_444,
                                OUTPUT_RGBI,
                            ),
                        )
                    },
                )
            };
            match made {
                Ok(()) => batched.state = state,
                Err(e) => {
                    if !state.is_null() {
                        // SAFETY: the state made above, used by nothing.
                        unsafe { (self.lib.nvjpegJpegStateDestroy)(state) };
                    }
                    batched.unavailable = Some(e.to_string());
                }
            }
        }
        match &batched.unavailable {
            Some(why) => Err(Error::NoNvjpeg(format!("no hardware decoder state: {why}"))),
            None => Ok(()),
        }
    }

    /// Decodes many JPEGs into device images of `P` in one call (the hardware decoder takes
    /// them together; a codec without it decodes them one by one), each as
    /// [`Jpeg::decode_as`] makes it. Each image's own failure is its own `Err`; files that
    /// are not whole JPEGs are refused before the call.
    pub fn decode_batch<P: JpegPixel>(&self, stream: &Stream, files: &[&[u8]]) -> Result<Vec<Result<DeviceImage<P>>>> {
        use rayon::prelude::*;
        if !self.hardware || self.prepare_hardware_decoder().is_err() {
            return Ok(files.iter().map(|bytes| self.decode_checked(stream, bytes)).collect());
        }
        // Each file's checks on all cores: the truncation check reads all of it (megabytes of
        // a photo), and on the decoder's thread it kept the engines waiting.
        let sizes: Vec<Result<Option<(u32, u32)>>> = files
            .par_iter()
            .map(|bytes| {
                if !is_complete(bytes) {
                    Err(truncated())
                } else if let Err(e) = self.within_limits(bytes, P::CHANNELS as u32) {
                    Err(e)
                } else if baseline_color_or_gray(bytes) && P::decodes_directly(bytes) {
                    self.info(bytes).map(|(w, h, _)| Some((w, h)))
                } else {
                    Ok(None)
                }
            })
            .collect();
        let mut results: Vec<Result<DeviceImage<P>>> = Vec::with_capacity(files.len());
        let mut good = Vec::new();
        for (i, (bytes, size)) in files.iter().zip(sizes).enumerate() {
            let r = match size {
                Err(e) => Err(e),
                // The batch's output, written by the call below.
                Ok(Some((w, h))) => {
                    let r = stream.alloc_for_output::<P>(w, h);
                    if r.is_ok() {
                        good.push(i);
                    }
                    r
                }
                // Progressive, CMYK and other uncommon files go one at a time: the batched
                // call of nvJPEG's default backend crashed the process on them (seen on an
                // H100 with CUDA 13.0), and the hardware decoder takes baseline files only.
                Ok(None) => self.decode_whole(stream, bytes),
            };
            results.push(r);
        }
        if good.is_empty() {
            return Ok(results);
        }
        let (most_w, most_h) = good
            .iter()
            .map(|&i| results[i].as_ref().map_or((0, 0), |img| img.dimensions()))
            .fold((0, 0), |(w, h), (iw, ih)| (w.max(iw), h.max(ih)));
        let mut guards = Vec::with_capacity(good.len());
        let mut outs = Vec::with_capacity(good.len());
        // In `good`'s order (ascending): the batch's outputs pair with its files.
        for (_, r) in results.iter_mut().enumerate().filter(|(i, _)| good.binary_search(i).is_ok()) {
            let img = r.as_mut().expect("good files have their image");
            let pitch = img.width() as usize * P::CHANNELS;
            let mut guard = img.buf.write(&stream.raw)?;
            let ptr = guard.ptr().addr() as *mut c_uchar;
            guards.push(guard);
            outs.push(NvImage::one_plane(ptr, pitch));
        }
        let lengths: Vec<usize> = good.iter().map(|&i| files[i].len()).collect();
        let mut batched = self.batched.lock().unwrap_or_else(|e| e.into_inner());
        let total: usize = lengths.iter().sum();
        if batched.staging.as_ref().is_none_or(|s| s.len() < total) {
            batched.staging = None; // waits for the copies still reading the old one
            let ctx = stream.raw.context();
            // SAFETY: page-locked memory, written by the host below before any copy reads it.
            let pinned = unsafe { ctx.alloc_pinned_with_flags::<u8>(total.next_power_of_two(), 0) }?;
            batched.staging = Some(TrackedHost::new(pinned));
        }
        let Batched { state, staging, sized_for, .. } = &mut *batched;
        let staging = staging.as_mut().expect("made above");
        let host = staging.host_bytes_mut()?; // waits for the last batch's copies from it
        // The files side by side in the page-locked buffer, copied on all cores (105 MB a
        // batch of 35 photos).
        let mut offsets = Vec::with_capacity(good.len());
        let mut copies = Vec::with_capacity(good.len());
        let (mut rest, mut at) = (&mut host[..total], 0);
        for &i in &good {
            let (to, after) = rest.split_at_mut(files[i].len());
            copies.push((to, files[i]));
            offsets.push(at);
            (rest, at) = (after, at + files[i].len());
        }
        copies.into_par_iter().for_each(|(to, from)| to.copy_from_slice(from));
        let input = staging.read(&stream.raw)?;
        let base = input.bytes()?.as_ptr();
        // SAFETY: each offset plus its length lies within the `total` bytes written above.
        let data: Vec<*const c_uchar> = offsets.iter().map(|&o| unsafe { base.add(o) }).collect();
        let shared = states_shared();
        let engine = hardware_lock(&self.owner.gpu);
        stream.raw.context().bind_to_thread()?;
        let wanted = (sized_for.0.max(good.len()), sized_for.1.max(most_w), sized_for.2.max(most_h));
        if wanted != *sized_for {
            // A hint: if it fails (no memory for it), the decode sizes its buffers itself.
            // 4:4:4, the largest sampling, so that files of any sampling reuse the buffers.
            // SAFETY: the codec's batched state, ours under its lock; it replaces buffers as
            // the decode call itself does when an image outgrows them; plain integers else.
            let hinted = unsafe {
                (self.lib.nvjpegDecodeBatchedPreAllocate)(
                    self.handle,
                    *state,
                    wanted.0 as c_int,
                    wanted.1 as c_int,
                    wanted.2 as c_int,
                    CSS_444,
                    P::FORMAT,
                )
            };
            if hinted == SUCCESS {
                *sized_for = wanted;
            }
        }
        // SAFETY: the codec's batched state (made with it, ours under its lock) sized for
        // this batch, as NVIDIA's own decoders do before every batch; then `data` and
        // `lengths` describe `good.len()` byte ranges of the page-locked buffer, which the
        // read guard `input` keeps from the host until the stream has copied them; `outs`
        // holds as many device images under their write guards, on `stream`'s context.
        let status = unsafe {
            match (self.lib.nvjpegDecodeBatchedInitialize)(self.handle, *state, good.len() as c_int, 1, P::FORMAT) {
                SUCCESS => (self.lib.nvjpegDecodeBatched)(
                    self.handle,
                    *state,
                    data.as_ptr(),
                    lengths.as_ptr(),
                    outs.as_mut_ptr(),
                    stream.raw.cu_stream(),
                ),
                failed => failed,
            }
        };
        drop(engine);
        drop(shared);
        drop(input);
        drop(guards);
        if status != SUCCESS {
            // The batch failed as a whole (one bad file fails it): decode one by one instead,
            // so each file gets its own result.
            drop(batched);
            return Ok(files
                .iter()
                .zip(results)
                .map(|(bytes, r)| r.and_then(|_| self.decode_whole(stream, bytes)))
                .collect());
        }
        Ok(results)
    }
}
