//! The one error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong in `cuimg`, each with a message that says what to do.
///
/// Bad inputs are caught on the host before any launch, so an `Err` never leaves the GPU
/// context unusable: the next call works.
///
/// ```
/// use cuimg::{Error, Gray8, Image};
/// let img = Image::<Gray8>::new(0, 5);
/// let err = cuimg::cpu::equalize(&img.view()).unwrap_err();
/// assert!(matches!(err, Error::EmptyImage { width: 0, height: 5 }));
/// assert_eq!(err.to_string(), "empty image (0x5): the operation needs at least one pixel");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    #[error("no CUDA driver: {0}; install the NVIDIA driver, or run on all CPU cores ({CPU_PATH})")]
    NoDriver(String),

    /// The driver loaded but offers no usable GPU (or not the one asked for).
    #[error("no CUDA device: {0}; run on all CPU cores instead ({CPU_PATH})")]
    NoDevice(String),

    /// The embedded PTX could not be loaded on this GPU (too old a driver or GPU).
    #[error(
        "the embedded PTX (ISA 7.0, sm_75) could not be loaded on {device} (compute capability {major}.{minor}): {source}; \
         cuimg needs a Turing or newer GPU and a driver for CUDA 11.0 or newer"
    )]
    PtxLoad {
        device: String,
        major: i32,
        minor: i32,
        #[source]
        source: Source,
    },

    /// An operation got an image with no pixels.
    #[error("empty image ({width}x{height}): the operation needs at least one pixel")]
    EmptyImage { width: u32, height: u32 },

    /// A batch with no images.
    #[error("empty batch: a batch needs at least one image")]
    EmptyBatch,

    /// A byte buffer is too short for the image it should hold.
    #[error("buffer of {actual} bytes is too small for {what}: it needs {needed} bytes")]
    BufferTooSmall { what: String, needed: usize, actual: usize },

    /// A buffer's length differs from the one the operation needs.
    #[error("wrong length for {what}: expected {expected}, got {actual}")]
    WrongLength { what: String, expected: usize, actual: usize },

    /// The row pitch is smaller than one row of pixels.
    #[error("row pitch of {pitch} bytes is smaller than a row of {row_bytes} bytes")]
    PitchTooSmall { pitch: usize, row_bytes: usize },

    /// Two images that must match in size do not.
    #[error(
        "dimension mismatch: {what} is {actual_width}x{actual_height}, expected {expected_width}x{expected_height}"
    )]
    DimensionMismatch { what: String, expected_width: u32, expected_height: u32, actual_width: u32, actual_height: u32 },

    /// A region of interest that is not inside its image.
    #[error("region x={x} y={y} {width}x{height} lies outside the {image_width}x{image_height} image")]
    RoiOutOfBounds { x: u32, y: u32, width: u32, height: u32, image_width: u32, image_height: u32 },

    /// A gather index `>= len`; `position` is the first such position in the index array.
    #[error("gather index {index} at position {position} is out of range for a source of {len} elements")]
    IndexOutOfRange { position: u64, index: u32, len: u64 },

    /// An image or buffer too large for the kernels' counters or the address space.
    #[error("{what} is too large: {size} exceeds the limit of {limit}")]
    TooLarge { what: String, size: u64, limit: u64 },

    /// The host could not allocate memory for an image.
    #[error("could not allocate {bytes} bytes of host memory for an image")]
    OutOfHostMemory { bytes: u64 },

    /// Grayscale weights that are not finite or beyond +-16.
    #[error("invalid grayscale weights ({r}, {g}, {b}): each must be finite and within [-16, 16]")]
    InvalidWeights { r: f32, g: f32, b: f32 },

    /// A parameter outside what the operation takes (a CLAHE clip limit that is not above 0,
    /// a tile grid with no tiles or more tiles than pixels).
    #[error("invalid {what}: {why}")]
    InvalidParameter { what: String, why: String },

    /// An image or buffer that belongs to another GPU context was passed in.
    #[error("{0} belongs to a different GPU context than the stream it was used on")]
    WrongContext(String),

    /// An image whose samples are not 8-bit (16-bit or float): cuimg's formats are 8-bit,
    /// and it converts only when asked.
    #[error(
        "unsupported format: {0}; cuimg works on 8-bit samples: convert with cuimg::io::convert_to_8bit \
         (which rounds each sample to 8 bits)"
    )]
    UnsupportedFormat(String),

    /// A file or folder could not be read or written (missing, unreadable, no space): the
    /// path and the system's reason.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A file over one of the [`Limits`](crate::Limits) it was read or decoded with, found
    /// from its header and length before anything the size of its image was allocated.
    #[error("{path}: {what} is {size}, over the limit of {limit}; refused before decoding (see cuimg::Limits)")]
    Limit { path: PathBuf, what: String, size: u64, limit: u64 },

    /// A path that is not a regular file (a folder, a FIFO, a device, a socket): refused
    /// before it is opened for reading, since reading one may never end.
    #[error("{path} is not a regular file but {kind}")]
    NotARegularFile { path: PathBuf, kind: String },

    /// An I/O error from code around cuimg's, converted by `?` (`From<std::io::Error>`): no
    /// path is known. cuimg's own file functions give [`Error::Io`], with the path.
    #[error("I/O error: {0}")]
    IoError(#[from] std::io::Error),

    /// A file could not be decoded as an image.
    #[error("could not decode {path}: {source}")]
    Decode {
        path: PathBuf,
        #[source]
        source: Source,
    },

    /// An image could not be encoded or written.
    #[error("could not encode {path}: {source}")]
    Encode {
        path: PathBuf,
        #[source]
        source: Source,
    },

    /// nvJPEG could not be loaded (not installed, or not where cuimg looks): JPEG files
    /// then decode and encode on the CPU.
    #[error(
        "no nvJPEG: {0}; install the CUDA toolkit's libnvjpeg (or the nvidia-nvjpeg wheel), or set CUIMG_NVJPEG to its file"
    )]
    NoNvjpeg(String),

    /// nvJPEG refused a call (a corrupt or unsupported JPEG, for one).
    #[error("nvJPEG: {what} failed (status {status})")]
    Nvjpeg { what: String, status: i32 },

    /// The GPU ran out of memory. Nothing was half-written: the call that needed the memory
    /// returned this before queuing its work, and the stream and the GPU stay usable once
    /// memory is freed.
    #[error("out of GPU memory: {0}; free device images (or use smaller batches) and try again")]
    OutOfDeviceMemory(#[source] Source),

    /// A fault on the device (an illegal address, a trap, an uncorrectable ECC error) has
    /// left CUDA unusable in this process. The driver documents that the process is then "in
    /// an inconsistent state and any further CUDA work will return the same error. To
    /// continue using CUDA, the process must be terminated and relaunched", and it refuses
    /// even a new context (seen on an H100, driver 580: tests/tests/fault.rs). cuimg returns this
    /// error from every later call, [`Gpu::new`](crate::Gpu::new) included, instead of
    /// panicking or hanging, and dropping its images, streams and GPUs stays safe: finish
    /// or save what the CPU holds, then restart the process (a worker process per GPU job
    /// keeps the others going).
    #[error(
        "the GPU context is lost after a fault on the device ({0}): every later CUDA call in this process fails; \
         restart the process to use the GPU again"
    )]
    ContextLost(#[source] Source),

    /// Any other CUDA driver error.
    #[error("CUDA driver error: {0}")]
    Cuda(#[source] Source),
}

/// Another crate's error (the CUDA driver binding's, the image codecs'), held opaquely so
/// that a major release of those crates leaves cuimg's public types as they are. Its message
/// is shown, and [`std::error::Error::source`] returns it, for `downcast_ref` by those who
/// depend on that crate themselves.
///
/// ```
/// let err = cuimg::io::decode_rgb(b"not an image", "x.png".as_ref()).unwrap_err();
/// let inner = std::error::Error::source(&err).expect("the codec's own error");
/// assert!(inner.downcast_ref::<image::ImageError>().is_some());
/// ```
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Error {
        if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            Error::OutOfDeviceMemory(Box::new(e))
        } else if is_sticky(&e) {
            Error::ContextLost(Box::new(e))
        } else {
            Error::Cuda(Box::new(e))
        }
    }
}

/// The errors the driver documents as leaving the context unusable (it must be destroyed),
/// and the one it returns once that has happened.
pub(crate) fn is_sticky(e: &cudarc::driver::DriverError) -> bool {
    use cudarc::driver::sys::CUresult as R;
    matches!(
        e.0,
        R::CUDA_ERROR_ILLEGAL_ADDRESS
            | R::CUDA_ERROR_LAUNCH_FAILED
            | R::CUDA_ERROR_LAUNCH_TIMEOUT
            | R::CUDA_ERROR_HARDWARE_STACK_ERROR
            | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | R::CUDA_ERROR_MISALIGNED_ADDRESS
            | R::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | R::CUDA_ERROR_INVALID_PC
            | R::CUDA_ERROR_ECC_UNCORRECTABLE
            | R::CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

/// What the "no GPU" errors say to use instead: the same calls on all cores.
const CPU_PATH: &str = "cuimg::Device::best() picks the GPU or the CPU by itself; cuimg::par has the same \
                        functions on all cores; cuimg::cpu is the serial reference they match";

impl Error {
    /// True when the error means "no GPU here" (no driver or no device): the cue to fall
    /// back to all CPU cores: [`crate::Device::best`] does it by itself, [`crate::par`] has
    /// the same functions ([`crate::cpu`] is their serial reference, the oracle).
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::NoDriver(_) | Error::NoDevice(_))
    }

    /// True when the GPU's context is lost ([`Error::ContextLost`]): nothing on the GPU can
    /// work again in this process.
    pub fn is_context_lost(&self) -> bool {
        matches!(self, Error::ContextLost(_))
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
