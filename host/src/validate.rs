//! Input checks shared by the GPU API and the CPU reference, so both reject the same inputs
//! with the same errors, before any work (or launch) starts.

use crate::error::{Error, Result};
use crate::ops::lut::Lut;

/// `EmptyImage` when either dimension is zero.
pub(crate) fn non_empty(width: u32, height: u32) -> Result<()> {
    if width == 0 || height == 0 { Err(Error::EmptyImage { width, height }) } else { Ok(()) }
}

/// Histogram bins are u32: a channel may hold at most `u32::MAX` pixels.
pub(crate) fn countable(width: u32, height: u32) -> Result<()> {
    let n = width as u64 * height as u64;
    if n > u32::MAX as u64 {
        return Err(Error::TooLarge {
            what: format!("a {width}x{height} image for a histogram"),
            size: n,
            limit: u32::MAX as u64,
        });
    }
    Ok(())
}

/// One table per channel.
pub(crate) fn luts(luts: &[Lut], channels: usize) -> Result<()> {
    if luts.len() != channels {
        return Err(Error::WrongLength {
            what: "lookup tables (one per channel)".into(),
            expected: channels,
            actual: luts.len(),
        });
    }
    Ok(())
}

/// Gather sources are indexed by u32.
pub(crate) fn gather_source(len: usize) -> Result<()> {
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
