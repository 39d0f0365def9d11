//! The lowest tier: nvJPEG's C types and the functions cuimg calls, loaded at run time from
//! where the library is found (the search order is in the module above), each typed as
//! `nvjpeg.h` declares it.

use std::ffi::{c_int, c_uchar, c_uint, c_void};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::{Error, Result};

pub(super) type Handle = *mut c_void;
/// Any other of nvJPEG's opaque objects: states, decoders, buffers, parameters, streams.
pub(super) type State = *mut c_void;
pub(super) type Status = c_int;
pub(super) type CuStream = cudarc::driver::sys::CUstream;

/// `nvjpegImage_t`: up to four planes and their pitches.
#[repr(C)]
pub(super) struct NvImage {
    pub(super) channel: [*mut c_uchar; 4],
    pub(super) pitch: [usize; 4],
}

impl NvImage {
    /// One interleaved (or gray) plane at `ptr`, `pitch` bytes a row.
    pub(super) fn one_plane(ptr: *mut c_uchar, pitch: usize) -> NvImage {
        let null = std::ptr::null_mut();
        NvImage { channel: [ptr, null, null, null], pitch: [pitch, 0, 0, 0] }
    }
}

pub(super) const SUCCESS: Status = 0;
pub(super) const OUTPUT_Y: c_int = 2;
pub(super) const OUTPUT_RGBI: c_int = 5;
pub(super) const INPUT_RGBI: c_int = 5;
pub(super) const CSS_444: c_int = 0;
pub(super) const CSS_420: c_int = 2;
pub(super) const CSS_GRAY: c_int = 6;
pub(super) const BACKEND_DEFAULT: c_int = 0;
pub(super) const BACKEND_GPU_HYBRID: c_int = 2;
pub(super) const BACKEND_HARDWARE: c_int = 3;
macro_rules! functions {
    ($($name:ident: fn($($arg:ty),*);)*) => {
        /// The loaded library and the functions cuimg calls.
        #[allow(non_snake_case)]
        pub(super) struct Lib {
            $(pub(super) $name: unsafe extern "C" fn($($arg),*) -> Status,)*
            pub(super) path: PathBuf,
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

pub(super) fn library() -> Result<&'static Lib> {
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

pub(super) fn check(what: &str, status: Status) -> Result<()> {
    if status == SUCCESS { Ok(()) } else { Err(Error::Nvjpeg { what: what.into(), status }) }
}
