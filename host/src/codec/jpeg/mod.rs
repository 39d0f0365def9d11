//! JPEG on the GPU through NVIDIA's nvJPEG, loaded at run time as cudarc loads the driver:
//! building needs no CUDA files, and a machine without the library gets
//! [`Error::NoNvjpeg`] (the file paths then decode on the CPU).
//!
//! The library is looked for in this order: the file `CUIMG_NVJPEG` names; the system's
//! search path (`LD_LIBRARY_PATH`, the linker cache); `$CUDA_HOME/lib64` and
//! `/usr/local/cuda/lib64`; the `nvidia-nvjpeg` wheel's `lib` folder in the Python
//! installations found. The bindings are the few functions used here, each call with its
//! `// SAFETY:` line. `CUIMG_NO_NVJPEG=1` leaves it unloaded, as if missing (JPEG then goes
//! through the CPU: for comparisons, and for the sanitizer runs that cannot see what the
//! hardware decoder writes).

mod batch;
mod encode;
pub(crate) mod header;
mod result;
mod sm;
mod sys;

use std::ffi::{c_int, c_uchar, c_uint};
use std::sync::{Arc, Mutex, RwLock};

use crate::error::{Error, Result};
use crate::pixel::{Gray8, Rgb8};
use crate::runtime::{DeviceImage, Gpu, Stream, TrackedHost};

pub use header::{JpegFile, JpegHeader, is_complete};
pub use sys::load;
use sys::*;

/// Images from this size on decode their Huffman data on the GPU in a codec without the
/// hardware decoder; smaller ones on the CPU, where it is quicker than a launch (the
/// threshold DALI uses for the same choice).
const GPU_HUFFMAN_PIXELS: u64 = 1 << 20;

/// nvJPEG's hardware decoder hung the process on the H100 (CUDA 13, driver 580.159.04): in
/// one hang two threads were in `nvjpegJpegStateCreate` (one in `cuMemFree`, waiting on a
/// lock in the driver) and two in `nvjpegDecodeBatched` (`cuMemcpyAsync`, one spinning);
/// no lock of cuimg's was held. The cause found later is the pageable copy (see
/// [`Batched::staging`]); never making a state while another thread is inside a decode call
/// stays as a guard: every decode holds this shared, and making or destroying a decoder state
/// holds it exclusively (states are made when first used, so that happens mid-run). Order: a
/// codec's own state lock first, then this one.
static STATES: RwLock<()> = RwLock::new(());

/// One hardware decoder call at a time per GPU: the first hang had two calls at once (the
/// second had this lock; the pinned copies fixed it), and taking turns costs nothing: two
/// threads at batches of 32 gave 533 to 541 images/s of 12 megapixels without it and 535 to
/// 543 with it (docs/BENCHMARKS.md), as one thread prepares its batch while the other decodes.
fn hardware_lock(gpu: &Gpu) -> std::sync::MutexGuard<'static, ()> {
    static ENGINES: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];
    ENGINES[gpu.inner.ctx.ordinal() % 64].lock().unwrap_or_else(|e| e.into_inner())
}

fn states_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    STATES.read().unwrap_or_else(|e| e.into_inner())
}

fn states_exclusive() -> std::sync::RwLockWriteGuard<'static, ()> {
    STATES.write().unwrap_or_else(|e| e.into_inner())
}

/// The pixel formats nvJPEG decodes into and encodes from: [`Rgb8`], and [`Gray8`] (a
/// file's luma plane). Sealed.
pub trait JpegPixel: sealed::Output {}

impl JpegPixel for Rgb8 {}
impl JpegPixel for Gray8 {}

pub(crate) mod sealed {
    use super::*;

    /// How nvJPEG writes a decoded image of this pixel type (one interleaved plane of
    /// `CHANNELS` bytes a pixel).
    pub trait Output: crate::Pixel {
        const FORMAT: c_int;
        /// Whether nvJPEG's output in `FORMAT` is this file's image.
        fn decodes_directly(header: &JpegHeader) -> bool;
        /// The image from the file decoded to RGB, for the files where it is not.
        fn from_rgb(stream: &Stream, rgb: DeviceImage<Rgb8>) -> Result<DeviceImage<Self>>;
        /// Whether it is gray: encoded as one component, decoded as the luma plane.
        const GRAY: bool;
    }
}
use sealed::Output;

impl Output for Rgb8 {
    const FORMAT: c_int = OUTPUT_RGBI;
    const GRAY: bool = false;
    fn decodes_directly(_: &JpegHeader) -> bool {
        true
    }
    fn from_rgb(_: &Stream, rgb: DeviceImage<Rgb8>) -> Result<DeviceImage<Rgb8>> {
        Ok(rgb)
    }
}

impl Output for Gray8 {
    const FORMAT: c_int = OUTPUT_Y;
    const GRAY: bool = true;
    fn decodes_directly(header: &JpegHeader) -> bool {
        header.luma_first
    }
    fn from_rgb(stream: &Stream, rgb: DeviceImage<Rgb8>) -> Result<DeviceImage<Gray8>> {
        let mut gray = stream.alloc(rgb.width(), rgb.height())?;
        stream.grayscale(&rgb, &mut gray, crate::GrayWeights::Bt601)?;
        Ok(gray)
    }
}

use sm::SmDecoder;

/// The error of a file with no end-of-image marker (cut short), on every decode path.
fn truncated() -> Error {
    Error::Nvjpeg { what: "truncated JPEG (no end-of-image marker)".into(), status: 3 }
}

/// A file's one parse, or the error every GPU decode gives for it: cut short, or a header
/// that does not parse.
fn parse(bytes: &[u8]) -> Result<JpegFile<'_>> {
    JpegFile::parse(bytes).map_err(|why| match is_complete(bytes) {
        true => Error::Nvjpeg { what: format!("reading the header ({why})"), status: 0 },
        false => truncated(),
    })
}

/// A decoded JPEG: color, or gray for a one-component file.
#[derive(Debug)]
pub enum DecodedJpeg {
    Rgb(DeviceImage<Rgb8>),
    Gray(DeviceImage<Gray8>),
}

/// nvJPEG for one GPU: decode JPEG bytes into device images, encode device images to JPEG.
/// Decoded pixels come as stored: a file's EXIF orientation is not applied (the CPU
/// decoders of `cuimg::io` apply it; `io::jpeg_orientation` tells which files need it).
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
/// let jpeg = match cuimg::jpeg::Jpeg::new(&gpu) {
///     Ok(j) => j,
///     Err(cuimg::Error::NoNvjpeg(why)) => { println!("no nvJPEG: {why}"); return Ok(()) }
///     Err(e) => return Err(e),
/// };
/// let img = cuimg::Image::<cuimg::Rgb8>::filled(64, 48, 120);
/// let stream = gpu.stream()?;
/// let bytes = jpeg.encode(&stream, &stream.upload(&img.view())?, 90)?;
/// let back = jpeg.decode_as::<cuimg::Rgb8>(&stream, &bytes)?;
/// assert_eq!(back.dimensions(), (64, 48));
/// # Ok(()) }
/// ```
pub struct Jpeg {
    lib: &'static Lib,
    /// `owner`'s handle, shared by the codecs [`Jpeg::another`] makes.
    handle: Handle,
    owner: Arc<HandleOwner>,
    hardware: bool,
    /// The state of single-file decodes (`nvjpegDecode`): null until the first one.
    decoder: Mutex<State>,
    /// The hardware decoder's batched state (null in a codec without it) and its input.
    batched: Mutex<Batched>,
    sm: Mutex<Option<SmDecoder>>,
    encoder: Mutex<Option<(State, State)>>,
    /// What a file may claim: checked from its header before nvJPEG sees it.
    limits: Mutex<crate::Limits>,
}

/// A hardware codec's batched decoder state, and the page-locked buffer its files are
/// copied into before each call.
struct Batched {
    /// Made at the first batch: the first hardware state of a process took 0.34 s on the
    /// H100 (the library handle 0.27 s), and the codecs beside it need only the handle.
    state: State,
    /// Why making it failed: the codec then decodes one file at a time.
    unavailable: Option<String>,
    /// nvJPEG copies each file to the device itself; from ordinary (pageable) memory the
    /// driver stages that copy, spinning inside `cuMemcpyAsync` until its staging buffer
    /// drains: the call seen spinning in both hangs of docs/BENCHMARKS.md, while other
    /// threads waited on the driver's locks. From page-locked memory it is a plain DMA.
    staging: Option<TrackedHost>,
    /// The batch size and image size the state's device memory was last sized for
    /// (`nvjpegDecodeBatchedPreAllocate`). Without it the first batch grew each image's
    /// buffers while decoding, and every `cuMemFree` waited for the engines: that batch took
    /// 0.4 s instead of 0.06 (the CUPTI timeline in docs/BENCHMARKS.md).
    sized_for: (usize, u32, u32),
}

/// An nvJPEG library handle, destroyed when the last codec using it is dropped (after each
/// has destroyed its own states).
struct HandleOwner {
    lib: &'static Lib,
    handle: Handle,
    gpu: Gpu,
}

// SAFETY: nvJPEG's handle may be used from any thread (nvJPEG's documentation: only states
// need one thread at a time).
unsafe impl Send for HandleOwner {}
// SAFETY: as above.
unsafe impl Sync for HandleOwner {}

impl Drop for HandleOwner {
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        // SAFETY: the handle was made once by `Jpeg::with_hardware`; every codec that used it
        // is gone (they held this owner), with its states.
        let _ = unsafe { result::destroy(self.handle) };
    }
}

// SAFETY: the handle is thread-safe per nvJPEG's documentation; every state is behind a
// mutex, so one thread at a time uses it.
unsafe impl Send for Jpeg {}
// SAFETY: as above.
unsafe impl Sync for Jpeg {}

impl std::fmt::Debug for Jpeg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Jpeg({}, hardware decoder: {})", self.lib.path.display(), self.hardware)
    }
}

impl Jpeg {
    /// nvJPEG on `gpu`: the hardware decoder's backend where the GPU has one (A100, H100),
    /// the default (GPU/hybrid) backend elsewhere. Makes the library handle only (0.27 s for
    /// the first of a process on the H100); the decoder states follow when first used
    /// ([`Jpeg::prepare_hardware_decoder`] makes the hardware decoder's ahead).
    pub fn new(gpu: &Gpu) -> Result<Arc<Jpeg>> {
        Jpeg::with_hardware(gpu, true)
    }

    /// nvJPEG on `gpu` without the hardware decoder, even where there is one: images of a
    /// megapixel or more decode on the SMs (Huffman decoding included, through nvJPEG's
    /// decoupled GPU decoder), smaller ones with the CPU's help. A second decoder beside
    /// the hardware one, for when that one is saturated.
    pub fn without_hardware(gpu: &Gpu) -> Result<Arc<Jpeg>> {
        Jpeg::with_hardware(gpu, false)
    }

    fn with_hardware(gpu: &Gpu, want_hardware: bool) -> Result<Arc<Jpeg>> {
        let lib = library()?;
        gpu.bind()?;
        // NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE, for diagnosis only (docs/BENCHMARKS.md): the
        // hardware decoder without its pipelining across calls.
        let flags = c_uint::from(std::env::var_os("CUIMG_NVJPEG_NO_PIPELINE").is_some());
        let hardware_handle = want_hardware.then(|| result::create(BACKEND_HARDWARE, flags).ok()).flatten();
        let hardware = hardware_handle.is_some();
        let handle = match hardware_handle {
            Some(h) => h,
            None => result::create(BACKEND_DEFAULT, 0)?,
        };
        Jpeg::on(Arc::new(HandleOwner { lib, handle, gpu: gpu.clone() }), hardware)
    }

    /// A codec with its own states on `owner`'s handle. Every state is made when first used
    /// (by then others may be decoding:
    /// making them holds [`STATES`] exclusively). Lazy, because a state of the default backend
    /// took tens of milliseconds to make, and the tool's encoders and decoders on the SMs,
    /// ten codecs, each made one they never used before the first file was read.
    fn on(owner: Arc<HandleOwner>, hardware: bool) -> Result<Arc<Jpeg>> {
        let lib = owner.lib;
        Ok(Arc::new(Jpeg {
            lib,
            handle: owner.handle,
            owner,
            hardware,
            decoder: Mutex::new(std::ptr::null_mut()),
            batched: Mutex::new(Batched {
                state: std::ptr::null_mut(),
                unavailable: None,
                staging: None,
                sized_for: (1, 1, 1),
            }),
            sm: Mutex::new(None),
            encoder: Mutex::new(None),
            limits: Mutex::new(crate::Limits::default()),
        }))
    }

    /// The hardware decoder's engines and cores per engine, where there is one: batches
    /// of a multiple of their product keep every core busy.
    pub fn hardware_decoder(&self) -> Option<(u32, u32)> {
        // SAFETY: the codec's handle, live while it is.
        let info = unsafe { result::hardware_decoder_info(self.handle) };
        info.ok().filter(|&(engines, _)| self.hardware && engines > 0)
    }

    /// Another codec like this one (same GPU and backend), for another thread: it shares
    /// this one's library handle, which is slow to make (tens of milliseconds and more),
    /// and has states of its own, so the two never wait for each other.
    pub fn another(&self) -> Result<Arc<Jpeg>> {
        self.inherit(Jpeg::on(self.owner.clone(), self.hardware))
    }

    /// A new codec of this one's with this one's limits.
    fn inherit(&self, codec: Result<Arc<Jpeg>>) -> Result<Arc<Jpeg>> {
        codec.inspect(|c| c.set_limits(self.limits()))
    }

    /// Sets what a file may claim before nvJPEG is called on it (the same checks as the CPU
    /// decoders of `cuimg::io`: the decoded size in the output's format, and the pixels per
    /// byte of coded data): a file over them is [`Error::Limit`]. Codecs made later by
    /// [`Jpeg::another`] take them over.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// # let Ok(jpeg) = cuimg::jpeg::Jpeg::new(&gpu) else { return Ok(()) };
    /// let bytes = cuimg::io::encode(&cuimg::io::sample_rgb(), cuimg::io::Format::Jpeg { quality: 90 })?;
    /// jpeg.set_limits(cuimg::Limits::default().with_max_image_bytes(1000));
    /// let stream = gpu.stream()?;
    /// assert!(matches!(jpeg.decode_as::<cuimg::Rgb8>(&stream, &bytes), Err(cuimg::Error::Limit { .. })));
    /// # Ok(()) }
    /// ```
    pub fn set_limits(&self, limits: crate::Limits) {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner()) = limits;
    }

    /// The limits files are checked against ([`Jpeg::set_limits`]).
    pub fn limits(&self) -> crate::Limits {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a JPEG is whole and within the limits, for an output of `bytes_per_pixel`.
    fn check(&self, file: &JpegFile, bytes_per_pixel: u32) -> Result<()> {
        if !file.header().complete {
            return Err(truncated());
        }
        let name = std::path::Path::new("<JPEG bytes>");
        let header = crate::limits::Header::from(file.header());
        self.limits().check(&header, file.bytes().len() as u64, bytes_per_pixel, name)
    }

    /// Another codec on this one's library handle that never uses the hardware decoder: it
    /// decodes one file at a time (images of a megapixel or more on the SMs, with nvJPEG's
    /// decoupled GPU decoder) and encodes. For threads beside a hardware decoder's, so that
    /// they need no handle of their own: making one took 64 to 273 ms on the H100, and nvJPEG
    /// makes one handle at a time.
    pub fn another_without_hardware(&self) -> Result<Arc<Jpeg>> {
        self.inherit(Jpeg::on(self.owner.clone(), false))
    }

    /// True when the hardware JPEG decoder's backend is in use.
    pub fn hardware(&self) -> bool {
        self.hardware
    }

    /// Width, height and components of a JPEG, as nvJPEG reads its header
    /// ([`JpegFile::parse`] reads the same without a codec).
    pub fn info(&self, bytes: &[u8]) -> Result<(u32, u32, u32)> {
        // SAFETY: the codec's handle, live while it is.
        let (n, _, w, h) = unsafe { result::image_info(self.handle, bytes) }?;
        Ok((w[0].max(0) as u32, h[0].max(0) as u32, n.max(0) as u32))
    }

    /// The size an output is allocated at: the parsed header's, which must be nvJPEG's own
    /// reading of it, as nvJPEG writes by its own (a file the two read differently is
    /// refused, not decoded past the end of its image).
    fn size(&self, file: &JpegFile) -> Result<(u32, u32)> {
        let (w, h, _) = self.info(file.bytes())?;
        match (w, h) == file.dimensions() {
            true => Ok((w, h)),
            false => Err(Error::Nvjpeg {
                what: format!("the frame header says {:?}, nvJPEG reads {w} x {h}", file.dimensions()),
                status: 0,
            }),
        }
    }

    /// Decodes a JPEG into a new device image: gray for one-component files, RGB else.
    pub fn decode(&self, stream: &Stream, bytes: &[u8]) -> Result<DecodedJpeg> {
        let file = parse(bytes)?;
        self.check(&file, 3)?;
        if file.header().components == 1 {
            let (w, h) = self.size(&file)?;
            let mut img = stream.alloc_for_output::<Gray8>(w, h)?;
            self.decode_into(stream, &file, &mut img)?;
            Ok(DecodedJpeg::Gray(img))
        } else {
            Ok(DecodedJpeg::Rgb(self.decode_whole(stream, &file)?))
        }
    }

    /// Decodes a JPEG into a new device image of `P`: RGB (gray files converted), or
    /// [`Gray8`]: a color file's luma (`Y`) plane, decoded without converting its color
    /// planes to RGB, as libjpeg's grayscale output and OpenCV's `imread(path,
    /// IMREAD_GRAYSCALE)` do: the encoder made that plane with the BT.601 weights
    /// [`Stream::grayscale`] uses, from the original pixels, so it differs from decoding to
    /// RGB and converting by rounding only (the bound is in `tests/tests/jpeg.rs`). CMYK
    /// files and files coded in RGB are decoded to RGB and converted.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// # let Ok(jpeg) = cuimg::jpeg::Jpeg::new(&gpu) else { return Ok(()) };
    /// use cuimg::{Gray8, Rgb8};
    /// let stream = gpu.stream()?;
    /// let photo = stream.upload(&cuimg::io::sample_rgb().view())?;
    /// let bytes = jpeg.encode(&stream, &photo, 90)?;
    /// let gray = jpeg.decode_as::<Gray8>(&stream, &bytes)?;
    /// let rgb = jpeg.decode_as::<Rgb8>(&stream, &bytes)?;
    /// assert_eq!(gray.dimensions(), rgb.dimensions());
    /// # Ok(()) }
    /// ```
    pub fn decode_as<P: JpegPixel>(&self, stream: &Stream, bytes: &[u8]) -> Result<DeviceImage<P>> {
        self.decode_file(stream, &parse(bytes)?)
    }

    /// [`Jpeg::decode_as`] of a file already parsed (its header read once, by the caller,
    /// for its own checks too: the orientation, the CPU path's).
    pub fn decode_file<P: JpegPixel>(&self, stream: &Stream, file: &JpegFile) -> Result<DeviceImage<P>> {
        self.check(file, P::CHANNELS as u32)?;
        self.decode_whole(stream, file)
    }

    /// Decodes a file already checked into a new image of `P`.
    fn decode_whole<P: Output>(&self, stream: &Stream, file: &JpegFile) -> Result<DeviceImage<P>> {
        if !P::decodes_directly(file.header()) {
            return P::from_rgb(stream, self.decode_whole::<Rgb8>(stream, file)?);
        }
        let (w, h) = self.size(file)?;
        let mut img = stream.alloc_for_output::<P>(w, h)?;
        let on_sms = file.header().baseline_color_or_gray() && u64::from(w) * u64::from(h) >= GPU_HUFFMAN_PIXELS;
        if !self.hardware && on_sms {
            self.decode_on_sms(stream, file, &mut img)?;
        } else {
            self.decode_into(stream, file, &mut img)?;
        }
        Ok(img)
    }

    fn decode_into<P: Output>(&self, stream: &Stream, file: &JpegFile, img: &mut DeviceImage<P>) -> Result<()> {
        let pitch = img.width() as usize * P::CHANNELS;
        let mut to = img.buf.write(&stream.raw)?;
        let mut out = NvImage::one_plane(to.ptr().addr() as *mut c_uchar, pitch);
        let mut state = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
        if state.is_null() {
            let _exclusive = states_exclusive();
            stream.raw.context().bind_to_thread()?;
            // SAFETY: the codec's handle; no decode runs meanwhile (`STATES` exclusively).
            *state = unsafe { result::jpeg_state_create(self.handle) }?;
        }
        let _shared = states_shared();
        let _engine = self.hardware.then(|| hardware_lock(&self.owner.gpu));
        stream.raw.context().bind_to_thread()?;
        // SAFETY: `out` is the device image of the file's size (`img` was allocated from the
        // header parsed from these bytes) under its write guard until the stream has written
        // it, on `stream`'s context, which is current; the state is ours, under its lock.
        unsafe { result::decode(self.handle, *state, file.bytes(), P::FORMAT, &mut out, stream.raw.cu_stream()) }
    }

    /// Decodes a whole baseline JPEG into `img` (its size) with the decoupled GPU decoder,
    /// and waits for it: the state, its pinned and device buffers and the parsed stream are
    /// reused by the next call, and `bytes` is only borrowed for this one.
    fn decode_on_sms<P: Output>(&self, stream: &Stream, file: &JpegFile, img: &mut DeviceImage<P>) -> Result<()> {
        let mut sm = self.sm.lock().unwrap_or_else(|e| e.into_inner());
        if sm.is_none() {
            stream.raw.context().bind_to_thread()?;
            *sm = Some(SmDecoder::new(self.handle)?);
        }
        let d = sm.as_ref().expect("made above");
        let pitch = img.width() as usize * P::CHANNELS;
        let mut to = img.buf.write(&stream.raw)?;
        let mut out = NvImage::one_plane(to.ptr().addr() as *mut c_uchar, pitch);
        let s = stream.raw.cu_stream();
        let _shared = states_shared();
        stream.raw.context().bind_to_thread()?;
        // SAFETY: the decoder's objects are ours under its lock and were made on this
        // handle; the file's bytes outlive every phase (the stream is synchronized before
        // return); `out` is the device image of the file's size under its write guard, on
        // `stream`'s context, which is current.
        unsafe {
            result::decode_params_set_output_format(d.params, P::FORMAT)?;
            result::jpeg_stream_parse(self.handle, file.bytes(), d.parsed)?;
            result::decode_jpeg_phases(self.handle, (d.decoder, d.state, d.params, d.parsed), &mut out, s)?;
        }
        drop(to);
        stream.synchronize()
    }
}

impl Drop for Jpeg {
    fn drop(&mut self) {
        let _ = self.owner.gpu.bind();
        let _exclusive = states_exclusive();
        if let Some(mut sm) = self.sm.get_mut().ok().and_then(|s| s.take()) {
            sm.destroy();
        }
        // SAFETY: the states were made by this codec, are destroyed once, and no call of this
        // codec is running (drop has it exclusively); the handle outlives them (`owner`).
        unsafe {
            if let Some((state, params)) = self.encoder.get_mut().ok().and_then(|e| e.take()) {
                let _ = result::encoder_params_destroy(params);
                let _ = result::encoder_state_destroy(state);
            }
            if let Ok(&mut Batched { state, .. }) = self.batched.get_mut()
                && !state.is_null()
            {
                let _ = result::jpeg_state_destroy(state);
            }
            if let Ok(&mut state) = self.decoder.get_mut()
                && !state.is_null()
            {
                let _ = result::jpeg_state_destroy(state);
            }
        }
    }
}
