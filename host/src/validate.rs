//! Input checks shared by every operation's GPU API and CPU reference, so both reject the
//! same inputs with the same errors, before any work (or launch) starts. Checks of one
//! operation's own parameters live in its folder (`ops/<op>/mod.rs`).

use crate::error::{Error, Result};

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
