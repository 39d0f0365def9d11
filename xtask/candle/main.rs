//! cuimg and candle in one binary: cuimg resizes and normalizes photos straight into
//! memory candle owns, and candle computes on it; the elements are the reference's.
use candle_core::cuda_backend::cudarc::driver::DevicePtr;
use candle_core::{CudaStorage, DType, Device, Storage, Tensor};
use cuimg::dlpack::{DataType, Device as DlDevice, DeviceType, Flags, SafeManagedTensorVersioned};
use cuimg::{Filter, Image, Normalize, Rgb8, TensorLayout, TensorSpec};

/// candle's memory described to cuimg as a DLPack tensor (borrowed: nothing is freed).
struct Borrowed {
    ptr: u64,
    dims: Vec<i64>,
}

impl dlpark::traits::TensorLike<dlpark::traits::StridedLayout> for Borrowed {
    type Error = cuimg::Error;
    fn data_ptr(&self) -> *mut std::ffi::c_void {
        self.ptr as usize as *mut std::ffi::c_void
    }
    fn memory_layout(&self) -> dlpark::traits::StridedLayout {
        let mut strides = vec![1i64; 4];
        for i in (0..3).rev() {
            strides[i] = strides[i + 1] * self.dims[i + 1];
        }
        dlpark::traits::StridedLayout::new([self.dims.as_slice(), strides.as_slice()].concat())
    }
    fn device(&self) -> cuimg::Result<DlDevice> {
        Ok(DlDevice { device_type: DeviceType::Cuda, device_id: 0 })
    }
    fn data_type(&self) -> cuimg::Result<DataType> {
        Ok(DataType::F16)
    }
    fn byte_offset(&self) -> u64 {
        0
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let photos: Vec<Image<Rgb8>> = [(640, 480), (500, 375), (333, 500)]
        .iter()
        .map(|&(w, h)| Image::from_fn(w, h, |x, y| Rgb8([(x * 7 + y) as u8, (x ^ y) as u8, (x + 3 * y) as u8])))
        .collect();
    let views: Vec<_> = photos.iter().map(Image::view).collect();
    let spec = TensorSpec::new(cuimg::DType::F16).normalize(Normalize::IMAGENET);
    let filter: Filter = "pil-bilinear".parse()?;
    let n = photos.len();

    let dev = Device::new_cuda(0)?;
    let cuda = dev.as_cuda_device()?;
    let stream = cuda.cuda_stream();
    // candle's memory: a cudarc slice on candle's stream, zeroed.
    let slice = stream.alloc_zeros::<half::f16>(n * 3 * 224 * 224)?;
    let (ptr, sync) = slice.device_ptr(&stream);
    drop(sync);
    dev.synchronize()?;

    // cuimg writes into it: resize and normalize in one launch.
    let gpu = cuimg::Gpu::new()?;
    let s = gpu.stream()?;
    let src: Vec<_> = views.iter().map(|v| s.upload(v)).collect::<cuimg::Result<_>>()?;
    let dviews: Vec<_> = src.iter().map(|d| d.view()).collect();
    // Writable (dlpark's default flag is read-only): cuimg writes into it.
    let borrowed =
        SafeManagedTensorVersioned::with_flags(Borrowed { ptr, dims: vec![n as i64, 3, 224, 224] }, Flags::empty())?;
    // SAFETY: candle's allocation of the primary context (cuimg's too), live until
    // `slice` is dropped below; candle's work on it has finished (synchronized above).
    let mut t = unsafe { s.tensor_from_dlpack(borrowed, TensorLayout::Nchw)? };
    s.resize_to_tensor(&dviews, 224, 224, filter, &spec, &mut t, 0)?;
    drop(t); // waits for cuimg's work on the memory

    // candle takes the slice as a tensor (`wrap_cuda_slice`) and computes on it.
    let storage = Storage::Cuda(CudaStorage::wrap_cuda_slice(slice, cuda.clone()));
    let x = Tensor::from_storage(storage, (n, 3, 224, 224), candle_core::op::BackpropOp::none(), false);
    let got: Vec<u16> = x.flatten_all()?.to_vec1::<half::f16>()?.iter().map(|h| h.to_bits()).collect();
    let want = cuimg::cpu::resize_to_tensor(&views, 224, 224, filter, &spec)?;
    let want: Vec<u16> = want.as_bytes().chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
    assert_eq!(got, want, "candle reads cuimg's elements");
    let mean = x.to_dtype(DType::F32)?.mean_all()?.to_scalar::<f32>()?;
    println!("candle-beside-cuimg: {n} photos resized into candle's memory by cuimg, equal to the reference; candle's mean {mean:.4}");
    Ok(())
}
