//! Checks every GPU operation makes before queuing anything.

use super::memory::{DeviceView, DeviceViewMut};
use super::stream::Stream;
use crate::error::Result;
use crate::image::check_same_size;
use crate::pixel::Pixel;
use crate::validate;

impl Stream {
    /// A source and destination of the same, non-zero size, both on this stream's GPU.
    pub(crate) fn check_pair<P: Pixel, Q: Pixel>(
        &self,
        op: &str,
        src: &DeviceView<'_, P>,
        dst: &DeviceViewMut<'_, Q>,
    ) -> Result<()> {
        validate::non_empty(src.width(), src.height())?;
        check_same_size(&format!("the {op} destination"), dst.dimensions(), src.dimensions())?;
        self.check_context(&format!("the {op} source"), src.img.buf.context())?;
        self.check_context(&format!("the {op} destination"), dst.img.buf.context())
    }
}
