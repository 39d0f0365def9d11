//! Many JPEGs in one call: the hardware decoder's batches, and the checks before them.

use std::ffi::{c_int, c_uchar};

use super::sys::*;
use super::{Batched, Jpeg, JpegFile, JpegPixel, hardware_lock, parse, result, states_exclusive, states_shared};
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
            self.owner.gpu.bind()?;
            // SAFETY: the codec's handle, and no decode runs meanwhile (`STATES` exclusively).
            let made = unsafe { result::jpeg_state_create(self.handle) }.and_then(|state| {
                // SAFETY: the state just made, used by nothing else, with a size hint of one
                // 1x1 image: what NVIDIA's decoders do so that the hardware decoder draws on a
                // memory pool (they measured over 20% faster).
                let hinted =
                    unsafe { result::decode_batched_pre_allocate(self.handle, state, 1, 1, 1, CSS_444, OUTPUT_RGBI) };
                hinted.map(|()| state).inspect_err(|_| {
                    // SAFETY: the state made above, used by nothing.
                    let _ = unsafe { result::jpeg_state_destroy(state) };
                })
            });
            match made {
                Ok(state) => batched.state = state,
                Err(e) => batched.unavailable = Some(e.to_string()),
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
        // Each file's one parse on all cores: the truncation check reads all of it
        // (megabytes of a photo), and on the decoder's thread it kept the engines waiting.
        let parsed: Vec<Result<JpegFile>> = files.par_iter().map(|bytes| parse(bytes)).collect();
        let good: Vec<JpegFile> = parsed.iter().filter_map(|f| f.as_ref().ok().copied()).collect();
        let mut decoded = self.decode_files(stream, &good)?.into_iter();
        Ok(parsed.into_iter().map(|f| f.and_then(|_| decoded.next().expect("one result a file"))).collect())
    }

    /// [`Jpeg::decode_batch`] of files already parsed.
    pub fn decode_files<P: JpegPixel>(
        &self,
        stream: &Stream,
        files: &[JpegFile],
    ) -> Result<Vec<Result<DeviceImage<P>>>> {
        use rayon::prelude::*;
        if !self.hardware || self.prepare_hardware_decoder().is_err() {
            return Ok(files.iter().map(|file| self.decode_file(stream, file)).collect());
        }
        let sizes: Vec<Result<Option<(u32, u32)>>> = files
            .par_iter()
            .map(|file| {
                self.check(file, P::CHANNELS as u32)?;
                match file.header().baseline_color_or_gray() && P::decodes_directly(file.header()) {
                    true => self.size(file).map(Some),
                    false => Ok(None),
                }
            })
            .collect();
        let mut results: Vec<Result<DeviceImage<P>>> = Vec::with_capacity(files.len());
        let mut good = Vec::new();
        for (i, (file, size)) in files.iter().zip(sizes).enumerate() {
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
                Ok(None) => self.decode_whole(stream, file),
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
        let bytes = |i: usize| files[i].bytes();
        let total: usize = good.iter().map(|&i| bytes(i).len()).sum();
        let mut batched = self.batched.lock().unwrap_or_else(|e| e.into_inner());
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
        let mut ranges = Vec::with_capacity(good.len());
        let mut copies = Vec::with_capacity(good.len());
        let (mut rest, mut at) = (&mut host[..total], 0);
        for &i in &good {
            let (to, after) = rest.split_at_mut(bytes(i).len());
            copies.push((to, bytes(i)));
            ranges.push(at..at + bytes(i).len());
            (rest, at) = (after, at + bytes(i).len());
        }
        copies.into_par_iter().for_each(|(to, from)| to.copy_from_slice(from));
        let input = staging.read(&stream.raw)?;
        let staged = input.bytes()?;
        let data: Vec<&[u8]> = ranges.into_iter().map(|r| &staged[r]).collect();
        let shared = states_shared();
        let engine = hardware_lock(&self.owner.gpu);
        stream.raw.context().bind_to_thread()?;
        let wanted = (sized_for.0.max(good.len()), sized_for.1.max(most_w), sized_for.2.max(most_h));
        if wanted != *sized_for {
            // A hint: if it fails (no memory for it), the decode sizes its buffers itself.
            // 4:4:4, the largest sampling, so that files of any sampling reuse the buffers.
            let (n, w, h) = (wanted.0 as c_int, wanted.1 as c_int, wanted.2 as c_int);
            // SAFETY: the codec's batched state, ours under its lock; it replaces buffers as
            // the decode call itself does when an image outgrows them; plain integers else.
            let hinted =
                unsafe { result::decode_batched_pre_allocate(self.handle, *state, n, w, h, CSS_444, P::FORMAT) };
            if hinted.is_ok() {
                *sized_for = wanted;
            }
        }
        // SAFETY: the codec's batched state (made with it, ours under its lock) sized for
        // this batch, as NVIDIA's own decoders do before every batch; `data` are `good.len()`
        // byte ranges of the page-locked buffer, which the read guard `input` keeps from the
        // host until the stream has copied them; `outs` holds as many device images of their
        // files' sizes (nvJPEG's own reading) under their write guards, on `stream`'s context.
        let status =
            unsafe { result::decode_batched(self.handle, *state, &data, &mut outs, P::FORMAT, stream.raw.cu_stream()) };
        drop(engine);
        drop(shared);
        drop(data);
        drop(input);
        drop(guards);
        if status.is_err() {
            // The batch failed as a whole (one bad file fails it): decode one by one instead,
            // so each file gets its own result.
            drop(batched);
            return Ok(files
                .iter()
                .zip(results)
                .map(|(file, r)| r.and_then(|_| self.decode_whole(stream, file)))
                .collect());
        }
        Ok(results)
    }
}
