//! Page-locking memory the caller already holds, so copies from it are direct DMA at the
//! pinned rate instead of going through a staging copy.

use std::marker::PhantomData;
use std::ops::Range;

use cudarc::driver::sys;

use super::context::Gpu;
use crate::error::Result;
use crate::image::Image;
use crate::pixel::Pixel;

/// Images page-locked for one GPU's copies while this guard lives; see [`Gpu::register`].
/// It holds a shared borrow of the images, so they cannot change or go away meanwhile, and
/// its drop waits for the GPU's work before unlocking them.
#[must_use = "the images are page-locked only while the guard lives"]
pub struct Registered<'a> {
    gpu: Gpu,
    ranges: Vec<Range<usize>>,
    _images: PhantomData<&'a ()>,
}

impl std::fmt::Debug for Registered<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Registered({} buffers)", self.ranges.len())
    }
}

impl Registered<'_> {
    /// How many of the images were page-locked (a small image sharing a memory page with one
    /// locked before it stays as it was: it is copied through staging, as any other).
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

impl Gpu {
    /// Page-locks `images` for this GPU until the returned guard drops, so that uploads of
    /// them (by [`Pipeline`](crate::Pipeline), [`Stream::upload`](crate::Stream::upload) and
    /// the batch uploads) are direct DMA at the pinned rate, with no staging copy on the
    /// host. Locking takes time (about what copying them once takes): worth it for images
    /// that are uploaded more than once, or many images uploaded in a pipeline.
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{GrayWeights, Image, Pipeline, Rgb8};
    /// let frames: Vec<_> = (0..8u8).map(|i| Image::<Rgb8>::filled(640, 480, i)).collect();
    /// let locked = gpu.register(&frames)?;
    /// let mut n = 0;
    /// Pipeline::new(&gpu).run(&frames, |s, a, b| s.grayscale(a, b, GrayWeights::Bt601), |_, r| {
    ///     r.unwrap();
    ///     n += 1;
    /// })?;
    /// drop(locked);
    /// assert_eq!(n, 8);
    /// # Ok(()) }
    /// ```
    pub fn register<'a, P: Pixel>(&self, images: &'a [Image<P>]) -> Result<Registered<'a>> {
        self.inner.ctx.bind_to_thread()?;
        let mut ranges = Vec::new();
        for img in images {
            let bytes = img.as_bytes();
            if bytes.is_empty() {
                continue;
            }
            // SAFETY: `bytes` is live memory the guard borrows for as long as it stays
            // registered; the driver only pins it, for every context (PORTABLE: so every GPU
            // of a pool copies from it directly).
            let r = unsafe {
                sys::cuMemHostRegister_v2(bytes.as_ptr() as *mut _, bytes.len(), sys::CU_MEMHOSTREGISTER_PORTABLE)
            };
            match r {
                sys::cudaError_enum::CUDA_SUCCESS => {
                    ranges.push(bytes.as_ptr_range().start as usize..bytes.as_ptr_range().end as usize)
                }
                // A page shared with an image locked just before: left to the staging path.
                sys::cudaError_enum::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => {}
                e => {
                    let guard = Registered { gpu: self.clone(), ranges, _images: PhantomData };
                    drop(guard);
                    return Err(cudarc::driver::DriverError(e).into());
                }
            }
        }
        lock().extend(ranges.iter().cloned());
        Ok(Registered { gpu: self.clone(), ranges, _images: PhantomData })
    }
}

/// Host memory page-locked by [`Gpu::register`] (for every context: the registrations are
/// PORTABLE), as address ranges.
static REGISTERED: std::sync::Mutex<Vec<Range<usize>>> = std::sync::Mutex::new(Vec::new());

fn lock() -> std::sync::MutexGuard<'static, Vec<Range<usize>>> {
    REGISTERED.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when `bytes` lie in memory page-locked by [`Gpu::register`]: copies from them are
/// direct DMA, asynchronous, so their owner must keep them until the copy is done.
pub(crate) fn is_registered(bytes: &[u8]) -> bool {
    let r = bytes.as_ptr_range();
    let (start, end) = (r.start as usize, r.end as usize);
    lock().iter().any(|g| g.start <= start && end <= g.end)
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let inner = &self.gpu.inner;
        lock().retain(|r| !self.ranges.contains(r));
        // Copies from these pages may still be queued: wait for the GPU first. (If the
        // context is lost, nothing of it runs any more.)
        let _ = inner.ctx.synchronize();
        let _ = inner.ctx.bind_to_thread();
        for r in &self.ranges {
            // SAFETY: each range was registered by this guard and is unregistered once.
            let _ = unsafe { sys::cuMemHostUnregister(r.start as *mut _) };
        }
    }
}
