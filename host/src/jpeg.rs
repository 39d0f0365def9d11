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

use std::ffi::{c_int, c_uchar, c_uint, c_void};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::error::{Error, Result};
use crate::image::check_same_size;
use crate::pixel::{Gray8, Rgb8};
use crate::runtime::{DeviceImage, Gpu, Stream, TrackedHost};

type Handle = *mut c_void;
/// Any other of nvJPEG's opaque objects: states, decoders, buffers, parameters, streams.
type State = *mut c_void;
type Status = c_int;
type CuStream = cudarc::driver::sys::CUstream;

/// `nvjpegImage_t`: up to four planes and their pitches.
#[repr(C)]
struct NvImage {
    channel: [*mut c_uchar; 4],
    pitch: [usize; 4],
}

impl NvImage {
    /// One interleaved (or gray) plane at `ptr`, `pitch` bytes a row.
    fn one_plane(ptr: *mut c_uchar, pitch: usize) -> NvImage {
        let null = std::ptr::null_mut();
        NvImage { channel: [ptr, null, null, null], pitch: [pitch, 0, 0, 0] }
    }
}

const SUCCESS: Status = 0;
const OUTPUT_Y: c_int = 2;
const OUTPUT_RGBI: c_int = 5;
const INPUT_RGBI: c_int = 5;
const CSS_444: c_int = 0;
const CSS_420: c_int = 2;
const CSS_GRAY: c_int = 6;
const BACKEND_DEFAULT: c_int = 0;
const BACKEND_GPU_HYBRID: c_int = 2;
const BACKEND_HARDWARE: c_int = 3;
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

macro_rules! functions {
    ($($name:ident: fn($($arg:ty),*);)*) => {
        /// The loaded library and the functions cuimg calls.
        #[allow(non_snake_case)]
        struct Lib {
            $($name: unsafe extern "C" fn($($arg),*) -> Status,)*
            path: PathBuf,
            _lib: libloading::Library,
        }

        impl Lib {
            #[allow(non_snake_case)]
            fn open(path: PathBuf) -> std::result::Result<Lib, String> {
                // SAFETY: loading runs the library's initialisers, which NVIDIA's libraries
                // keep side-effect free; the symbols are typed as nvjpeg.h declares them.
                unsafe {
                    let lib = libloading::Library::new(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    $(let $name = *lib
                        .get::<unsafe extern "C" fn($($arg),*) -> Status>(concat!(stringify!($name), "\0").as_bytes())
                        .map_err(|e| format!("{}: {e}", path.display()))?;)*
                    Ok(Lib { $($name,)* path, _lib: lib })
                }
            }
        }
    };
}

functions! {
    nvjpegCreateEx: fn(c_int, *mut c_void, *mut c_void, c_uint, *mut Handle);
    nvjpegDestroy: fn(Handle);
    nvjpegJpegStateCreate: fn(Handle, *mut State);
    nvjpegJpegStateDestroy: fn(State);
    nvjpegGetImageInfo: fn(Handle, *const c_uchar, usize, *mut c_int, *mut c_int, *mut c_int, *mut c_int);
    nvjpegDecode: fn(Handle, State, *const c_uchar, usize, c_int, *mut NvImage, CuStream);
    nvjpegDecodeBatchedInitialize: fn(Handle, State, c_int, c_int, c_int);
    nvjpegDecodeBatched: fn(Handle, State, *const *const c_uchar, *const usize, *mut NvImage, CuStream);
    nvjpegDecodeBatchedPreAllocate: fn(Handle, State, c_int, c_int, c_int, c_int, c_int);
    nvjpegGetHardwareDecoderInfo: fn(Handle, *mut c_uint, *mut c_uint);
    nvjpegDecoderCreate: fn(Handle, c_int, *mut State);
    nvjpegDecoderDestroy: fn(State);
    nvjpegDecoderStateCreate: fn(Handle, State, *mut State);
    nvjpegBufferPinnedCreate: fn(Handle, *mut c_void, *mut State);
    nvjpegBufferPinnedDestroy: fn(State);
    nvjpegBufferDeviceCreate: fn(Handle, *mut c_void, *mut State);
    nvjpegBufferDeviceDestroy: fn(State);
    nvjpegStateAttachPinnedBuffer: fn(State, State);
    nvjpegStateAttachDeviceBuffer: fn(State, State);
    nvjpegDecodeParamsCreate: fn(Handle, *mut State);
    nvjpegDecodeParamsDestroy: fn(State);
    nvjpegDecodeParamsSetOutputFormat: fn(State, c_int);
    nvjpegJpegStreamCreate: fn(Handle, *mut State);
    nvjpegJpegStreamDestroy: fn(State);
    nvjpegJpegStreamParse: fn(Handle, *const c_uchar, usize, c_int, c_int, State);
    nvjpegDecodeJpegHost: fn(Handle, State, State, State, State);
    nvjpegDecodeJpegTransferToDevice: fn(Handle, State, State, State, CuStream);
    nvjpegDecodeJpegDevice: fn(Handle, State, State, *mut NvImage, CuStream);
    nvjpegEncoderStateCreate: fn(Handle, *mut State, CuStream);
    nvjpegEncoderStateDestroy: fn(State);
    nvjpegEncoderParamsCreate: fn(Handle, *mut State, CuStream);
    nvjpegEncoderParamsDestroy: fn(State);
    nvjpegEncoderParamsSetQuality: fn(State, c_int, CuStream);
    nvjpegEncoderParamsSetSamplingFactors: fn(State, c_int, CuStream);
    nvjpegEncodeImage: fn(Handle, State, State, *const NvImage, c_int, c_int, c_int, CuStream);
    nvjpegEncodeYUV: fn(Handle, State, State, *const NvImage, c_int, c_int, c_int, CuStream);
    nvjpegEncodeRetrieveBitstream: fn(Handle, State, *mut c_uchar, *mut usize, CuStream);
}

// SAFETY: the library's functions may be called from any thread (nvJPEG's handle is
// thread-safe; states are used under a lock).
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

/// Where to look for the library, in order.
fn candidates() -> Vec<PathBuf> {
    let mut c: Vec<PathBuf> = std::env::var_os("CUIMG_NVJPEG").map(PathBuf::from).into_iter().collect();
    c.extend(["libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"].map(PathBuf::from));
    let homes = std::env::var_os("CUDA_HOME").map(PathBuf::from).into_iter().chain([PathBuf::from("/usr/local/cuda")]);
    for home in homes {
        for name in ["libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"] {
            c.push(home.join("lib64").join(name));
        }
    }
    for pattern in [
        "/usr/local/lib/python3*/*-packages/nvidia/*/lib/libnvjpeg.so*",
        "/usr/lib/python3*/*-packages/nvidia/*/lib/libnvjpeg.so*",
    ] {
        if let Ok(found) = glob_paths(pattern) {
            c.extend(found);
        }
    }
    c
}

/// The files matching a simple `*` pattern (no dependency for this one use).
fn glob_paths(pattern: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = vec![PathBuf::from("/")];
    for part in pattern.trim_start_matches('/').split('/') {
        let mut next = Vec::new();
        for p in &paths {
            if !part.contains('*') {
                next.push(p.join(part));
                continue;
            }
            let (pre, post) = part.split_once('*').expect("has a star");
            for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(pre) && name.ends_with(post.trim_end_matches('*')) {
                    next.push(e.path());
                }
            }
        }
        paths = next;
    }
    Ok(paths.into_iter().filter(|p| p.exists()).collect())
}

fn library() -> Result<&'static Lib> {
    static LIB: OnceLock<std::result::Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        if std::env::var_os("CUIMG_NO_NVJPEG").is_some_and(|v| v == "1") {
            return Err("not loaded: CUIMG_NO_NVJPEG=1".into());
        }
        let mut tried = Vec::new();
        for path in candidates() {
            match Lib::open(path) {
                Ok(lib) => return Ok(lib),
                Err(e) => tried.push(e),
            }
        }
        Err(format!("libnvjpeg was not found (tried: {})", tried.join("; ")))
    })
    .as_ref()
    .map_err(|e| Error::NoNvjpeg(e.clone()))
}

/// Loads nvJPEG (once per process) and returns the file it came from; [`Error::NoNvjpeg`]
/// lists where it looked. Needs no GPU.
///
/// ```
/// match cuimg::jpeg::load() {
///     Ok(path) => println!("nvJPEG: {}", path.display()),
///     Err(e) => println!("{e}"), // JPEG files then go through the CPU
/// }
/// ```
pub fn load() -> Result<PathBuf> {
    Ok(library()?.path.clone())
}

fn check(what: &str, status: Status) -> Result<()> {
    if status == SUCCESS { Ok(()) } else { Err(Error::Nvjpeg { what: what.into(), status }) }
}

/// Whether a JPEG's marker structure runs to its end-of-image marker (`FF D9`): the segments
/// before each scan are skipped by their lengths, the entropy-coded data of a scan by
/// scanning for the next marker (`FF 00` is a stuffed byte, `FF D0`..`FF D7` restarts).
/// An embedded thumbnail's own end-of-image marker lies inside a segment, so it is skipped.
pub fn is_complete(bytes: &[u8]) -> bool {
    let mut i = 2; // after SOI
    while i + 1 < bytes.len() {
        if bytes[i] != 0xFF {
            return false;
        }
        let marker = bytes[i + 1];
        match marker {
            0xD9 => return true,
            0xFF => i += 1, // fill byte
            0x01 | 0xD0..=0xD7 => i += 2,
            _ => {
                let Some(len) = bytes.get(i + 2..i + 4).map(|l| u16::from_be_bytes([l[0], l[1]]) as usize) else {
                    return false;
                };
                i += 2 + len;
                if marker == 0xDA {
                    // Entropy-coded data: up to the next marker that is not a stuffed byte
                    // or a restart (memchr: a 12-megapixel JPEG has megabytes of it).
                    while let Some(at) = bytes.get(i..).and_then(|rest| memchr::memchr(0xFF, rest)) {
                        i += at;
                        match bytes.get(i + 1) {
                            Some(&next) if next != 0x00 && !(0xD0..=0xD7).contains(&next) => break,
                            Some(_) => i += 2,
                            None => return false,
                        }
                    }
                }
            }
        }
    }
    false
}

/// A JPEG's marker segments from its start: each marker with the bytes after its length
/// field (as many as the length says and the file has). The walk goes by the lengths while
/// a marker is found, so it ends in the entropy-coded data after a scan's header.
pub(crate) fn segments(bytes: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut i = 2; // after SOI
    std::iter::from_fn(move || {
        if i + 4 > bytes.len() || bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        let segment = bytes.get(i + 4..(i + 2 + len).min(bytes.len())).unwrap_or(&[]);
        i += 2 + len;
        Some((marker, segment))
    })
}

/// A start of frame: `C0` to `CF` but for the table markers `C4`, `C8` and `CC`.
fn is_frame(marker: u8) -> bool {
    matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// True for a baseline or extended-sequential (Huffman) JPEG of 1 or 3 components: the
/// files the batched decoders take. Reads the frame header only.
fn baseline_color_or_gray(bytes: &[u8]) -> bool {
    // The frame header: precision, height, width, then the component count.
    segments(bytes)
        .find(|&(marker, _)| is_frame(marker))
        .is_some_and(|(marker, frame)| matches!(marker, 0xC0 | 0xC1) && matches!(frame.get(5), Some(1 | 3)))
}

/// True when a JPEG's first component is its luma, so that nvJPEG's `Y` output is the
/// image in gray: one-component files, and three-component files coded as YCbCr (JFIF's
/// default). Not for four components (CMYK, YCCK) or three coded as RGB (an Adobe marker with
/// transform 0, or components named `R`, `G`, `B`).
pub(crate) fn first_component_is_luma(bytes: &[u8]) -> bool {
    let mut adobe_rgb = false;
    for (marker, segment) in segments(bytes) {
        if marker == 0xEE && segment.starts_with(b"Adobe") {
            adobe_rgb = segment.get(11) == Some(&0);
        }
        if is_frame(marker) {
            // Precision, height, width, the component count, then 3 bytes per component.
            let ids: Vec<u8> = segment.get(6..).unwrap_or(&[]).chunks(3).map(|c| c[0]).collect();
            return match segment.get(5) {
                Some(1) => true,
                Some(3) => !adobe_rgb && ids.get(..3) != Some(&b"RGB"[..]),
                _ => false,
            };
        }
    }
    false
}

/// How nvJPEG writes a decoded image of this pixel type (one interleaved plane of
/// `CHANNELS` bytes a pixel).
trait Output: crate::Pixel {
    const FORMAT: c_int;
    /// Whether nvJPEG's output in `FORMAT` is this file's image.
    fn decodes_directly(bytes: &[u8]) -> bool;
    /// The image from the file decoded to RGB, for the files where it is not.
    fn from_rgb(stream: &Stream, rgb: DeviceImage<Rgb8>) -> Result<DeviceImage<Self>>;
}

impl Output for Rgb8 {
    const FORMAT: c_int = OUTPUT_RGBI;
    fn decodes_directly(_: &[u8]) -> bool {
        true
    }
    fn from_rgb(_: &Stream, rgb: DeviceImage<Rgb8>) -> Result<DeviceImage<Rgb8>> {
        Ok(rgb)
    }
}

impl Output for Gray8 {
    const FORMAT: c_int = OUTPUT_Y;
    fn decodes_directly(bytes: &[u8]) -> bool {
        first_component_is_luma(bytes)
    }
    fn from_rgb(stream: &Stream, rgb: DeviceImage<Rgb8>) -> Result<DeviceImage<Gray8>> {
        let mut gray = stream.alloc(rgb.width(), rgb.height())?;
        stream.grayscale(&rgb, &mut gray, crate::GrayWeights::Bt601)?;
        Ok(gray)
    }
}

/// nvJPEG's decoupled decoder with Huffman decoding on the GPU (`NVJPEG_BACKEND_GPU_HYBRID`):
/// the CPU only parses the file. Its own state, buffers, parameters and parsed stream, all
/// used by one call at a time (under the codec's lock).
struct SmDecoder {
    decoder: State,
    state: State,
    pinned: State,
    device: State,
    params: State,
    parsed: State,
}

impl SmDecoder {
    fn new(lib: &Lib, handle: Handle) -> Result<SmDecoder> {
        let _exclusive = states_exclusive();
        let mut d = SmDecoder::empty();
        // SAFETY: a valid handle; each call fills one out-pointer of `d` (null allocators
        // select nvJPEG's own); what was made before a failure is destroyed by `destroy`,
        // which skips the null ones.
        let made = unsafe {
            check("nvjpegDecoderCreate", (lib.nvjpegDecoderCreate)(handle, BACKEND_GPU_HYBRID, &mut d.decoder))
                .and_then(|()| {
                    check("nvjpegDecoderStateCreate", (lib.nvjpegDecoderStateCreate)(handle, d.decoder, &mut d.state))
                })
                .and_then(|()| {
                    check(
                        "nvjpegBufferPinnedCreate",
                        (lib.nvjpegBufferPinnedCreate)(handle, std::ptr::null_mut(), &mut d.pinned),
                    )
                })
                .and_then(|()| {
                    check(
                        "nvjpegBufferDeviceCreate",
                        (lib.nvjpegBufferDeviceCreate)(handle, std::ptr::null_mut(), &mut d.device),
                    )
                })
                .and_then(|()| {
                    check("nvjpegStateAttachPinnedBuffer", (lib.nvjpegStateAttachPinnedBuffer)(d.state, d.pinned))
                })
                .and_then(|()| {
                    check("nvjpegStateAttachDeviceBuffer", (lib.nvjpegStateAttachDeviceBuffer)(d.state, d.device))
                })
                .and_then(|()| check("nvjpegDecodeParamsCreate", (lib.nvjpegDecodeParamsCreate)(handle, &mut d.params)))
                .and_then(|()| {
                    check(
                        "nvjpegDecodeParamsSetOutputFormat",
                        (lib.nvjpegDecodeParamsSetOutputFormat)(d.params, OUTPUT_RGBI),
                    )
                })
                .and_then(|()| check("nvjpegJpegStreamCreate", (lib.nvjpegJpegStreamCreate)(handle, &mut d.parsed)))
        };
        match made {
            Ok(()) => Ok(d),
            Err(e) => {
                d.destroy(lib);
                Err(e)
            }
        }
    }

    /// Nothing made yet.
    fn empty() -> SmDecoder {
        let null = std::ptr::null_mut();
        SmDecoder { decoder: null, state: null, pinned: null, device: null, params: null, parsed: null }
    }

    /// Destroys what was made (the caller holds the states lock exclusively, or is `new`).
    fn destroy(&mut self, lib: &Lib) {
        // The state goes before the buffers attached to it, the decoder last.
        let made = [
            (self.parsed, lib.nvjpegJpegStreamDestroy),
            (self.params, lib.nvjpegDecodeParamsDestroy),
            (self.state, lib.nvjpegJpegStateDestroy),
            (self.device, lib.nvjpegBufferDeviceDestroy),
            (self.pinned, lib.nvjpegBufferPinnedDestroy),
            (self.decoder, lib.nvjpegDecoderDestroy),
        ];
        for (object, destroy) in made.into_iter().filter(|(o, _)| !o.is_null()) {
            // SAFETY: each object was made by `new` with its matching destroy function, is
            // destroyed once (the fields are nulled below), and no call uses it any more.
            unsafe { destroy(object) };
        }
        *self = SmDecoder::empty();
    }
}

/// The error of a file with no end-of-image marker (cut short), on every decode path.
fn truncated() -> Error {
    Error::Nvjpeg { what: "truncated JPEG (no end-of-image marker)".into(), status: 3 }
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
/// let bytes = jpeg.encode_rgb(&stream, &stream.upload(&img.view())?, 90)?;
/// let back = jpeg.decode_rgb(&stream, &bytes)?;
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
        // is gone (they held this owner).
        unsafe { (self.lib.nvjpegDestroy)(self.handle) };
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
        let mut handle: Handle = std::ptr::null_mut();
        // NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE, for diagnosis only (docs/BENCHMARKS.md): the
        // hardware decoder without its pipelining across calls.
        let flags = c_uint::from(std::env::var_os("CUIMG_NVJPEG_NO_PIPELINE").is_some());
        // SAFETY: out-pointer to a handle; null allocators select nvJPEG's defaults.
        let hardware = want_hardware
            && unsafe {
                (lib.nvjpegCreateEx)(BACKEND_HARDWARE, std::ptr::null_mut(), std::ptr::null_mut(), flags, &mut handle)
            } == SUCCESS;
        if !hardware {
            // SAFETY: as above.
            check("nvjpegCreateEx", unsafe {
                (lib.nvjpegCreateEx)(BACKEND_DEFAULT, std::ptr::null_mut(), std::ptr::null_mut(), 0, &mut handle)
            })?;
        }
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
        let (mut engines, mut cores): (c_uint, c_uint) = (0, 0);
        // SAFETY: a valid handle and two out-pointers.
        let status = unsafe { (self.lib.nvjpegGetHardwareDecoderInfo)(self.handle, &mut engines, &mut cores) };
        (self.hardware && status == SUCCESS && engines > 0).then_some((engines, cores))
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
    /// assert!(matches!(jpeg.decode_rgb(&stream, &bytes), Err(cuimg::Error::Limit { .. })));
    /// # Ok(()) }
    /// ```
    pub fn set_limits(&self, limits: crate::Limits) {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner()) = limits;
    }

    /// The limits files are checked against ([`Jpeg::set_limits`]).
    pub fn limits(&self) -> crate::Limits {
        *self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a whole JPEG is within the limits, for an output of `bytes_per_pixel`.
    fn within_limits(&self, bytes: &[u8], bytes_per_pixel: u32) -> Result<()> {
        let name = std::path::Path::new("<JPEG bytes>");
        let header = crate::limits::Header::parse(bytes)
            .map_err(|why| Error::Nvjpeg { what: format!("reading the header ({why})"), status: 0 })?;
        self.limits().check(&header, bytes.len() as u64, bytes_per_pixel, name)
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

    /// Width, height and components of a JPEG, from its header.
    pub fn info(&self, bytes: &[u8]) -> Result<(u32, u32, u32)> {
        let (mut n, mut css) = (0, 0);
        let (mut w, mut h) = ([0 as c_int; 4], [0 as c_int; 4]);
        // SAFETY: `bytes` is read for `len` bytes; the outputs are arrays of 4.
        check("nvjpegGetImageInfo", unsafe {
            (self.lib.nvjpegGetImageInfo)(
                self.handle,
                bytes.as_ptr(),
                bytes.len(),
                &mut n,
                &mut css,
                w.as_mut_ptr(),
                h.as_mut_ptr(),
            )
        })?;
        Ok((w[0].max(0) as u32, h[0].max(0) as u32, n.max(0) as u32))
    }

    /// Decodes a JPEG into a new device image: gray for one-component files, RGB else.
    pub fn decode(&self, stream: &Stream, bytes: &[u8]) -> Result<DecodedJpeg> {
        if !is_complete(bytes) {
            return Err(truncated());
        }
        self.within_limits(bytes, 3)?;
        let (w, h, n) = self.info(bytes)?;
        if n == 1 {
            let mut img = stream.alloc_for_output::<Gray8>(w, h)?;
            self.decode_into(stream, bytes, &mut img)?;
            Ok(DecodedJpeg::Gray(img))
        } else {
            Ok(DecodedJpeg::Rgb(self.decode_whole(stream, bytes)?))
        }
    }

    /// Decodes a JPEG (gray ones converted) into a new RGB device image.
    pub fn decode_rgb(&self, stream: &Stream, bytes: &[u8]) -> Result<DeviceImage<Rgb8>> {
        self.decode_checked(stream, bytes)
    }

    /// Decodes a JPEG into a new gray device image. A color file gives its luma (`Y`) plane,
    /// decoded without converting its color planes to RGB, as libjpeg's grayscale output and
    /// OpenCV's `imread(path, IMREAD_GRAYSCALE)` do: the encoder made that plane with the
    /// BT.601 weights [`Stream::grayscale`] uses, from the original pixels, so it differs from
    /// decoding to RGB and converting by rounding only (the bound is in `tests/tests/jpeg.rs`). CMYK
    /// files and files coded in RGB are decoded to RGB and converted.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// # let Ok(jpeg) = cuimg::jpeg::Jpeg::new(&gpu) else { return Ok(()) };
    /// let stream = gpu.stream()?;
    /// let photo = stream.upload(&cuimg::io::sample_rgb().view())?;
    /// let bytes = jpeg.encode_rgb(&stream, &photo, 90)?;
    /// let gray = jpeg.decode_gray(&stream, &bytes)?;
    /// assert_eq!(gray.dimensions(), photo.dimensions());
    /// # Ok(()) }
    /// ```
    pub fn decode_gray(&self, stream: &Stream, bytes: &[u8]) -> Result<DeviceImage<Gray8>> {
        self.decode_checked(stream, bytes)
    }

    /// Decodes a file into a new image of `P`, or refuses it if it is cut short.
    fn decode_checked<P: Output>(&self, stream: &Stream, bytes: &[u8]) -> Result<DeviceImage<P>> {
        if !is_complete(bytes) {
            return Err(truncated());
        }
        self.within_limits(bytes, P::CHANNELS as u32)?;
        self.decode_whole(stream, bytes)
    }

    /// Decodes a file already known to be whole into a new image of `P`.
    fn decode_whole<P: Output>(&self, stream: &Stream, bytes: &[u8]) -> Result<DeviceImage<P>> {
        if !P::decodes_directly(bytes) {
            return P::from_rgb(stream, self.decode_whole::<Rgb8>(stream, bytes)?);
        }
        let (w, h, _) = self.info(bytes)?;
        let mut img = stream.alloc_for_output::<P>(w, h)?;
        if !self.hardware && baseline_color_or_gray(bytes) && u64::from(w) * u64::from(h) >= GPU_HUFFMAN_PIXELS {
            self.decode_on_sms(stream, bytes, &mut img)?;
        } else {
            self.decode_into(stream, bytes, &mut img)?;
        }
        Ok(img)
    }

    fn decode_into<P: Output>(&self, stream: &Stream, bytes: &[u8], img: &mut DeviceImage<P>) -> Result<()> {
        let pitch = img.width() as usize * P::CHANNELS;
        let mut to = img.buf.write(&stream.raw)?;
        let mut out = NvImage::one_plane(to.ptr().addr() as *mut c_uchar, pitch);
        let mut state = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
        if state.is_null() {
            let _exclusive = states_exclusive();
            stream.raw.context().bind_to_thread()?;
            // SAFETY: a valid handle and an out-pointer; the state is this codec's, under its lock.
            check("nvjpegJpegStateCreate", unsafe { (self.lib.nvjpegJpegStateCreate)(self.handle, &mut *state) })?;
        }
        let _shared = states_shared();
        let _engine = self.hardware.then(|| hardware_lock(&self.owner.gpu));
        stream.raw.context().bind_to_thread()?;
        // SAFETY: `bytes` is read during the call (nvJPEG parses it on the host before it
        // returns); `out` points at the device image of `pitch * height` bytes under the
        // write guard, on `stream`'s context; the state is ours, under its lock.
        check("nvjpegDecode", unsafe {
            (self.lib.nvjpegDecode)(
                self.handle,
                *state,
                bytes.as_ptr(),
                bytes.len(),
                P::FORMAT,
                &mut out,
                stream.raw.cu_stream(),
            )
        })
    }

    /// Decodes a whole baseline JPEG into `img` (its size) with the decoupled GPU decoder,
    /// and waits for it: the state, its pinned and device buffers and the parsed stream are
    /// reused by the next call, and `bytes` is only borrowed for this one.
    fn decode_on_sms<P: Output>(&self, stream: &Stream, bytes: &[u8], img: &mut DeviceImage<P>) -> Result<()> {
        let mut sm = self.sm.lock().unwrap_or_else(|e| e.into_inner());
        if sm.is_none() {
            stream.raw.context().bind_to_thread()?;
            *sm = Some(SmDecoder::new(self.lib, self.handle)?);
        }
        let d = sm.as_ref().expect("made above");
        let pitch = img.width() as usize * P::CHANNELS;
        let mut to = img.buf.write(&stream.raw)?;
        let mut out = NvImage::one_plane(to.ptr().addr() as *mut c_uchar, pitch);
        let s = stream.raw.cu_stream();
        let _shared = states_shared();
        stream.raw.context().bind_to_thread()?;
        // SAFETY: the decoder's objects are ours under its lock and were made on this
        // handle; `bytes` outlives every phase (the stream is synchronized before return,
        // and nvJPEG keeps no copy: save_stream is 0); `out` is the device image of
        // `pitch * height` bytes under its write guard, on `stream`'s context.
        unsafe {
            check(
                "nvjpegDecodeParamsSetOutputFormat",
                (self.lib.nvjpegDecodeParamsSetOutputFormat)(d.params, P::FORMAT),
            )?;
            check(
                "nvjpegJpegStreamParse",
                (self.lib.nvjpegJpegStreamParse)(self.handle, bytes.as_ptr(), bytes.len(), 0, 0, d.parsed),
            )?;
            check(
                "nvjpegDecodeJpegHost",
                (self.lib.nvjpegDecodeJpegHost)(self.handle, d.decoder, d.state, d.params, d.parsed),
            )?;
            check(
                "nvjpegDecodeJpegTransferToDevice",
                (self.lib.nvjpegDecodeJpegTransferToDevice)(self.handle, d.decoder, d.state, d.parsed, s),
            )?;
            check(
                "nvjpegDecodeJpegDevice",
                (self.lib.nvjpegDecodeJpegDevice)(self.handle, d.decoder, d.state, &mut out, s),
            )?;
        }
        drop(to);
        stream.synchronize()
    }

    /// Decodes many JPEGs into RGB device images in one call (the hardware decoder takes
    /// them together; a codec without it decodes them one by one). Each image's own
    /// failure is its own `Err`; files that are not whole JPEGs are refused before the call.
    pub fn decode_batch_rgb(&self, stream: &Stream, files: &[&[u8]]) -> Result<Vec<Result<DeviceImage<Rgb8>>>> {
        self.decode_batch(stream, files)
    }

    /// [`Jpeg::decode_batch_rgb`] into gray images, each as [`Jpeg::decode_gray`] makes it
    /// (a color file's luma plane).
    pub fn decode_batch_gray(&self, stream: &Stream, files: &[&[u8]]) -> Result<Vec<Result<DeviceImage<Gray8>>>> {
        self.decode_batch(stream, files)
    }

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

    fn decode_batch<P: Output>(&self, stream: &Stream, files: &[&[u8]]) -> Result<Vec<Result<DeviceImage<P>>>> {
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
    fn encoder(&self, stream: &Stream) -> Result<std::sync::MutexGuard<'_, Option<(State, State)>>> {
        let mut enc = self.encoder.lock().unwrap_or_else(|e| e.into_inner());
        if enc.is_none() {
            stream.raw.context().bind_to_thread()?;
            let (mut state, mut params): (State, State) = (std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: a valid handle and out-pointers, on `stream`.
            unsafe {
                check(
                    "nvjpegEncoderStateCreate",
                    (self.lib.nvjpegEncoderStateCreate)(self.handle, &mut state, stream.raw.cu_stream()),
                )?;
                check(
                    "nvjpegEncoderParamsCreate",
                    (self.lib.nvjpegEncoderParamsCreate)(self.handle, &mut params, stream.raw.cu_stream()),
                )?;
            }
            *enc = Some((state, params));
        }
        Ok(enc)
    }

    /// Encodes an RGB device image to JPEG bytes (4:2:0) at `quality` (1 to 100); waits
    /// for the stream.
    pub fn encode_rgb(&self, stream: &Stream, img: &DeviceImage<Rgb8>, quality: u8) -> Result<Vec<u8>> {
        self.encode(
            stream,
            img.buf.read(&stream.raw)?.ptr().addr(),
            img.width() as usize * 3,
            img.dimensions(),
            quality,
            false,
        )
    }

    /// Encodes a gray device image to a one-component JPEG at `quality`; waits for the
    /// stream.
    pub fn encode_gray(&self, stream: &Stream, img: &DeviceImage<Gray8>, quality: u8) -> Result<Vec<u8>> {
        self.encode(
            stream,
            img.buf.read(&stream.raw)?.ptr().addr(),
            img.width() as usize,
            img.dimensions(),
            quality,
            true,
        )
    }

    fn encode(
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
        let (state, params) = enc.expect("made by encoder()");
        let s = stream.raw.cu_stream();
        let image = NvImage::one_plane(src as *mut c_uchar, pitch);
        stream.raw.context().bind_to_thread()?;
        let mut len = 0usize;
        // SAFETY: the encoder state and params are ours under the lock; `image` points at the
        // device image (`pitch * h` bytes, read under the caller's guard) on `stream`'s
        // context; the length is read after the stream is synchronized.
        unsafe {
            check(
                "nvjpegEncoderParamsSetQuality",
                (self.lib.nvjpegEncoderParamsSetQuality)(params, quality.clamp(1, 100) as c_int, s),
            )?;
            let css = if gray { CSS_GRAY } else { CSS_420 };
            check(
                "nvjpegEncoderParamsSetSamplingFactors",
                (self.lib.nvjpegEncoderParamsSetSamplingFactors)(params, css, s),
            )?;
            if gray {
                check(
                    "nvjpegEncodeYUV",
                    (self.lib.nvjpegEncodeYUV)(self.handle, state, params, &image, CSS_GRAY, w as c_int, h as c_int, s),
                )?;
            } else {
                check(
                    "nvjpegEncodeImage",
                    (self.lib.nvjpegEncodeImage)(
                        self.handle,
                        state,
                        params,
                        &image,
                        INPUT_RGBI,
                        w as c_int,
                        h as c_int,
                        s,
                    ),
                )?;
            }
            check(
                "nvjpegEncodeRetrieveBitstream",
                (self.lib.nvjpegEncodeRetrieveBitstream)(self.handle, state, std::ptr::null_mut(), &mut len, s),
            )?;
            stream.synchronize()?;
        }
        // Into the stream's page-locked staging buffer: from ordinary memory the driver
        // stages a copy from the device itself and holds its lock meanwhile, and every other
        // thread's CUDA calls waited on it (docs/BENCHMARKS.md, the CUPTI timeline).
        let mut staging = stream.staging(len)?;
        {
            let mut to = staging.write(&stream.raw)?;
            let ptr = to.bytes()?.as_mut_ptr();
            // SAFETY: `ptr` holds at least `len` bytes of page-locked memory (the staging
            // buffer grows to what is asked), written by a copy on `s` under the write guard
            // `to`; the host reads them only through `host_bytes`, which waits for that copy.
            check("nvjpegEncodeRetrieveBitstream", unsafe {
                (self.lib.nvjpegEncodeRetrieveBitstream)(self.handle, state, ptr, &mut len, s)
            })?;
        }
        Ok(staging.host_bytes()?[..len].to_vec())
    }
}

impl Drop for Jpeg {
    fn drop(&mut self) {
        let _ = self.owner.gpu.bind();
        let _exclusive = states_exclusive();
        if let Some(mut sm) = self.sm.get_mut().ok().and_then(|s| s.take()) {
            sm.destroy(self.lib);
        }
        // SAFETY: the states were made by this codec, are destroyed once, and no call of this
        // codec is running (drop has it exclusively); the handle outlives them (`owner`).
        unsafe {
            if let Some((state, params)) = self.encoder.get_mut().ok().and_then(|e| e.take()) {
                (self.lib.nvjpegEncoderParamsDestroy)(params);
                (self.lib.nvjpegEncoderStateDestroy)(state);
            }
            if let Ok(&mut Batched { state, .. }) = self.batched.get_mut()
                && !state.is_null()
            {
                (self.lib.nvjpegJpegStateDestroy)(state);
            }
            if let Ok(&mut state) = self.decoder.get_mut()
                && !state.is_null()
            {
                (self.lib.nvjpegJpegStateDestroy)(state);
            }
        }
    }
}
