//! JPEG on the GPU through NVIDIA's nvJPEG, loaded at run time as cudarc loads the driver:
//! building needs no CUDA files, and a machine without the library gets
//! [`Error::NoNvjpeg`] (the file paths then decode on the CPU).
//!
//! The library is looked for in this order: the file `CUIMG_NVJPEG` names; the system's
//! search path (`LD_LIBRARY_PATH`, the linker cache); `$CUDA_HOME/lib64` and
//! `/usr/local/cuda/lib64`; the `nvidia-nvjpeg` wheel's `lib` folder in the Python
//! installations found. The bindings are the few functions used here, each call with its
//! `// SAFETY:` line.

use std::ffi::{c_int, c_uchar, c_uint, c_void};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::image::check_same_size;
use crate::pixel::{Gray8, Rgb8};
use crate::runtime::{DeviceImage, Gpu, Stream};

type Handle = *mut c_void;
type State = *mut c_void;
type Status = c_int;
type CuStream = cudarc::driver::sys::CUstream;

/// `nvjpegImage_t`: up to four planes and their pitches.
#[repr(C)]
struct NvImage {
    channel: [*mut c_uchar; 4],
    pitch: [usize; 4],
}

const SUCCESS: Status = 0;
const OUTPUT_Y: c_int = 2;
const OUTPUT_RGBI: c_int = 5;
const INPUT_RGBI: c_int = 5;
const CSS_420: c_int = 2;
const CSS_GRAY: c_int = 6;
const BACKEND_DEFAULT: c_int = 0;
const BACKEND_HARDWARE: c_int = 3;

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

/// True for a baseline or extended-sequential (Huffman) JPEG of 1 or 3 components: the
/// files the batched decoders take. Reads the frame header only.
fn baseline_color_or_gray(bytes: &[u8]) -> bool {
    let mut i = 2;
    while i + 4 <= bytes.len() && bytes[i] == 0xFF {
        let marker = bytes[i + 1];
        let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            // A start of frame: its type, then (precision, height, width) and the components.
            let components = bytes.get(i + 9).copied().unwrap_or(0);
            return matches!(marker, 0xC0 | 0xC1) && matches!(components, 1 | 3);
        }
        i += 2 + len;
    }
    false
}

/// A decoded JPEG: color, or gray for a one-component file.
#[derive(Debug)]
pub enum DecodedJpeg {
    Rgb(DeviceImage<Rgb8>),
    Gray(DeviceImage<Gray8>),
}

/// nvJPEG for one GPU: decode JPEG bytes into device images, encode device images to JPEG.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
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
    handle: Handle,
    hardware: bool,
    decoder: Mutex<State>,
    batched: Mutex<Option<(State, c_int)>>,
    encoder: Mutex<Option<(State, State)>>,
    _gpu: Gpu,
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
    /// the default (GPU/hybrid) backend elsewhere.
    pub fn new(gpu: &Gpu) -> Result<Arc<Jpeg>> {
        Jpeg::with_hardware(gpu, true)
    }

    /// nvJPEG on `gpu` on its default backend (decoding on the GPU's SMs, with the CPU's
    /// help), even where a hardware decoder exists: a second decoder beside the hardware
    /// one, for when that one is saturated.
    pub fn without_hardware(gpu: &Gpu) -> Result<Arc<Jpeg>> {
        Jpeg::with_hardware(gpu, false)
    }

    fn with_hardware(gpu: &Gpu, want_hardware: bool) -> Result<Arc<Jpeg>> {
        let lib = library()?;
        gpu.bind()?;
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: out-pointer to a handle; null allocators select nvJPEG's defaults.
        let hardware = want_hardware
            && unsafe {
                (lib.nvjpegCreateEx)(BACKEND_HARDWARE, std::ptr::null_mut(), std::ptr::null_mut(), 0, &mut handle)
            } == SUCCESS;
        if !hardware {
            // SAFETY: as above.
            check("nvjpegCreateEx", unsafe {
                (lib.nvjpegCreateEx)(BACKEND_DEFAULT, std::ptr::null_mut(), std::ptr::null_mut(), 0, &mut handle)
            })?;
        }
        let mut decoder: State = std::ptr::null_mut();
        // SAFETY: a valid handle and an out-pointer.
        check("nvjpegJpegStateCreate", unsafe { (lib.nvjpegJpegStateCreate)(handle, &mut decoder) })?;
        Ok(Arc::new(Jpeg {
            lib,
            handle,
            hardware,
            decoder: Mutex::new(decoder),
            batched: Mutex::new(None),
            encoder: Mutex::new(None),
            _gpu: gpu.clone(),
        }))
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
        let (w, h, n) = self.info(bytes)?;
        if n == 1 {
            let mut img = stream.alloc_for_output::<Gray8>(w, h)?;
            self.decode_into(stream, bytes, &mut img, OUTPUT_Y, 1)?;
            Ok(DecodedJpeg::Gray(img))
        } else {
            let mut img = stream.alloc_for_output::<Rgb8>(w, h)?;
            self.decode_into(stream, bytes, &mut img, OUTPUT_RGBI, 3)?;
            Ok(DecodedJpeg::Rgb(img))
        }
    }

    /// Decodes a JPEG (gray ones converted) into a new RGB device image.
    pub fn decode_rgb(&self, stream: &Stream, bytes: &[u8]) -> Result<DeviceImage<Rgb8>> {
        if !crate::io::jpeg_is_complete(bytes) {
            return Err(Error::Nvjpeg { what: "truncated JPEG (no end-of-image marker)".into(), status: 3 });
        }
        let (w, h, _) = self.info(bytes)?;
        let mut img = stream.alloc_for_output::<Rgb8>(w, h)?;
        self.decode_into(stream, bytes, &mut img, OUTPUT_RGBI, 3)?;
        Ok(img)
    }

    fn decode_into<P: crate::Pixel>(
        &self,
        stream: &Stream,
        bytes: &[u8],
        img: &mut DeviceImage<P>,
        format: c_int,
        channels: usize,
    ) -> Result<()> {
        if !crate::io::jpeg_is_complete(bytes) {
            return Err(Error::Nvjpeg { what: "truncated JPEG (no end-of-image marker)".into(), status: 3 });
        }
        let pitch = img.width() as usize * channels;
        let mut to = img.buf.write(&stream.raw)?;
        let mut out = NvImage {
            channel: [
                to.ptr().addr() as *mut c_uchar,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ],
            pitch: [pitch, 0, 0, 0],
        };
        let state = self.decoder.lock().unwrap_or_else(|e| e.into_inner());
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
                format,
                &mut out,
                stream.raw.cu_stream(),
            )
        })
    }

    /// Decodes many JPEGs into RGB device images in one call (the hardware decoder takes
    /// them together). Each image's own failure is its own `Err`; files that are not whole
    /// JPEGs are refused before the call.
    pub fn decode_batch_rgb(&self, stream: &Stream, files: &[&[u8]]) -> Result<Vec<Result<DeviceImage<Rgb8>>>> {
        let mut results: Vec<Result<DeviceImage<Rgb8>>> = Vec::with_capacity(files.len());
        let mut good = Vec::new();
        let mut alone = Vec::new();
        for (i, bytes) in files.iter().enumerate() {
            let r = if crate::io::jpeg_is_complete(bytes) {
                self.info(bytes).and_then(|(w, h, _)| stream.alloc_for_output::<Rgb8>(w, h))
            } else {
                Err(Error::Nvjpeg { what: "truncated JPEG (no end-of-image marker)".into(), status: 3 })
            };
            match (&r, baseline_color_or_gray(bytes)) {
                (Ok(_), true) => good.push(i),
                // Progressive, CMYK and other uncommon files go one at a time: the batched
                // call of nvJPEG's default backend crashed the process on them (seen on an
                // H100 with CUDA 13.0), and the hardware decoder takes baseline files only.
                (Ok(_), false) => alone.push(i),
                (Err(_), _) => {}
            }
            results.push(r);
        }
        for &i in &alone {
            results[i] = self.decode_rgb(stream, files[i]);
        }
        if good.is_empty() {
            return Ok(results);
        }
        let mut guards = Vec::with_capacity(good.len());
        let mut outs = Vec::with_capacity(good.len());
        for img in results.iter_mut().flatten() {
            let pitch = img.width() as usize * 3;
            let mut guard = img.buf.write(&stream.raw)?;
            let ptr = guard.ptr().addr() as *mut c_uchar;
            guards.push(guard);
            outs.push(NvImage {
                channel: [ptr, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()],
                pitch: [pitch, 0, 0, 0],
            });
        }
        let data: Vec<*const c_uchar> = good.iter().map(|&i| files[i].as_ptr()).collect();
        let lengths: Vec<usize> = good.iter().map(|&i| files[i].len()).collect();
        let mut batched = self.batched.lock().unwrap_or_else(|e| e.into_inner());
        stream.raw.context().bind_to_thread()?;
        let threads = std::thread::available_parallelism().map_or(4, |n| n.get()) as c_int;
        let state = match *batched {
            Some((state, size)) if size == good.len() as c_int => state,
            _ => {
                if let Some((old, _)) = batched.take() {
                    // SAFETY: a state this codec made and no longer uses.
                    unsafe { (self.lib.nvjpegJpegStateDestroy)(old) };
                }
                let mut state: State = std::ptr::null_mut();
                // SAFETY: a valid handle and an out-pointer.
                check("nvjpegJpegStateCreate", unsafe { (self.lib.nvjpegJpegStateCreate)(self.handle, &mut state) })?;
                // SAFETY: the state just made; batch size and thread count are positive.
                check("nvjpegDecodeBatchedInitialize", unsafe {
                    (self.lib.nvjpegDecodeBatchedInitialize)(
                        self.handle,
                        state,
                        good.len() as c_int,
                        threads,
                        OUTPUT_RGBI,
                    )
                })?;
                *batched = Some((state, good.len() as c_int));
                state
            }
        };
        // SAFETY: `data` and `lengths` describe `good.len()` live byte slices; `outs` as many
        // device images under their write guards, on `stream`'s context.
        let status = unsafe {
            (self.lib.nvjpegDecodeBatched)(
                self.handle,
                state,
                data.as_ptr(),
                lengths.as_ptr(),
                outs.as_mut_ptr(),
                stream.raw.cu_stream(),
            )
        };
        drop(guards);
        if status != SUCCESS {
            // The batch failed as a whole (one bad file fails it): decode one by one instead,
            // so each file gets its own result.
            drop(batched);
            return Ok(files
                .iter()
                .zip(results)
                .map(|(bytes, r)| r.and_then(|_| self.decode_rgb(stream, bytes)))
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
        let image = NvImage {
            channel: [src as *mut c_uchar, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()],
            pitch: [pitch, 0, 0, 0],
        };
        stream.raw.context().bind_to_thread()?;
        // SAFETY: the encoder state and params are ours under the lock; `image` points at the
        // device image (`pitch * h` bytes, read under the caller's guard) on `stream`'s
        // context; the bitstream is read only after the stream is synchronized.
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
            let mut len = 0usize;
            check(
                "nvjpegEncodeRetrieveBitstream",
                (self.lib.nvjpegEncodeRetrieveBitstream)(self.handle, state, std::ptr::null_mut(), &mut len, s),
            )?;
            stream.synchronize()?;
            let mut out = vec![0u8; len];
            check(
                "nvjpegEncodeRetrieveBitstream",
                (self.lib.nvjpegEncodeRetrieveBitstream)(self.handle, state, out.as_mut_ptr(), &mut len, s),
            )?;
            stream.synchronize()?;
            out.truncate(len);
            Ok(out)
        }
    }
}

impl Drop for Jpeg {
    fn drop(&mut self) {
        let _ = self._gpu.bind();
        // SAFETY: the states and the handle were made by this codec, are destroyed once, and
        // no call of this codec is running (drop has it exclusively).
        unsafe {
            if let Some((state, params)) = self.encoder.get_mut().ok().and_then(|e| e.take()) {
                (self.lib.nvjpegEncoderParamsDestroy)(params);
                (self.lib.nvjpegEncoderStateDestroy)(state);
            }
            if let Some((state, _)) = self.batched.get_mut().ok().and_then(|b| b.take()) {
                (self.lib.nvjpegJpegStateDestroy)(state);
            }
            if let Ok(state) = self.decoder.get_mut() {
                (self.lib.nvjpegJpegStateDestroy)(*state);
            }
            (self.lib.nvjpegDestroy)(self.handle);
        }
    }
}
