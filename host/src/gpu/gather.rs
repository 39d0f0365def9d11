//! Gather on the GPU, with the bounds check done on the device.

use bytemuck::Pod;
use cudarc::driver::{CudaSlice, DevicePtrMut};

use super::context::Gpu;
use super::launch::{launch, linear};
use super::memory::DeviceBuffer;
use super::stream::Stream;
use crate::error::{Error, Result};
use crate::validate;

/// The pending result of a [`Stream::gather`]: call [`GatherCheck::check`] to wait for the
/// kernel and learn whether every index was in range. It borrows its stream, so it stays on
/// the stream's thread:
///
/// ```compile_fail
/// fn to_thread<T: Send>(_: T) {}
/// # let (s, src, idx, mut out): (cuimg::Stream, cuimg::DeviceBuffer<u8>, cuimg::DeviceBuffer<u32>, cuimg::DeviceBuffer<u8>) = unimplemented!();
/// to_thread(s.gather(&src, &idx, &mut out).unwrap());
/// ```
#[must_use = "the gather's index check is only read by check()"]
pub struct GatherCheck<'a> {
    stream: &'a Stream,
    flag: CudaSlice<u64>,
    idx: &'a DeviceBuffer<u32>,
    src_len: u64,
}

impl std::fmt::Debug for GatherCheck<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GatherCheck(source of {} elements)", self.src_len)
    }
}

impl GatherCheck<'_> {
    /// Waits for the gather; `Err(IndexOutOfRange)` names the first out-of-range position.
    /// Out-of-range positions were never read, and their outputs are zero.
    pub fn check(self) -> Result<()> {
        let first = self.stream.raw.clone_dtoh(&self.flag)?[0];
        if first == u64::MAX {
            return Ok(());
        }
        let mut index = [0u32];
        let at = first as usize * 4;
        let idx = self.idx.buf.read(&self.stream.raw)?;
        self.stream.raw.memcpy_dtoh(&idx.slice().slice(at..at + 4), bytemuck::cast_slice_mut::<u32, u8>(&mut index))?;
        Err(Error::IndexOutOfRange { position: first, index: index[0], len: self.src_len })
    }
}

impl Stream {
    /// `out[i] = src[idx[i]]` for any `Pod` element type; `out` has `idx.len()` elements.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// let stream = gpu.stream()?;
    /// let src = stream.upload_slice(&[1.0f32, 2.0, 3.0])?;
    /// let idx = stream.upload_slice(&[2u32, 2, 0, 7])?;
    /// let mut out = stream.alloc_slice::<f32>(4)?;
    /// let err = stream.gather(&src, &idx, &mut out)?.check().unwrap_err();
    /// assert!(matches!(err, cuimg::Error::IndexOutOfRange { position: 3, index: 7, len: 3 }));
    /// # Ok(()) }
    /// ```
    pub fn gather<'a, T: Pod>(
        &'a self,
        src: &DeviceBuffer<T>,
        idx: &'a DeviceBuffer<u32>,
        out: &mut DeviceBuffer<T>,
    ) -> Result<GatherCheck<'a>> {
        validate::gather_source(src.len())?;
        if out.len() != idx.len() {
            return Err(Error::WrongLength {
                what: "gather output (one element per index)".into(),
                expected: idx.len(),
                actual: out.len(),
            });
        }
        for (what, ctx) in [
            ("the gather source", src.buf.context()),
            ("the gather indices", idx.buf.context()),
            ("the gather output", out.buf.context()),
        ] {
            self.check_context(what, ctx)?;
        }
        let mut flag = self.raw.clone_htod(&[u64::MAX])?;
        let check = |flag| GatherCheck { stream: self, flag, idx, src_len: src.len() as u64 };
        if idx.is_empty() {
            return Ok(check(flag));
        }
        let k = &self.gpu.inner.kernels;
        let (read_src, read_idx) = (src.buf.read(&self.raw)?, idx.buf.read(&self.raw)?);
        let mut write_out = out.buf.write(&self.raw)?;
        let (s, i, o) = (read_src.ptr(), read_idx.ptr(), write_out.ptr());
        // The flag lives and dies on this stream alone: its order is the stream's.
        let (bad, _flag) = flag.device_ptr_mut(&self.raw);
        let (src_len, n) = (src.len() as u64, idx.len() as u64);
        let size = std::mem::size_of::<T>();
        let vector = match size {
            1 => Some(&k.gather_b1),
            2 => Some(&k.gather_b2),
            4 => Some(&k.gather_b4),
            8 => Some(&k.gather_b8),
            16 => Some(&k.gather_b16),
            _ => None,
        };
        if let Some(func) = vector {
            let cfg = linear(self, func, n / 4, 0)?;
            // SAFETY: `s` holds src_len elements of `size` bytes, `i` n u32 and `o` n
            // elements; all are separate allocations (256-byte aligned, so the 16-byte index
            // loads and 4-element stores are aligned); `bad` is one u64.
            unsafe { launch!(self, func, cfg; s, src_len, i, n, o, bad) }?;
        } else {
            let func = &k.gather_bytes;
            let elem = size as u64;
            let cfg = linear(self, func, n, 0)?;
            // SAFETY: as above, with elements of `elem` bytes and no alignment needed.
            unsafe { launch!(self, func, cfg; s, src_len, i, n, o, elem, bad) }?;
        }
        drop(_flag);
        Ok(check(flag))
    }
}

impl Gpu {
    /// Blocking gather: `out[i] = src[idx[i]]`.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let Some(gpu) = cuimg::Gpu::new().ok() else { return Ok(()) };
    /// let out = gpu.gather(&[10u16, 20, 30], &[1, 1, 2])?;
    /// assert_eq!(out, vec![20, 20, 30]);
    /// # Ok(()) }
    /// ```
    pub fn gather<T: Pod>(&self, src: &[T], idx: &[u32]) -> Result<Vec<T>> {
        validate::gather_source(src.len())?;
        let s = self.blocking_stream();
        let d_src = s.upload_slice(src)?;
        let d_idx = s.upload_slice(idx)?;
        let mut d_out = s.alloc_slice::<T>(idx.len())?;
        s.gather(&d_src, &d_idx, &mut d_out)?.check()?;
        s.download_slice(&d_out)
    }
}
