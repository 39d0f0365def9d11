//! Gather on the GPU, with the bounds check done on the device.

use bytemuck::Pod;
use cuimg_abi::Kernel;
use cuimg_abi::gather::{Gather, GatherB1, GatherB2, GatherB4, GatherB8, GatherB16, GatherBytes, GatherBytesKernel};

use crate::error::{Error, Result};
use crate::runtime::{DeviceBuffer, Gpu, Stream, Tracked};

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
    flag: Tracked<u64>,
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
        // The kernel leaves `!first` for the first bad position, 0 when there is none.
        let flag = self.stream.raw.clone_dtoh(self.flag.read(&self.stream.raw)?.slice())?[0];
        if flag == 0 {
            return Ok(());
        }
        let first = !flag;
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
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
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
        super::check_source(src.len())?;
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
        // Zeroed on the stream (an asynchronous memset): no host copy per call.
        let mut flag = self.alloc_tracked::<u64>(1)?;
        if !idx.is_empty() {
            self.queue_gather::<T>(src, idx, out, &mut flag)?;
        }
        Ok(GatherCheck { stream: self, flag, idx, src_len: src.len() as u64 })
    }

    /// [`Stream::gather`] on checked, non-empty operands.
    fn queue_gather<T: Pod>(
        &self,
        src: &DeviceBuffer<T>,
        idx: &DeviceBuffer<u32>,
        out: &mut DeviceBuffer<T>,
        flag: &mut Tracked<u64>,
    ) -> Result<()> {
        let (read_src, read_idx) = (src.buf.read(&self.raw)?, idx.buf.read(&self.raw)?);
        let (mut write_out, mut write_flag) = (out.buf.write(&self.raw)?, flag.write(&self.raw)?);
        let params = Gather {
            src: read_src.ptr(),
            src_len: src.len() as u64,
            idx: read_idx.ptr().cast(),
            n: idx.len() as u64,
            out: write_out.ptr(),
            bad: write_flag.ptr(),
        };
        match std::mem::size_of::<T>() {
            1 => self.gather_vector::<GatherB1>(params),
            2 => self.gather_vector::<GatherB2>(params),
            4 => self.gather_vector::<GatherB4>(params),
            8 => self.gather_vector::<GatherB8>(params),
            16 => self.gather_vector::<GatherB16>(params),
            size => {
                let cfg = self.linear::<GatherBytesKernel>(params.n, 0)?;
                let params = GatherBytes { gather: params, elem_size: size as u64 };
                // SAFETY: `src` holds src_len elements of `elem_size` bytes, `idx` n u32 and
                // `out` n elements; `bad` is one u64; all ordered by the guards above; the
                // kernel needs no alignment.
                unsafe { self.launch::<GatherBytesKernel>(cfg, params) }
            }
        }
    }

    /// One of the vector kernels, whose element width is `size_of::<T>()` (the caller's
    /// match picks it).
    fn gather_vector<K: Kernel<Params = Gather>>(&self, params: Gather) -> Result<()> {
        let cfg = self.linear::<K>(params.n / 4, 0)?;
        // SAFETY: `src` holds src_len elements of the kernel's width, `idx` n u32 and `out` n
        // elements; all are separate allocations (256-byte aligned, so the 16-byte index
        // loads and 4-element stores are aligned); `bad` is one u64.
        unsafe { self.launch::<K>(cfg, params) }
    }
}

impl Gpu {
    /// Blocking gather: `out[i] = src[idx[i]]`.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// let out = gpu.gather(&[10u16, 20, 30], &[1, 1, 2])?;
    /// assert_eq!(out, vec![20, 20, 30]);
    /// # Ok(()) }
    /// ```
    pub fn gather<T: Pod>(&self, src: &[T], idx: &[u32]) -> Result<Vec<T>> {
        super::check_source(src.len())?;
        let s = self.blocking_stream();
        let d_src = s.upload_slice(src)?;
        let d_idx = s.upload_slice(idx)?;
        let mut d_out = s.alloc_slice::<T>(idx.len())?;
        s.gather(&d_src, &d_idx, &mut d_out)?.check()?;
        s.download_slice(&d_out)
    }
}
