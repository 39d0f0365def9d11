//! One API, whatever the hardware: a [`Device`] is a GPU when one is there and all CPU cores
//! otherwise, with the same calls, single and batch, and the same bytes ([`crate::par`] is
//! the CPU form: `cuimg::cpu`'s reference on all cores).
//!
//! ```
//! use cuimg::{Device, GrayWeights};
//! let device = Device::best(); // the GPU, or all CPU cores (and why)
//! println!("running on {device}");
//! let photo = cuimg::io::sample_rgb();
//! let gray = device.grayscale(&photo.view(), GrayWeights::Bt601)?;
//! assert_eq!(gray, cuimg::cpu::grayscale(&photo.view(), GrayWeights::Bt601)?);
//! let batch = device.grayscale_batch(&[photo.view(), photo.view()], GrayWeights::Bt601)?;
//! assert_eq!(batch[1], gray);
//! # Ok::<(), cuimg::Error>(())
//! ```

use bytemuck::Pod;

use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::ops::clahe::Clahe;
use crate::ops::equalize::EqualizeMode;
use crate::ops::grayscale::GrayWeights;
use crate::ops::histogram::Histogram;
use crate::ops::lut::Lut;
use crate::pixel::{Color, Gray, Gray8, Pixel};
use crate::runtime::Gpu;

/// Where the work runs: a GPU, or every core of the CPU.
#[derive(Clone, Debug)]
pub enum Device {
    Gpu(Gpu),
    /// All CPU cores ([`crate::par`]); `why` says why not a GPU, when one was looked for.
    Cpu {
        why: Option<String>,
    },
}

impl Device {
    /// The first GPU when there is a usable one, else all CPU cores (with the reason kept:
    /// [`Device::why_cpu`]). Never fails: a GPU that is there but cannot be used (a driver
    /// too old, a GPU older than Turing) falls back too, and says so.
    pub fn best() -> Device {
        match Gpu::new() {
            Ok(gpu) => Device::Gpu(gpu),
            Err(e) => Device::Cpu { why: Some(e.to_string()) },
        }
    }

    /// The first GPU, or its error ([`Error::is_no_gpu`] when there is none).
    pub fn gpu() -> Result<Device> {
        Gpu::new().map(Device::Gpu)
    }

    /// All CPU cores, without looking for a GPU.
    pub fn cpu() -> Device {
        Device::Cpu { why: None }
    }

    /// True on a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, Device::Gpu(_))
    }

    /// Why this is the CPU when a GPU was looked for ([`Device::best`]).
    pub fn why_cpu(&self) -> Option<&str> {
        match self {
            Device::Cpu { why } => why.as_deref(),
            Device::Gpu(_) => None,
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Gpu(g) => write!(f, "GPU {}", g.name()),
            Device::Cpu { .. } => write!(f, "CPU, {} threads", rayon::current_num_threads()),
        }
    }
}

/// Each call: the GPU's blocking method, or `crate::par`'s function of the same name.
macro_rules! both {
    ($(#[$doc:meta])* fn $name:ident<$($g:ident: $b:path),*>($($arg:ident: $t:ty),*) -> $out:ty) => {
        $(#[$doc])*
        pub fn $name<$($g: $b),*>(&self, $($arg: $t),*) -> Result<$out> {
            match self {
                Device::Gpu(g) => g.$name($($arg),*),
                Device::Cpu { .. } => crate::par::$name($($arg),*),
            }
        }
    };
}

/// Each batch call: the GPU's one launch per operation, or each image on all cores in turn
/// (an empty batch is [`Error::EmptyBatch`] on both).
macro_rules! batch {
    ($(#[$doc:meta])* fn $name:ident => $one:ident<$($g:ident: $b:path),*>($($arg:ident: $t:ty),*) -> $out:ty) => {
        $(#[$doc])*
        pub fn $name<$($g: $b),*>(&self, images: &[ImageView<'_, P>], $($arg: $t),*) -> Result<Vec<$out>> {
            match self {
                Device::Gpu(g) => g.$name(images, $($arg),*),
                Device::Cpu { .. } if images.is_empty() => Err(Error::EmptyBatch),
                Device::Cpu { .. } => images.iter().map(|v| crate::par::$one(v, $($arg),*)).collect(),
            }
        }
    };
}

impl Device {
    both!(
        /// RGB (or BGR, RGBA, BGRA) to gray, as [`crate::cpu::grayscale`].
        fn grayscale<P: Color>(src: &ImageView<'_, P>, weights: GrayWeights) -> Image<Gray8>
    );
    both!(
        /// Gray written back into every color channel, as [`crate::cpu::black_and_white`].
        fn black_and_white<P: Color>(src: &ImageView<'_, P>, weights: GrayWeights) -> Image<P>
    );
    both!(
        /// The 256-bin histogram of each channel, as [`crate::cpu::histogram`].
        fn histogram<P: Pixel>(src: &ImageView<'_, P>) -> Histogram
    );
    both!(
        /// Histogram equalization of gray (and gray + alpha), as [`crate::cpu::equalize`].
        fn equalize<P: Gray>(src: &ImageView<'_, P>) -> Image<P>
    );
    both!(
        /// Equalization of color, per channel or on luma, as [`crate::cpu::equalize_color`].
        fn equalize_color<P: Color>(src: &ImageView<'_, P>, mode: EqualizeMode) -> Image<P>
    );
    both!(
        /// One table on every channel, as [`crate::cpu::apply_lut`].
        fn apply_lut<P: Pixel>(src: &ImageView<'_, P>, lut: &Lut) -> Image<P>
    );
    both!(
        /// Table `c` on channel `c`, as [`crate::cpu::apply_luts`].
        fn apply_luts<P: Pixel>(src: &ImageView<'_, P>, luts: &[Lut]) -> Image<P>
    );
    both!(
        /// OpenCV's CLAHE on gray, as [`crate::cpu::clahe`].
        fn clahe<>(src: &ImageView<'_, Gray8>, params: Clahe) -> Image<Gray8>
    );
    both!(
        /// CLAHE of color, per channel or on luma, as [`crate::cpu::clahe_color`].
        fn clahe_color<P: Color>(src: &ImageView<'_, P>, params: Clahe, mode: EqualizeMode) -> Image<P>
    );

    /// `src[idx[i]]` for every `i`, as [`crate::cpu::gather`].
    pub fn gather<T: Pod + Send + Sync>(&self, src: &[T], idx: &[u32]) -> Result<Vec<T>> {
        match self {
            Device::Gpu(g) => g.gather(src, idx),
            Device::Cpu { .. } => crate::par::gather(src, idx),
        }
    }

    /// Gray and its histogram in one pass, as [`crate::cpu::grayscale_histogram`].
    pub fn grayscale_histogram<P: Color>(
        &self,
        src: &ImageView<'_, P>,
        weights: GrayWeights,
    ) -> Result<(Image<Gray8>, Histogram)> {
        match self {
            Device::Gpu(g) => g.grayscale_histogram(src, weights),
            Device::Cpu { .. } => crate::par::grayscale_histogram(src, weights),
        }
    }

    batch!(
        /// [`Device::grayscale`] of every image (sizes may differ).
        fn grayscale_batch => grayscale<P: Color>(weights: GrayWeights) -> Image<Gray8>
    );
    batch!(
        /// [`Device::black_and_white`] of every image.
        fn black_and_white_batch => black_and_white<P: Color>(weights: GrayWeights) -> Image<P>
    );
    batch!(
        /// [`Device::histogram`] of every image.
        fn histogram_batch => histogram<P: Pixel>() -> Histogram
    );
    batch!(
        /// [`Device::equalize`] of every image.
        fn equalize_batch => equalize<P: Gray>() -> Image<P>
    );
    batch!(
        /// [`Device::equalize_color`] of every image.
        fn equalize_color_batch => equalize_color<P: Color>(mode: EqualizeMode) -> Image<P>
    );
    batch!(
        /// [`Device::apply_lut`] of every image, one table for all.
        fn apply_lut_batch => apply_lut<P: Pixel>(lut: &Lut) -> Image<P>
    );
    batch!(
        /// [`Device::clahe_color`] of every image, each on its own tiles.
        fn clahe_color_batch => clahe_color<P: Color>(params: Clahe, mode: EqualizeMode) -> Image<P>
    );

    /// [`Device::clahe`] of every gray image, each on its own tiles.
    pub fn clahe_batch(&self, images: &[ImageView<'_, Gray8>], params: Clahe) -> Result<Vec<Image<Gray8>>> {
        match self {
            Device::Gpu(g) => g.clahe_batch(images, params),
            Device::Cpu { .. } if images.is_empty() => Err(Error::EmptyBatch),
            Device::Cpu { .. } => images.iter().map(|v| crate::par::clahe(v, params)).collect(),
        }
    }
}

impl Device {
    /// A registry operation ([`crate::registry`]) on one image of any format: the GPU's
    /// blocking form, or all cores'.
    ///
    /// ```
    /// use cuimg::registry::{self, AnyImage, Args};
    /// let op = registry::find("equalize").unwrap();
    /// let equalize = (op.bind)(&Args::defaults(op))?;
    /// let img = AnyImage::from(cuimg::io::sample_rgb());
    /// let out = cuimg::Device::best().apply(&*equalize, &img.view())?;
    /// assert_eq!(out, equalize.cpu(&img.view())?);
    /// # Ok::<(), cuimg::Error>(())
    /// ```
    pub fn apply(
        &self,
        op: &dyn crate::registry::Bound,
        src: &crate::registry::AnyView<'_>,
    ) -> Result<crate::registry::Output> {
        match self {
            Device::Gpu(g) => op.gpu(g, src),
            Device::Cpu { .. } => op.par(src),
        }
    }

    /// Runs `op` on every image of `inputs`, several at once (a thread per core on the CPU;
    /// four threads on a GPU, whose calls queue on its stream), and calls `sink` with each
    /// result in input order, an image's error as its `Err`. Memory stays bounded: at most
    /// twice as many images as threads are between the input and `sink`. Returns how many
    /// images went through. The same closure serves both hardware; for the most throughput
    /// on GPUs, [`crate::Pipeline`] overlaps copies and kernels on streams of its own.
    ///
    /// ```
    /// use cuimg::{Device, GrayWeights, Image, Rgb8};
    /// let device = Device::best();
    /// let inputs = (0..10u8).map(|i| Image::<Rgb8>::filled(64, 48, i));
    /// let mut got = Vec::new();
    /// let n = device.run(inputs, |d, img| d.grayscale(img, GrayWeights::Bt601), |i, r| got.push((i, r)))?;
    /// assert_eq!(n, 10);
    /// assert!(got.iter().enumerate().all(|(k, (i, r))| k == *i && r.is_ok())); // input order
    /// # Ok::<(), cuimg::Error>(())
    /// ```
    pub fn run<P, Q, T, I, F, S>(&self, inputs: I, op: F, mut sink: S) -> Result<usize>
    where
        P: Pixel,
        Q: Pixel,
        T: std::borrow::Borrow<Image<P>> + Send,
        I: IntoIterator<Item = T>,
        I::IntoIter: Send,
        F: Fn(&Device, &ImageView<'_, P>) -> Result<Image<Q>> + Sync,
        S: FnMut(usize, Result<Image<Q>>),
    {
        use std::sync::mpsc::{Receiver, sync_channel};
        let threads = match self {
            Device::Gpu(_) => 4,
            Device::Cpu { .. } => std::thread::available_parallelism().map_or(4, |n| n.get()),
        };
        let (work_tx, work_rx) = sync_channel::<(usize, T)>(threads);
        let work_rx = std::sync::Mutex::new(work_rx);
        let (done_tx, done_rx) = sync_channel::<(usize, Result<Image<Q>>)>(threads);
        let inputs = inputs.into_iter();
        let mut emitted = 0usize;
        // How many images have reached `sink`: the feeder stays within `2 * threads` of it.
        let window = (std::sync::Mutex::new(0usize), std::sync::Condvar::new());
        std::thread::scope(|scope| {
            let window = &window;
            scope.spawn(move || {
                for (i, img) in inputs.enumerate() {
                    let mut out = window.0.lock().unwrap_or_else(|e| e.into_inner());
                    while i >= *out + 2 * threads {
                        out = window.1.wait(out).unwrap_or_else(|e| e.into_inner());
                    }
                    drop(out);
                    if work_tx.send((i, img)).is_err() {
                        break;
                    }
                }
            });
            for _ in 0..threads {
                let (done_tx, work_rx, op) = (done_tx.clone(), &work_rx, &op);
                scope.spawn(move || {
                    let next = |rx: &std::sync::Mutex<Receiver<(usize, T)>>| rx.lock().ok()?.recv().ok();
                    while let Some((i, img)) = next(work_rx) {
                        if done_tx.send((i, op(self, &img.borrow().view()))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            // In input order: results that come early wait here (at most the threads' worth
            // in flight, and the channels').
            let mut pending = std::collections::BTreeMap::new();
            for (i, r) in done_rx {
                pending.insert(i, r);
                while let Some(r) = pending.remove(&emitted) {
                    sink(emitted, r);
                    emitted += 1;
                    *window.0.lock().unwrap_or_else(|e| e.into_inner()) = emitted;
                    window.1.notify_all();
                }
            }
        });
        Ok(emitted)
    }
}
