//! The middle tier, as cudarc's `result`: each nvJPEG function cuimg calls, as one Rust
//! function that makes the one `unsafe` call and turns its status into a [`Result`], with
//! the contract the caller keeps written under `# Safety`. Out-pointers become return
//! values; slices replace pointer-and-length pairs.
//!
//! Common to every contract: nvJPEG is loaded (a handle exists only after
//! [`super::sys::library`] succeeded), every handle, state, decoder, buffer, parameter
//! set and parsed stream passed in was made by the matching `*_create` here and not yet
//! destroyed, and one thread at a time uses a given state (nvJPEG's rule; the handle itself
//! may be shared), with the GPU's context current on the calling thread. `stream` is a
//! stream of that context.

use std::ffi::{c_int, c_uchar, c_uint};

use super::sys::{CuStream, Handle, NvImage, State, Status, check, library};
use crate::error::Result;

/// The loaded table (the contract above: loaded before any handle exists).
fn lib() -> Result<&'static super::sys::Lib> {
    library()
}

/// Calls `$f` of the table and checks its status, named after it.
macro_rules! call {
    ($f:ident($($arg:expr),* $(,)?)) => {{
        let lib = lib()?;
        // SAFETY: the caller's contract (see the function's `# Safety`).
        let status: Status = unsafe { (lib.$f)($($arg),*) };
        check(stringify!($f), status)
    }};
}

/// A null pointer out-parameter's starting value.
fn null() -> State {
    std::ptr::null_mut()
}

/// `nvjpegCreateEx` with nvJPEG's own allocators: a library handle on `backend`.
pub(super) fn create(backend: c_int, flags: c_uint) -> Result<Handle> {
    let mut handle: Handle = null();
    let null_allocator = std::ptr::null_mut();
    // (Safe: the only pointer is our out-parameter; null allocators select nvJPEG's.)
    call!(nvjpegCreateEx(backend, null_allocator, null_allocator, flags, &mut handle))?;
    Ok(handle)
}

/// `nvjpegDestroy`.
///
/// # Safety
/// Every state made on `handle` is destroyed, and `handle` is not used again.
pub(super) unsafe fn destroy(handle: Handle) -> Result<()> {
    call!(nvjpegDestroy(handle))
}

/// `nvjpegGetHardwareDecoderInfo`: the hardware decoder's engines and cores per engine.
///
/// # Safety
/// `handle` is live.
pub(super) unsafe fn hardware_decoder_info(handle: Handle) -> Result<(u32, u32)> {
    let (mut engines, mut cores): (c_uint, c_uint) = (0, 0);
    call!(nvjpegGetHardwareDecoderInfo(handle, &mut engines, &mut cores))?;
    Ok((engines, cores))
}

/// `nvjpegGetImageInfo`: components, chroma subsampling, and each component's width and
/// height.
///
/// # Safety
/// `handle` is live.
pub(super) unsafe fn image_info(handle: Handle, bytes: &[u8]) -> Result<(c_int, c_int, [c_int; 4], [c_int; 4])> {
    let (mut n, mut css) = (0, 0);
    let (mut w, mut h) = ([0 as c_int; 4], [0 as c_int; 4]);
    call!(nvjpegGetImageInfo(handle, bytes.as_ptr(), bytes.len(), &mut n, &mut css, w.as_mut_ptr(), h.as_mut_ptr()))?;
    Ok((n, css, w, h))
}

/// `nvjpegJpegStateCreate`.
///
/// # Safety
/// `handle` is live; no decode call runs in the process meanwhile (cuimg's rule, see
/// `STATES` in the safe tier).
pub(super) unsafe fn jpeg_state_create(handle: Handle) -> Result<State> {
    let mut state = null();
    call!(nvjpegJpegStateCreate(handle, &mut state))?;
    Ok(state)
}

/// `nvjpegJpegStateDestroy`.
///
/// # Safety
/// `state` is not used again; no call using it is running.
pub(super) unsafe fn jpeg_state_destroy(state: State) -> Result<()> {
    call!(nvjpegJpegStateDestroy(state))
}

/// `nvjpegDecode`: one file into `out`, on `stream`.
///
/// # Safety
/// `out` describes device memory of the file's decoded size in `format` (each plane
/// `pitch` bytes by the image's rows), which nothing else reads or writes until `stream`
/// has done this work. `bytes` is read during the call only.
pub(super) unsafe fn decode(
    handle: Handle,
    state: State,
    bytes: &[u8],
    format: c_int,
    out: &mut NvImage,
    stream: CuStream,
) -> Result<()> {
    call!(nvjpegDecode(handle, state, bytes.as_ptr(), bytes.len(), format, out, stream))
}

/// `nvjpegDecodeBatchedPreAllocate`: sizes a batched state's buffers for `batch` images of
/// up to `width` x `height` in chroma subsampling `css`. Only a hint: a failure is returned,
/// and the decode then sizes its buffers itself.
///
/// # Safety
/// `state` is a batched state, used by no other call meanwhile.
pub(super) unsafe fn decode_batched_pre_allocate(
    handle: Handle,
    state: State,
    batch: c_int,
    width: c_int,
    height: c_int,
    css: c_int,
    format: c_int,
) -> Result<()> {
    call!(nvjpegDecodeBatchedPreAllocate(handle, state, batch, width, height, css, format))
}

/// `nvjpegDecodeBatchedInitialize` then `nvjpegDecodeBatched`: `files` into `outs`, pair by
/// pair, on `stream`.
///
/// # Safety
/// Each of `files` stays readable and unchanged until `stream` has done this work (nvJPEG
/// copies them asynchronously; page-locked memory, see the safe tier); `outs` describe device
/// memory as [`decode`]'s `out`, one per file, of that file's decoded size.
pub(super) unsafe fn decode_batched(
    handle: Handle,
    state: State,
    files: &[&[u8]],
    outs: &mut [NvImage],
    format: c_int,
    stream: CuStream,
) -> Result<()> {
    assert_eq!(files.len(), outs.len(), "one output per file");
    let data: Vec<*const c_uchar> = files.iter().map(|f| f.as_ptr()).collect();
    let lengths: Vec<usize> = files.iter().map(|f| f.len()).collect();
    call!(nvjpegDecodeBatchedInitialize(handle, state, files.len() as c_int, 1, format))?;
    call!(nvjpegDecodeBatched(handle, state, data.as_ptr(), lengths.as_ptr(), outs.as_mut_ptr(), stream))
}

/// Makes one of nvJPEG's objects through `nvjpeg<what>Create`-style functions that take the
/// handle, an argument and an out-pointer.
macro_rules! creator {
    ($(#[$doc:meta])* $name:ident = $f:ident($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `handle` (and any object passed) is live.
        pub(super) unsafe fn $name(handle: Handle $(, $arg: $ty)*) -> Result<State> {
            let mut made = null();
            call!($f(handle $(, $arg)*, &mut made))?;
            Ok(made)
        }
    };
}

/// Destroys one of nvJPEG's objects.
macro_rules! destroyer {
    ($(#[$doc:meta])* $name:ident = $f:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `object` is of the function's kind, not used again, and no call using it runs;
        /// a state goes before the buffers attached to it.
        pub(super) unsafe fn $name(object: State) -> Result<()> {
            call!($f(object))
        }
    };
}

creator!(
    /// `nvjpegDecoderCreate`: a decoupled decoder on `backend`.
    decoder_create = nvjpegDecoderCreate(backend: c_int)
);
creator!(
    /// `nvjpegDecoderStateCreate`: a state for `decoder`.
    decoder_state_create = nvjpegDecoderStateCreate(decoder: State)
);
creator!(
    /// `nvjpegDecodeParamsCreate`.
    decode_params_create = nvjpegDecodeParamsCreate()
);
creator!(
    /// `nvjpegJpegStreamCreate`: a parsed-stream object.
    jpeg_stream_create = nvjpegJpegStreamCreate()
);
destroyer!(
    /// `nvjpegDecoderDestroy`.
    decoder_destroy = nvjpegDecoderDestroy
);
destroyer!(
    /// `nvjpegDecodeParamsDestroy`.
    decode_params_destroy = nvjpegDecodeParamsDestroy
);
destroyer!(
    /// `nvjpegJpegStreamDestroy`.
    jpeg_stream_destroy = nvjpegJpegStreamDestroy
);
destroyer!(
    /// `nvjpegBufferPinnedDestroy`.
    buffer_pinned_destroy = nvjpegBufferPinnedDestroy
);
destroyer!(
    /// `nvjpegBufferDeviceDestroy`.
    buffer_device_destroy = nvjpegBufferDeviceDestroy
);
destroyer!(
    /// `nvjpegEncoderStateDestroy`.
    encoder_state_destroy = nvjpegEncoderStateDestroy
);
destroyer!(
    /// `nvjpegEncoderParamsDestroy`.
    encoder_params_destroy = nvjpegEncoderParamsDestroy
);

/// `nvjpegBufferPinnedCreate` with nvJPEG's own allocator.
///
/// # Safety
/// `handle` is live.
pub(super) unsafe fn buffer_pinned_create(handle: Handle) -> Result<State> {
    let mut made = null();
    call!(nvjpegBufferPinnedCreate(handle, std::ptr::null_mut(), &mut made))?;
    Ok(made)
}

/// `nvjpegBufferDeviceCreate` with nvJPEG's own allocator.
///
/// # Safety
/// `handle` is live.
pub(super) unsafe fn buffer_device_create(handle: Handle) -> Result<State> {
    let mut made = null();
    call!(nvjpegBufferDeviceCreate(handle, std::ptr::null_mut(), &mut made))?;
    Ok(made)
}

/// `nvjpegStateAttachPinnedBuffer`.
///
/// # Safety
/// Both are live and unused by other calls; the buffer outlives its use by the state.
pub(super) unsafe fn state_attach_pinned_buffer(state: State, buffer: State) -> Result<()> {
    call!(nvjpegStateAttachPinnedBuffer(state, buffer))
}

/// `nvjpegStateAttachDeviceBuffer`.
///
/// # Safety
/// As [`state_attach_pinned_buffer`].
pub(super) unsafe fn state_attach_device_buffer(state: State, buffer: State) -> Result<()> {
    call!(nvjpegStateAttachDeviceBuffer(state, buffer))
}

/// `nvjpegDecodeParamsSetOutputFormat`.
///
/// # Safety
/// `params` is live and unused by other calls.
pub(super) unsafe fn decode_params_set_output_format(params: State, format: c_int) -> Result<()> {
    call!(nvjpegDecodeParamsSetOutputFormat(params, format))
}

/// `nvjpegJpegStreamParse` without keeping a copy of `bytes` (`save_metadata` and
/// `save_stream` 0).
///
/// # Safety
/// `parsed` is live and unused by other calls; `bytes` stays readable and unchanged until
/// the last phase of the decode that uses `parsed` has run on its stream.
pub(super) unsafe fn jpeg_stream_parse(handle: Handle, bytes: &[u8], parsed: State) -> Result<()> {
    call!(nvjpegJpegStreamParse(handle, bytes.as_ptr(), bytes.len(), 0, 0, parsed))
}

/// The three phases of a decoupled decode (`nvjpegDecodeJpegHost`,
/// `nvjpegDecodeJpegTransferToDevice`, `nvjpegDecodeJpegDevice`) of the file parsed into
/// `parsed`, into `out`, on `stream`.
///
/// # Safety
/// The objects are live, made on `handle` for `decoder`, and used by no other call; `out`
/// describes device memory as [`decode`]'s; the parsed file's bytes stay as
/// [`jpeg_stream_parse`] asks.
pub(super) unsafe fn decode_jpeg_phases(
    handle: Handle,
    (decoder, state, params, parsed): (State, State, State, State),
    out: &mut NvImage,
    stream: CuStream,
) -> Result<()> {
    call!(nvjpegDecodeJpegHost(handle, decoder, state, params, parsed))?;
    call!(nvjpegDecodeJpegTransferToDevice(handle, decoder, state, parsed, stream))?;
    call!(nvjpegDecodeJpegDevice(handle, decoder, state, out, stream))
}

/// `nvjpegEncoderStateCreate` and `nvjpegEncoderParamsCreate`: an encoder's state and
/// parameters.
///
/// # Safety
/// `handle` is live.
pub(super) unsafe fn encoder_create(handle: Handle, stream: CuStream) -> Result<(State, State)> {
    let (mut state, mut params) = (null(), null());
    call!(nvjpegEncoderStateCreate(handle, &mut state, stream))?;
    if let Err(e) = call!(nvjpegEncoderParamsCreate(handle, &mut params, stream)) {
        // SAFETY: the state made above, used by nothing.
        let _ = unsafe { encoder_state_destroy(state) };
        return Err(e);
    }
    Ok((state, params))
}

/// `nvjpegEncoderParamsSetQuality` and `nvjpegEncoderParamsSetSamplingFactors`.
///
/// # Safety
/// `params` is live and unused by other calls.
pub(super) unsafe fn encoder_params_set(params: State, quality: c_int, css: c_int, stream: CuStream) -> Result<()> {
    call!(nvjpegEncoderParamsSetQuality(params, quality, stream))?;
    call!(nvjpegEncoderParamsSetSamplingFactors(params, css, stream))
}

/// `nvjpegEncodeImage` (interleaved RGB, `input` is its input format) or, with `yuv`,
/// `nvjpegEncodeYUV` (planes in chroma subsampling `css`): `image` into the encoder state's
/// bitstream, on `stream`.
///
/// # Safety
/// The encoder's objects are live and unused by other calls; `image` describes device
/// memory holding `width` x `height` pixels, unchanged until `stream` has done this work.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn encode(
    handle: Handle,
    (state, params): (State, State),
    image: &NvImage,
    yuv: bool,
    format: c_int,
    (width, height): (c_int, c_int),
    stream: CuStream,
) -> Result<()> {
    if yuv {
        call!(nvjpegEncodeYUV(handle, state, params, image, format, width, height, stream))
    } else {
        call!(nvjpegEncodeImage(handle, state, params, image, format, width, height, stream))
    }
}

/// `nvjpegEncodeRetrieveBitstream` for the length of the encoded file, after [`encode`] on
/// `stream`.
///
/// # Safety
/// The encoder state is live and unused by other calls.
pub(super) unsafe fn encoded_length(handle: Handle, state: State, stream: CuStream) -> Result<usize> {
    let mut len = 0usize;
    call!(nvjpegEncodeRetrieveBitstream(handle, state, std::ptr::null_mut(), &mut len, stream))?;
    Ok(len)
}

/// `nvjpegEncodeRetrieveBitstream` into `to`, at most its length; returns the length.
///
/// # Safety
/// As [`encoded_length`]; `to` is page-locked memory that nothing reads until `stream` has
/// done this copy (nvJPEG copies asynchronously on it).
pub(super) unsafe fn retrieve_bitstream(
    handle: Handle,
    state: State,
    to: &mut [u8],
    stream: CuStream,
) -> Result<usize> {
    let mut len = to.len();
    call!(nvjpegEncodeRetrieveBitstream(handle, state, to.as_mut_ptr(), &mut len, stream))?;
    Ok(len)
}
