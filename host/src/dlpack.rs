//! DLPack hand-offs (issue 29, part 4; feature `dlpack`), through `dlpark`'s versioned
//! managed tensors: a [`DeviceTensor`] or [`DeviceImage`] given away to PyTorch, JAX, CuPy
//! or any DLPack consumer without a copy, and their device tensors taken in the same way.
//!
//! **Streams.** DLPack leaves ordering to the two sides. Going out, cuimg waits on the host
//! until its own work on the memory has finished, so the consumer may use it on any stream.
//! Coming in, the producer's work must be finished or ordered before the stream cuimg
//! works on (PyTorch: `tensor.__dlpack__(stream=...)`, or a synchronize).
//!
//! ```
//! # fn main() -> Result<(), cuimg::Error> {
//! # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
//! use cuimg::dlpack::TensorView;
//! use cuimg::{DType, Image, Normalize, Rgb8, TensorLayout, TensorSpec};
//! let s = gpu.stream()?;
//! let src = s.upload(&Image::<Rgb8>::filled(32, 24, 128).view())?;
//! let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET);
//! let mut t = s.alloc_tensor(cuimg::TensorShape {
//!     images: 1, channels: 3, height: 24, width: 32, dtype: DType::F16, layout: TensorLayout::Nchw,
//! })?;
//! s.to_tensor(&src, &spec, &mut t, 0)?;
//! let managed = t.into_dlpack()?; // what a consumer's `from_dlpack` takes
//! assert_eq!(managed.shape(), &[1, 3, 24, 32]);
//! # Ok(()) }
//! ```

use std::ffi::c_void;
use std::ops::{Deref, DerefMut};

pub use dlpark::SafeManagedTensorVersioned;
pub use dlpark::ffi::{DataType, Device, DeviceType, Flags};
pub use dlpark::traits::TensorView;
use dlpark::traits::{StridedLayout, TensorLike};

use crate::error::{Error, Result};
use crate::ops::tensor::{DType, DeviceTensor, TensorLayout, TensorShape};
use crate::pixel::Pixel;
use crate::runtime::{DeviceImage, Stream};

/// What goes out: the cuimg object that owns the memory (freed when the consumer calls the
/// deleter, which drops this), and the DLPack description of it.
struct Export<T> {
    _keep: T,
    ptr: u64,
    dims: Vec<i64>,
    strides: Vec<i64>,
    dtype: DataType,
    device: Device,
}

impl<T> TensorLike<StridedLayout> for Export<T> {
    type Error = Error;

    fn data_ptr(&self) -> *mut c_void {
        self.ptr as usize as *mut c_void
    }

    fn memory_layout(&self) -> StridedLayout {
        StridedLayout::new([self.dims.as_slice(), self.strides.as_slice()].concat())
    }

    fn device(&self) -> Result<Device> {
        Ok(self.device)
    }

    fn data_type(&self) -> Result<DataType> {
        Ok(self.dtype)
    }

    fn byte_offset(&self) -> u64 {
        0
    }
}

fn data_type(dtype: DType) -> DataType {
    match dtype {
        DType::F32 => DataType::F32,
        DType::F16 => DataType::F16,
        DType::Bf16 => DataType::BF16,
    }
}

/// Row-major strides, in elements, of `dims`.
fn compact(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    strides
}

fn out<T>(
    keep: T,
    ptr: u64,
    dims: Vec<i64>,
    strides: Vec<i64>,
    dtype: DataType,
    ordinal: usize,
) -> Result<SafeManagedTensorVersioned> {
    let device = i32::try_from(ordinal).map_err(|_| Error::InvalidParameter {
        what: "device ordinal".into(),
        why: format!("{ordinal} does not fit DLPack's 32 bits"),
    })?;
    // Writable (dlpark's default flag is read-only): the memory is the consumer's now.
    let device = Device { device_type: DeviceType::Cuda, device_id: device };
    SafeManagedTensorVersioned::with_flags(Export { _keep: keep, ptr, dims, strides, dtype, device }, Flags::empty())
}

impl DeviceTensor {
    /// This tensor as a DLPack managed tensor (`kDLCUDA`, its dimensions in
    /// [`TensorShape::dims`] order, row-major strides in elements): after cuimg's work on it
    /// has finished (a host wait), its memory belongs to the consumer, and is freed when the
    /// consumer calls the deleter (drops the returned value).
    pub fn into_dlpack(self) -> Result<SafeManagedTensorVersioned> {
        self.buf.buf.finish()?;
        let dims: Vec<i64> = self.shape.dims().iter().map(|&d| d as i64).collect();
        let strides = compact(&dims);
        let (ptr, dtype, ordinal) = (self.as_raw_ptr(), data_type(self.shape.dtype), self.buf.buf.context().ordinal());
        out(self, ptr, dims, strides, dtype, ordinal)
    }
}

impl<P: Pixel> DeviceImage<P> {
    /// This image as a DLPack managed tensor of bytes, `[height, width, channels]` with its
    /// row pitch as the first stride (see [`DeviceTensor::into_dlpack`] for ownership).
    pub fn into_dlpack(self) -> Result<SafeManagedTensorVersioned> {
        self.buf.finish()?;
        let c = P::CHANNELS as i64;
        let dims = vec![self.height() as i64, self.width() as i64, c];
        let strides = vec![self.pitch() as i64, c, 1];
        let (ptr, ordinal) = (self.as_raw_ptr(), self.buf.context().ordinal());
        out(self, ptr, dims, strides, DataType::U8, ordinal)
    }
}

/// A DLPack tensor taken in without a copy: cuimg's view of its memory, and the producer's
/// managed tensor, whose deleter runs when this is dropped, after cuimg's work on the
/// memory has finished (the view goes first).
pub struct Imported<T> {
    inner: T,
    _owner: SafeManagedTensorVersioned,
}

impl<T> Deref for Imported<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for Imported<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Imported<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Imported({:?})", self.inner)
    }
}

fn refuse<T>(why: String) -> Result<T> {
    Err(Error::InvalidParameter { what: "DLPack tensor".into(), why })
}

/// The checks every import makes: a CUDA tensor of GPU `ordinal`, writable, of `want`
/// elements, `ndim` dimensions, packed row-major (null or compact strides), a non-null,
/// element-aligned address. Its dimensions and the address of its first element.
pub(crate) fn check(
    t: &impl TensorView,
    flags: Flags,
    ordinal: usize,
    want: DataType,
    ndim: usize,
) -> Result<(Vec<u32>, u64)> {
    let d = t.device();
    if d.device_type != DeviceType::Cuda || d.device_id as i64 != ordinal as i64 {
        return refuse(format!(
            "it is on {:?} {}; this stream's GPU is CUDA device {ordinal}",
            d.device_type, d.device_id
        ));
    }
    if flags.contains(Flags::READ_ONLY) {
        return refuse("it is read-only, and cuimg's device memory may be written".into());
    }
    let dt = *t.data_type();
    if (dt.code, dt.bits, dt.lanes) != (want.code, want.bits, want.lanes) {
        return refuse(format!(
            "its elements are {:?} of {} bits x {}, not {:?} of {}",
            dt.code, dt.bits, dt.lanes, want.code, want.bits
        ));
    }
    if t.num_dimensions() != ndim {
        return refuse(format!("it has {} dimensions, not {ndim}", t.num_dimensions()));
    }
    let shape = t.shape();
    let dims: Vec<u32> = shape
        .iter()
        .map(|&d| u32::try_from(d).ok().filter(|&d| d > 0))
        .collect::<Option<_>>()
        .map_or_else(|| refuse(format!("its shape {shape:?} has a side that is empty, negative or over 2^32")), Ok)?;
    if let Some(strides) = t.strides()
        && strides != compact(shape).as_slice()
    {
        return refuse(format!("its strides {strides:?} are not the packed row-major {:?}", compact(shape)));
    }
    let ptr = (t.data_ptr() as u64).checked_add(t.byte_offset() as u64).unwrap_or(0);
    let size = (want.bits / 8).max(1) as u64;
    if ptr == 0 || !ptr.is_multiple_of(size) {
        return refuse(format!("its first element's address {ptr:#x} is null or not aligned to {size} bytes"));
    }
    Ok((dims, ptr))
}

impl Stream {
    /// A device tensor taken in from DLPack as a [`DeviceTensor`] of `layout` (its
    /// dimensions read as `[n, c, h, w]` or `[n, h, w, c]`), f32, f16 or bf16.
    ///
    /// # Safety
    /// `t` describes device memory of this stream's GPU context, as its fields say, live
    /// until it is dropped; the producer's work on it is finished or ordered before this
    /// stream's (see the module's documentation).
    pub unsafe fn tensor_from_dlpack(
        &self,
        t: SafeManagedTensorVersioned,
        layout: TensorLayout,
    ) -> Result<Imported<DeviceTensor>> {
        let dt = *t.data_type();
        let dtype = [(DataType::F32, DType::F32), (DataType::F16, DType::F16), (DataType::BF16, DType::Bf16)]
            .into_iter()
            .find(|(d, _)| (d.code, d.bits, d.lanes) == (dt.code, dt.bits, dt.lanes))
            .map(|(_, d)| d)
            .map_or_else(
                || {
                    refuse(format!(
                        "its elements are {:?} of {} bits: cuimg's tensors are f32, f16 or bf16",
                        dt.code, dt.bits
                    ))
                },
                Ok,
            )?;
        let (dims, ptr) = check(&t, *t.flags(), self.gpu.ordinal(), data_type(dtype), 4)?;
        let [n, a, b, c] = [dims[0], dims[1], dims[2], dims[3]].map(|d| d as usize);
        let shape = match layout {
            TensorLayout::Nchw => TensorShape { images: n, channels: a, height: b, width: c, dtype, layout },
            TensorLayout::Nhwc => TensorShape { images: n, height: a, width: b, channels: c, dtype, layout },
        };
        // SAFETY: the caller's contract: `shape.bytes()` bytes of this context's memory at
        // `ptr` (its checked packed strides), alive while `t` is, which outlives the view.
        let buf = unsafe { self.borrow_slice(ptr, shape.bytes()?)? };
        Ok(Imported { inner: DeviceTensor { buf, shape }, _owner: t })
    }

    /// A DLPack tensor of bytes taken in as a device image: `[height, width, channels]`
    /// packed, channels `P`'s (`[height, width]` for one channel).
    ///
    /// # Safety
    /// As [`Stream::tensor_from_dlpack`].
    pub unsafe fn image_from_dlpack<P: Pixel>(
        &self,
        t: SafeManagedTensorVersioned,
    ) -> Result<Imported<DeviceImage<P>>> {
        let ndim = if P::CHANNELS == 1 && t.num_dimensions() == 2 { 2 } else { 3 };
        let (dims, ptr) = check(&t, *t.flags(), self.gpu.ordinal(), DataType::U8, ndim)?;
        if ndim == 3 && dims[2] as usize != P::CHANNELS {
            return refuse(format!("it has {} channels; {} has {}", dims[2], P::NAME, P::CHANNELS));
        }
        // SAFETY: the caller's contract, for the checked packed rows of P's pixels.
        let img = unsafe { DeviceImage::<P>::from_raw_parts(self, ptr, dims[1], dims[0])? };
        Ok(Imported { inner: img, _owner: t })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tensor description with no memory behind it: only the checks read it.
    type Fake = Export<()>;

    fn good() -> Fake {
        let dims = vec![2, 3, 4, 5];
        Fake { _keep: (), device: Device::cuda(0), dtype: DataType::F16, strides: compact(&dims), dims, ptr: 0x10000 }
    }

    fn checked(f: Fake, flags: Flags) -> Result<(Vec<u32>, u64)> {
        let t = SafeManagedTensorVersioned::with_flags(f, flags)?;
        check(&t, *t.flags(), 0, DataType::F16, 4)
    }

    #[test]
    fn imports_are_checked_before_any_memory_is_touched() {
        assert_eq!(checked(good(), Flags::empty()).unwrap(), (vec![2, 3, 4, 5], 0x10000));
        let bad = |f: Fake, flags: Flags, what: &str| match checked(f, flags) {
            Err(Error::InvalidParameter { why, .. }) => eprintln!("{what}: {why}"),
            other => panic!("{what}: {other:?}"),
        };
        bad(Fake { device: Device::CPU, ..good() }, Flags::empty(), "a CPU tensor");
        bad(Fake { device: Device::cuda(1), ..good() }, Flags::empty(), "another GPU");
        bad(good(), Flags::READ_ONLY, "a read-only tensor");
        bad(Fake { dtype: DataType::F32, ..good() }, Flags::empty(), "f32 where f16 is wanted");
        bad(Fake { dims: vec![2, 3, 20], strides: vec![60, 20, 1], ..good() }, Flags::empty(), "three dimensions");
        bad(Fake { dims: vec![2, 0, 4, 5], strides: vec![0, 20, 5, 1], ..good() }, Flags::empty(), "an empty side");
        bad(Fake { strides: vec![60, 20, 1, 4], ..good() }, Flags::empty(), "transposed strides");
        bad(Fake { ptr: 0, ..good() }, Flags::empty(), "a null address");
        bad(Fake { ptr: 0x10001, ..good() }, Flags::empty(), "a misaligned address");
    }

    #[test]
    fn strides_are_row_major_in_elements() {
        assert_eq!(compact(&[2, 3, 4, 5]), vec![60, 20, 5, 1]);
        assert_eq!(compact(&[7]), vec![1]);
    }
}
