//! cuimg and tch (PyTorch's C++ library, libtorch) in one binary, by raw pointers both ways:
//! cuimg resizes and normalizes photos into its own tensor, which tch takes with
//! `Tensor::from_blob`; tch makes an image, which cuimg takes with
//! `DeviceImage::from_raw_parts`. Both sides use the device's primary context, so the
//! addresses are good on both; each side waits for the other's work before touching it.
use cuimg::{Filter, GrayWeights, Image, Normalize, Rgb8, TensorLayout, TensorSpec};
use tch::{Device, Kind, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !tch::Cuda::is_available() {
        return Err("tch sees no CUDA device (libtorch_cuda not loaded?)".into());
    }
    let gpu = cuimg::Gpu::new()?;
    let s = gpu.stream()?;

    // cuimg -> tch: three photos to one NCHW f16 batch of 224x224, ImageNet's mean and std.
    let photos: Vec<Image<Rgb8>> = [(640, 480), (500, 375), (333, 500)]
        .iter()
        .map(|&(w, h)| Image::from_fn(w, h, |x, y| Rgb8([(x * 7 + y) as u8, (x ^ y) as u8, (x + 3 * y) as u8])))
        .collect();
    let views: Vec<_> = photos.iter().map(Image::view).collect();
    let spec = TensorSpec::new(cuimg::DType::F16).layout(TensorLayout::Nchw).normalize(Normalize::IMAGENET);
    let filter: Filter = "pil-bilinear".parse()?;
    let n = photos.len();
    let src: Vec<_> = views.iter().map(|v| s.upload(v)).collect::<cuimg::Result<_>>()?;
    let dviews: Vec<_> = src.iter().map(|d| d.view()).collect();
    let mut t = s.alloc_tensor(spec.shape_of::<Rgb8>(n, 224, 224))?;
    s.resize_to_tensor(&dviews, 224, 224, filter, &spec, &mut t, 0)?;
    s.synchronize()?; // tch's stream reads after cuimg's work
    let dims: Vec<i64> = t.shape().dims().iter().map(|&d| d as i64).collect();
    let strides = [dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1];
    // SAFETY: `t` is cuimg's allocation of the primary context (libtorch's too), packed in
    // `dims`, f16, finished (synchronized above), and outlives `x` and everything made from it
    // (`x` is dropped at the end of this block, before `t`).
    let (got, mean) = {
        let x = unsafe { Tensor::from_blob(t.as_raw_ptr() as *const u8, &dims, &strides, Kind::Half, Device::Cuda(0)) };
        let bits = x.view_dtype(Kind::Int16).flatten(0, -1).to_device(Device::Cpu);
        let got: Vec<i16> = Vec::<i16>::try_from(&bits)?;
        (got, x.to_kind(Kind::Float).mean(Kind::Float).double_value(&[]))
    };
    let want = cuimg::cpu::resize_to_tensor(&views, 224, 224, filter, &spec)?;
    let want: Vec<i16> = want.as_bytes().chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
    assert_eq!(got, want, "tch reads cuimg's elements");
    drop(t);

    // tch -> cuimg: an image libtorch made (HWC bytes), turned gray by cuimg in place.
    tch::manual_seed(29);
    let (w, h) = (641i64, 479i64);
    let img = Tensor::randint(256, [h, w, 3], (Kind::Uint8, Device::Cuda(0)));
    tch::Cuda::synchronize(0); // cuimg's stream reads after libtorch's work
    let bytes: Vec<u8> = Vec::<u8>::try_from(&img.flatten(0, -1).to_device(Device::Cpu))?;
    // SAFETY: `img` is libtorch's allocation of the primary context holding `h` packed rows of
    // `w` RGB pixels, contiguous (`randint` made it so), finished, alive until after `theirs`
    // is dropped (which waits for cuimg's work).
    let gray = {
        let theirs = unsafe { cuimg::DeviceImage::<Rgb8>::from_raw_parts(&s, img.data_ptr() as u64, w as u32, h as u32)? };
        let mut gray = s.alloc::<cuimg::Gray8>(w as u32, h as u32)?;
        s.grayscale(&theirs, &mut gray, GrayWeights::Bt601)?;
        s.download(&gray)?
    };
    let photo = Image::<Rgb8>::from_bytes(w as u32, h as u32, &bytes)?;
    assert_eq!(gray, cuimg::cpu::grayscale(&photo.view(), GrayWeights::Bt601)?, "cuimg reads libtorch's bytes");

    println!(
        "tch-beside-cuimg: {n} photos resized into a cuimg tensor read by tch (Tensor::from_blob), equal to the \
         reference, mean {mean:.4}; a {w}x{h} libtorch image turned gray by cuimg (DeviceImage::from_raw_parts), \
         equal to the reference"
    );
    Ok(())
}
