//! Gather: `out[i] = src[idx[i]]` for any `bytemuck::Pod` element, with the bounds check on
//! the device (the first bad position is reported; nothing out of range is read).

pub(crate) mod cpu;
mod gpu;

pub use gpu::GatherCheck;

use crate::error::{Error, Result};

/// Gather sources are indexed by u32.
pub(crate) fn check_source(len: usize) -> Result<()> {
    if len as u64 > u32::MAX as u64 + 1 {
        return Err(Error::TooLarge {
            what: "a gather source (u32 indices)".into(),
            size: len as u64,
            limit: u32::MAX as u64 + 1,
        });
    }
    Ok(())
}

/// The first index `>= len`, as the error the GPU path reports too.
pub(crate) fn first_bad_index(idx: &[u32], len: usize) -> Result<()> {
    match idx.iter().position(|&j| j as u64 >= len as u64) {
        Some(position) => {
            Err(Error::IndexOutOfRange { position: position as u64, index: idx[position], len: len as u64 })
        }
        None => Ok(()),
    }
}
