//! The decoder on the SMs: nvJPEG's decoupled decoder, Huffman data decoded on the GPU.

use super::result;
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

/// One of `result`'s destroy functions.
type Destroy = unsafe fn(State) -> Result<()>;

impl SmDecoder {
    pub(super) fn new(handle: Handle) -> Result<SmDecoder> {
        let _exclusive = states_exclusive();
        let mut d = SmDecoder::empty();
        // SAFETY: a live handle; each call makes one object of `d` from it and the objects
        // made before; what was made before a failure is destroyed by `destroy`, which skips
        // the null ones.
        let made = (|| unsafe {
            d.decoder = result::decoder_create(handle, BACKEND_GPU_HYBRID)?;
            d.state = result::decoder_state_create(handle, d.decoder)?;
            d.pinned = result::buffer_pinned_create(handle)?;
            d.device = result::buffer_device_create(handle)?;
            result::state_attach_pinned_buffer(d.state, d.pinned)?;
            result::state_attach_device_buffer(d.state, d.device)?;
            d.params = result::decode_params_create(handle)?;
            result::decode_params_set_output_format(d.params, OUTPUT_RGBI)?;
            d.parsed = result::jpeg_stream_create(handle)?;
            Ok(())
        })();
        match made {
            Ok(()) => Ok(d),
            Err(e) => {
                d.destroy();
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
    pub(super) fn destroy(&mut self) {
        // The state goes before the buffers attached to it, the decoder last.
        let made: [(State, Destroy); 6] = [
            (self.parsed, result::jpeg_stream_destroy),
            (self.params, result::decode_params_destroy),
            (self.state, result::jpeg_state_destroy),
            (self.device, result::buffer_device_destroy),
            (self.pinned, result::buffer_pinned_destroy),
            (self.decoder, result::decoder_destroy),
        ];
        for (object, destroy) in made.into_iter().filter(|(o, _)| !o.is_null()) {
            // SAFETY: each object was made by `new` with its matching destroy function, is
            // destroyed once (the fields are nulled below), and no call uses it any more.
            let _ = unsafe { destroy(object) };
        }
        *self = SmDecoder::empty();
    }
}
