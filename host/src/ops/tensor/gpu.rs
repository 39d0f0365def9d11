//! The tensor launches: one kernel per channel count each way, single images and batches
//! (a grid layer an image).

use cuimg_abi::tensor::{
    FromTensor, FromTensorC1, FromTensorC2, FromTensorC3, FromTensorC4, TensorFormat, TensorJob, TensorJobs, ToTensor,
    ToTensorC1, ToTensorC2, ToTensorC3, ToTensorC4,
};
use cuimg_abi::{DevPtr, DevPtrMut, MAX_BATCH_LAUNCH};

use super::cpu::check_back;
use super::{DeviceTensor, Tensor, TensorShape, TensorSpec};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::pixel::{Channels, Pixel};
use crate::runtime::{AsDeviceView, AsDeviceViewMut, DeviceBatch, Gpu, Stream};

impl Stream {
    /// A new device tensor of zeroed elements.
    pub fn alloc_tensor(&self, shape: TensorShape) -> Result<DeviceTensor> {
        Ok(DeviceTensor { buf: self.alloc_slice::<u8>(shape.bytes()?)?, shape })
    }

    /// Copies a tensor to the device.
    pub fn upload_tensor(&self, t: &Tensor) -> Result<DeviceTensor> {
        Ok(DeviceTensor { buf: self.upload_slice(&t.bytes)?, shape: t.shape })
    }

    /// Copies a device tensor back, waiting for the stream.
    pub fn download_tensor(&self, t: &DeviceTensor) -> Result<Tensor> {
        Tensor::from_bytes(t.shape, self.download_slice(&t.buf)?)
    }

    /// `src` (an image or a region of one: a crop) normalized into image `index` of `dst`,
    /// whose shape must be the one `spec` gives (its width and height `spec.size`, or the
    /// source's).
    ///
    /// ```
    /// # fn main() -> Result<(), cuimg::Error> {
    /// # let gpu = match cuimg::Gpu::new() { Ok(g) => g, Err(e) if e.is_no_gpu() => return Ok(()), Err(e) => return Err(e) };
    /// use cuimg::{DType, Image, Normalize, Rect, Rgb8, TensorLayout, TensorShape, TensorSpec};
    /// let img = Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 9]));
    /// let stream = gpu.stream()?;
    /// let src = stream.upload(&img.view())?;
    /// let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET).pad_to(32, 32, 0.0);
    /// let shape = TensorShape { images: 2, channels: 3, height: 32, width: 32, dtype: DType::F16, layout: TensorLayout::Nchw };
    /// let mut t = stream.alloc_tensor(shape)?;
    /// stream.to_tensor(&src.roi(Rect::new(8, 8, 32, 24))?, &spec, &mut t, 1)?; // a crop, into image 1
    /// let crop = img.view().roi(Rect::new(8, 8, 32, 24))?;
    /// let want = cuimg::cpu::to_tensor(&crop, &spec)?;
    /// let got = stream.download_tensor(&t)?;
    /// assert_eq!(&got.as_bytes()[shape.image_bytes()..], want.as_bytes());
    /// # Ok(()) }
    /// ```
    pub fn to_tensor<P: Pixel>(
        &self,
        src: &impl AsDeviceView<P>,
        spec: &TensorSpec,
        dst: &mut DeviceTensor,
        index: usize,
    ) -> Result<()> {
        let src = src.device_view();
        let size = spec.extent([(src.width(), src.height())])?;
        check_shape(&dst.shape, spec, P::CHANNELS, size, index + 1)?;
        self.check_context("the tensor source", src.img.buf.context())?;
        self.check_context("the tensor", dst.buf.buf.context())?;
        let l = src.layout();
        let (s, _read) = src.ptr(&self.raw)?;
        let job = TensorJob {
            data: s.addr(),
            pitch: l.pitch,
            width: l.width,
            height: l.height,
            offset: (index * dst.shape.image_bytes()) as u64,
        };
        // SAFETY: the job's rectangle is the guarded view; the tensor holds image `index`
        // of the format's size and type (`check_shape`), aligned (elements of 2 or 4 bytes
        // from an allocation's start, in whole images).
        unsafe { self.to_tensor_launch::<P>(&[job], dst, spec.format(size)) }
    }

    /// Every image of `src` normalized into `dst`, image `i` at index `i`, one launch per
    /// 65,535 images; `dst` holds exactly the batch.
    pub fn to_tensor_batch<P: Pixel>(&self, src: &DeviceBatch<P>, spec: &TensorSpec, dst: &mut DeviceTensor) -> Result<()> {
        let size = spec.extent(src.sizes())?;
        check_shape(&dst.shape, spec, P::CHANNELS, size, src.len())?;
        if dst.shape.images != src.len() {
            return Err(Error::WrongLength { what: "the tensor's images".into(), expected: src.len(), actual: dst.shape.images });
        }
        self.check_context("the tensor source batch", src.buf.context())?;
        self.check_context("the tensor", dst.buf.buf.context())?;
        let from = src.read(&self.raw)?;
        let base = from._data.ptr().addr();
        let per = dst.shape.image_bytes();
        let jobs: Vec<TensorJob> = src
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| TensorJob {
                data: base + e.offset as u64,
                pitch: e.width as u64 * P::CHANNELS as u64,
                width: e.width,
                height: e.height,
                offset: (i * per) as u64,
            })
            .collect();
        // SAFETY: each job is a packed image of the guarded batch; the tensor holds them all
        // (`check_shape`), aligned.
        unsafe { self.to_tensor_launch::<P>(&jobs, dst, spec.format(size)) }
    }

    /// Image `index` of `src` back into `dst` (at most the tensor's size, from its top
    /// left): each element un-normalized by `spec`, rounded to nearest (ties to even),
    /// clamped.
    pub fn from_tensor<P: Pixel>(
        &self,
        src: &DeviceTensor,
        index: usize,
        spec: &TensorSpec,
        dst: &mut impl AsDeviceViewMut<P>,
    ) -> Result<()> {
        let mut dst = dst.device_view_mut();
        let format = check_back::<P>(&src.shape, index, spec, (dst.width(), dst.height()))?;
        self.check_context("the tensor", src.buf.buf.context())?;
        self.check_context("the image destination", dst.img.buf.context())?;
        let l = dst.layout();
        let read = src.buf.buf.read(&self.raw)?;
        let (d, _write) = dst.ptr_mut(&self.raw)?;
        let job = TensorJob {
            data: d.addr(),
            pitch: l.pitch,
            width: l.width,
            height: l.height,
            offset: (index * src.shape.image_bytes()) as u64,
        };
        let p = FromTensor { jobs: TensorJobs { list: DevPtr::NULL, one: job }, tensor: read.ptr(), format };
        let cfg = self.batch_config::<ToTensorC1>((l.width as u64, l.height as u64), (32, 8), 1, 0)?;
        // SAFETY: the job's rectangle is the guarded view of P's channels; image `index` of
        // the guarded tensor has the format's size (at least the view's), type and channels
        // (`check_back`), aligned; one job, in the parameters.
        unsafe {
            match P::LAYOUT {
                Channels::One => self.launch::<FromTensorC1>(cfg, p),
                Channels::Two => self.launch::<FromTensorC2>(cfg, p),
                Channels::Three => self.launch::<FromTensorC3>(cfg, p),
                Channels::Four => self.launch::<FromTensorC4>(cfg, p),
            }
        }
    }

    /// # Safety
    /// Each job's rectangle is readable memory of P's channels; the tensor holds, at each
    /// job's offset, an image of the format's size and type with P's channels, aligned.
    pub(crate) unsafe fn to_tensor_launch<P: Pixel>(&self, jobs: &[TensorJob], dst: &mut DeviceTensor, format: TensorFormat) -> Result<()> {
        let mut write = dst.buf.buf.write(&self.raw)?;
        let tensor: DevPtrMut<u8> = write.ptr();
        let extent = (format.width as u64, format.height as u64);
        let launch = |jobs: TensorJobs, count: u32| -> Result<()> {
            let cfg = self.batch_config::<ToTensorC1>(extent, (32, 8), count, 0)?;
            let p = ToTensor { jobs, tensor, format };
            // SAFETY: the caller's contract, for `count` jobs of the list (or the one).
            unsafe {
                match P::LAYOUT {
                    Channels::One => self.launch::<ToTensorC1>(cfg, p),
                    Channels::Two => self.launch::<ToTensorC2>(cfg, p),
                    Channels::Three => self.launch::<ToTensorC3>(cfg, p),
                    Channels::Four => self.launch::<ToTensorC4>(cfg, p),
                }
            }
        };
        if let [one] = jobs {
            return launch(TensorJobs { list: DevPtr::NULL, one: *one }, 1);
        }
        let words: Vec<u64> = jobs.iter().flat_map(TensorJob::words).collect();
        let size = std::mem::size_of::<TensorJob>() as u64;
        self.with_table(bytemuck::cast_slice(&words), |base| {
            for (i, chunk) in jobs.chunks(MAX_BATCH_LAUNCH as usize).enumerate() {
                let list = DevPtr::new(base + i as u64 * MAX_BATCH_LAUNCH as u64 * size);
                launch(TensorJobs { list, one: TensorJob::default() }, chunk.len() as u32)?;
            }
            Ok(())
        })
    }
}

/// `shape` is what `spec` makes of images of `size` with `channels`, with at least
/// `images` images.
pub(crate) fn check_shape(
    shape: &TensorShape,
    spec: &TensorSpec,
    channels: usize,
    size: (u32, u32),
    images: usize,
) -> Result<()> {
    let want = spec.shape(shape.images.max(images), channels, size);
    if *shape != want {
        return Err(Error::InvalidParameter {
            what: "tensor".into(),
            why: format!("it is {shape:?}; the spec and the source make {want:?}"),
        });
    }
    Ok(())
}

impl Gpu {
    /// Blocking: `src` as a tensor of one image.
    pub fn to_tensor<P: Pixel>(&self, src: &ImageView<'_, P>, spec: &TensorSpec) -> Result<Tensor> {
        self.to_tensor_batch(std::slice::from_ref(src), spec)
    }

    /// Blocking: `images` as one tensor, one launch for all.
    pub fn to_tensor_batch<P: Pixel>(&self, images: &[ImageView<'_, P>], spec: &TensorSpec) -> Result<Tensor> {
        let (shape, _) = super::cpu::plan::<P>(images, spec)?;
        let s = self.blocking_stream();
        let src = s.upload_batch(images)?;
        let mut dst = DeviceTensor { buf: s.alloc_slice_for_output(shape.bytes()?)?, shape };
        s.to_tensor_batch(&src, spec, &mut dst)?;
        s.download_tensor(&dst)
    }

    /// Blocking: image `index` of `tensor` back as a `width` x `height` image.
    pub fn from_tensor<P: Pixel>(
        &self,
        tensor: &Tensor,
        index: usize,
        spec: &TensorSpec,
        width: u32,
        height: u32,
    ) -> Result<Image<P>> {
        check_back::<P>(&tensor.shape, index, spec, (width, height))?;
        let s = self.blocking_stream();
        let src = s.upload_tensor(tensor)?;
        let mut dst = s.alloc_for_output::<P>(width, height)?;
        s.from_tensor(&src, index, spec, &mut dst)?;
        s.download(&dst)
    }
}
