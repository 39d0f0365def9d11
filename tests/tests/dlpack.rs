//! DLPack hand-offs (issue 29, part 4): device tensors and images given away as DLPack
//! managed tensors (the fields a consumer reads) and taken back in without a copy, on the
//! GPU; what the imports refuse is tested in `host/src/dlpack.rs`, without one.

use cuimg::dlpack::{DeviceType, TensorView};
use cuimg::{DType, Error, Image, Normalize, Rgb8, Rgba8, TensorLayout, TensorShape, TensorSpec, cpu};

#[test]
fn tensors_go_out_and_come_back_without_a_copy() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let s = gpu.stream().unwrap();
    let img: Image<Rgb8> = cuimg_tests::random(45, 31, 7);
    for (dtype, layout) in
        [(DType::F32, TensorLayout::Nchw), (DType::F16, TensorLayout::Nhwc), (DType::Bf16, TensorLayout::Nchw)]
    {
        let spec = TensorSpec::new(dtype).layout(layout).normalize(Normalize::IMAGENET).pad_to(48, 32, 0.0);
        let shape = TensorShape { images: 2, channels: 3, height: 32, width: 48, dtype, layout };
        let mut t = s.alloc_tensor(shape).unwrap();
        let src = s.upload(&img.view()).unwrap();
        s.to_tensor(&src, &spec, &mut t, 1).unwrap();
        let addr = t.as_raw_ptr();
        let managed = t.into_dlpack().unwrap();
        // What a consumer reads.
        assert_eq!(managed.device().device_type, DeviceType::Cuda);
        assert_eq!(managed.device().device_id as usize, gpu.ordinal());
        assert_eq!(managed.data_ptr() as u64, addr);
        assert_eq!(managed.shape(), shape.dims().map(|d| d as i64).as_slice());
        let strides: Vec<i64> = match layout {
            TensorLayout::Nchw => vec![3 * 32 * 48, 32 * 48, 48, 1],
            TensorLayout::Nhwc => vec![32 * 48 * 3, 48 * 3, 3, 1],
        };
        assert_eq!(managed.strides(), Some(strides.as_slice()));
        assert_eq!(managed.data_type().bits as usize, dtype.bytes() * 8);
        assert!(!managed.read_only());
        // Back in: the same memory, read by cuimg's kernels.
        // SAFETY: the managed tensor is cuimg's own, on this GPU, its work finished.
        let back = unsafe { s.tensor_from_dlpack(managed, layout) }.unwrap();
        assert_eq!(back.as_raw_ptr(), addr);
        assert_eq!(back.shape(), shape);
        let want = cpu::to_tensor(&img.view(), &spec).unwrap();
        let got = s.download_tensor(&back).unwrap();
        assert_eq!(&got.as_bytes()[shape.image_bytes()..], want.as_bytes(), "{dtype:?} {layout:?}");
        let mut out = s.alloc::<Rgb8>(45, 31).unwrap();
        s.from_tensor(&back, 1, &spec, &mut out).unwrap();
        assert_eq!(s.download(&out).unwrap(), cpu::from_tensor::<Rgb8>(&want, 0, &spec, 45, 31).unwrap());
        // Dropping `back` waits for that launch, then the deleter frees the memory.
    }
}

#[test]
fn images_go_out_and_come_back_without_a_copy() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let s = gpu.stream().unwrap();
    let img: Image<Rgb8> = cuimg_tests::random(37, 19, 8);
    let d = s.upload(&img.view()).unwrap();
    let (addr, pitch) = (d.as_raw_ptr(), d.pitch() as i64);
    let managed = d.into_dlpack().unwrap();
    assert_eq!(managed.shape(), &[19, 37, 3]);
    assert_eq!(managed.strides(), Some([pitch, 3, 1].as_slice()));
    assert_eq!(managed.data_ptr() as u64, addr);
    // SAFETY: as above.
    let back = unsafe { s.image_from_dlpack::<Rgb8>(managed) }.unwrap();
    assert_eq!(s.download(&*back).unwrap(), img);
    let gray = cpu::grayscale(&img.view(), cuimg::GrayWeights::Bt601).unwrap();
    let mut g = s.alloc::<cuimg::Gray8>(37, 19).unwrap();
    s.grayscale(&*back, &mut g, cuimg::GrayWeights::Bt601).unwrap();
    assert_eq!(s.download(&g).unwrap(), gray);

    // Four channels asked of three: refused, and the managed tensor freed by its deleter.
    let managed = s.upload(&img.view()).unwrap().into_dlpack().unwrap();
    // SAFETY: as above.
    match unsafe { s.image_from_dlpack::<Rgba8>(managed) } {
        Err(Error::InvalidParameter { .. }) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A tensor read as the other element type: refused.
    let t = s.alloc_tensor(TensorShape {
        images: 1,
        channels: 3,
        height: 2,
        width: 2,
        dtype: DType::F32,
        layout: TensorLayout::Nchw,
    });
    let managed = t.unwrap().into_dlpack().unwrap();
    // SAFETY: as above.
    assert!(matches!(unsafe { s.image_from_dlpack::<Rgb8>(managed) }, Err(Error::InvalidParameter { .. })));
}
