//! Several GPUs of one host, and batches spread over them.

use crate::error::{Error, Result};
use crate::runtime::Gpu;

/// Several GPUs of one host, each with its own context and streams.
///
/// ```
/// # fn main() -> Result<(), cuimg::Error> {
/// let pool = match cuimg::GpuPool::all() {
///     Ok(pool) => pool,
///     Err(e) if e.is_no_gpu() => return Ok(()),
///     Err(e) => return Err(e),
/// };
/// println!("{} GPUs: {}", pool.len(), pool.gpus().iter().map(|g| g.name()).collect::<Vec<_>>().join(", "));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct GpuPool {
    pub(super) gpus: Vec<Gpu>,
}

impl GpuPool {
    /// Every GPU the driver sees.
    pub fn all() -> Result<GpuPool> {
        if !crate::driver_available() {
            return Gpu::new().map(|g| GpuPool { gpus: vec![g] });
        }
        let n = cudarc::driver::CudaContext::device_count()
            .map_err(|e| Error::NoDevice(format!("the driver found no usable GPU ({e})")))?;
        GpuPool::with_devices(&(0..n.max(0) as usize).collect::<Vec<_>>())
    }

    /// The GPUs of these ordinals; [`Error::NoDevice`] names one the driver does not see.
    pub fn with_devices(ordinals: &[usize]) -> Result<GpuPool> {
        if ordinals.is_empty() {
            return Err(Error::NoDevice("a GPU pool needs at least one GPU".into()));
        }
        Ok(GpuPool { gpus: ordinals.iter().map(|&o| Gpu::with_device(o)).collect::<Result<_>>()? })
    }

    /// A pool of GPUs already open.
    pub fn from_gpus(gpus: Vec<Gpu>) -> Result<GpuPool> {
        if gpus.is_empty() {
            return Err(Error::NoDevice("a GPU pool needs at least one GPU".into()));
        }
        Ok(GpuPool { gpus })
    }

    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Number of GPUs.
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// Never true: a pool has at least one GPU.
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// Runs `f` on each GPU with a contiguous share of `items` (shares in proportion to
    /// `weight`, e.g. pixels), all GPUs at once, and concatenates the results in order.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let pool = match cuimg::GpuPool::all() { Ok(p) => p, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{GrayWeights, Image, Rgb8};
    /// let images: Vec<_> = (0..10).map(|i| Image::<Rgb8>::filled(64, 32 + i, i as u8)).collect();
    /// let views: Vec<_> = images.iter().map(|i| i.view()).collect();
    /// let gray = pool.split(&views, |v| v.width() as u64 * v.height() as u64, |gpu, share| {
    ///     gpu.grayscale_batch(share, GrayWeights::Bt601)
    /// })?;
    /// assert_eq!(gray.len(), 10);
    /// assert_eq!(gray[9].get(0, 0).0, [9]);
    /// # Ok(()) }
    /// ```
    pub fn split<T: Sync, R: Send>(
        &self,
        items: &[T],
        weight: impl Fn(&T) -> u64,
        f: impl Fn(&Gpu, &[T]) -> Result<Vec<R>> + Sync,
    ) -> Result<Vec<R>> {
        let total: u64 = items.iter().map(&weight).sum::<u64>().max(1);
        let mut shares = Vec::with_capacity(self.gpus.len());
        let (mut start, mut acc) = (0usize, 0u64);
        for g in 0..self.gpus.len() {
            let goal = total * (g as u64 + 1) / self.gpus.len() as u64;
            let mut end = start;
            while end < items.len() && (acc < goal || g + 1 == self.gpus.len()) {
                acc += weight(&items[end]);
                end += 1;
            }
            shares.push(&items[start..end]);
            start = end;
        }
        let results: Vec<Result<Vec<R>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .gpus
                .iter()
                .zip(&shares)
                .filter(|(_, share)| !share.is_empty())
                .map(|(gpu, share)| {
                    let f = &f;
                    scope.spawn(move || f(gpu, share))
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a GPU worker panicked")).collect()
        });
        let mut out = Vec::with_capacity(items.len());
        for r in results {
            out.extend(r?);
        }
        Ok(out)
    }
}
