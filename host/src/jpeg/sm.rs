//! The decoder on the SMs: nvJPEG's decoupled decoder, Huffman data decoded on the GPU.

use super::states_exclusive;
use super::sys::*;
use crate::error::Result;

/// nvJPEG's decoupled decoder with Huffman decoding on the GPU (`NVJPEG_BACKEND_GPU_HYBRID`):
/// the CPU only parses the file. Its own state, buffers, parameters and parsed stream, all
/// used by one call at a time (under the codec's lock).
pub(super) struct SmDecoder {
    pub(super) decoder: State,
    pub(super) state: State,
    pub(super) pinned: State,
    pub(super) device: State,
    pub(super) params: State,
    pub(super) parsed: State,
}

impl SmDecoder {
    pub(super) fn new(lib: &Lib, handle: Handle) -> Result<SmDecoder> {
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
    pub(super) fn empty() -> SmDecoder {
        let null = std::ptr::null_mut();
        SmDecoder { decoder: null, state: null, pinned: null, device: null, params: null, parsed: null }
    }

    /// Destroys what was made (the caller holds the states lock exclusively, or is `new`).
    pub(super) fn destroy(&mut self, lib: &Lib) {
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
