//! The serial reference: each element in `cuimg_abi::tensor`'s arithmetic, as the kernels.

use cuimg_abi::tensor::TensorFormat;

use super::{DType, Tensor, TensorShape, TensorSpec};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView};
use crate::pixel::Pixel;

/// `src` as a tensor of one image.
///
/// ```
/// use cuimg::{cpu, DType, Image, Normalize, Rgb8, TensorSpec};
/// let img = Image::<Rgb8>::filled(4, 2, 255);
/// let t = cpu::to_tensor(&img.view(), &TensorSpec::new(DType::F32)).unwrap();
/// assert_eq!(t.shape().dims(), [1, 3, 2, 4]);
/// assert!(t.to_f32().iter().all(|&v| v == 1.0));
/// ```
pub fn to_tensor<P: Pixel>(src: &ImageView<'_, P>, spec: &TensorSpec) -> Result<Tensor> {
    to_tensor_batch(std::slice::from_ref(src), spec)
}

/// `images` as one tensor, image `i` at index `i` (all one size, or padded to
/// `spec.size`).
pub fn to_tensor_batch<P: Pixel>(images: &[ImageView<'_, P>], spec: &TensorSpec) -> Result<Tensor> {
    let (shape, format) = plan::<P>(images, spec)?;
    let mut bytes = vec![0u8; shape.bytes()?];
    for (img, out) in images.iter().zip(bytes.chunks_exact_mut(shape.image_bytes())) {
        for y in 0..shape.height {
            place(out, &shape, y, &row(img, &shape, &format, y));
        }
    }
    Tensor::from_bytes(shape, bytes)
}

/// `images`, each resized to `width` x `height` as `filter`'s reference resizes it, as one
/// tensor: [`crate::cpu::resize`] then [`to_tensor_batch`], the reference of
/// `Stream::resize_to_tensor` (which makes both in one pass).
///
/// ```
/// use cuimg::{cpu, DType, Filter, Image, Normalize, Rgb8, TensorSpec};
/// let img = Image::from_fn(64, 48, |x, y| Rgb8([x as u8, y as u8, 7]));
/// let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET);
/// let filter: Filter = "pil-bilinear".parse().unwrap();
/// let t = cpu::resize_to_tensor(&[img.view()], 16, 12, filter, &spec).unwrap();
/// let small = cpu::resize(&img.view(), 16, 12, filter).unwrap();
/// assert_eq!(t, cpu::to_tensor(&small.view(), &spec).unwrap());
/// ```
pub fn resize_to_tensor<P: Pixel>(
    images: &[ImageView<'_, P>],
    width: u32,
    height: u32,
    filter: crate::Filter,
    spec: &TensorSpec,
) -> Result<Tensor> {
    let resized = images.iter().map(|i| crate::cpu::resize(i, width, height, filter)).collect::<Result<Vec<_>>>()?;
    to_tensor_batch(&resized.iter().map(Image::view).collect::<Vec<_>>(), spec)
}

/// `frames`, each decoded to RGB as `yuv` says ([`crate::cpu::yuv_to_image`]), as
/// [`resize_to_tensor`] makes a tensor of images: the reference of
/// `Stream::yuv_resize_to_tensor` (which decodes, resizes and normalizes in one pass).
pub fn yuv_resize_to_tensor(
    frames: &[&crate::YuvFrame],
    yuv: crate::YuvSpec,
    width: u32,
    height: u32,
    filter: crate::Filter,
    spec: &TensorSpec,
) -> Result<Tensor> {
    let images = frames.iter().map(|f| crate::cpu::yuv_to_image::<crate::Rgb8>(f, yuv)).collect::<Result<Vec<_>>>()?;
    resize_to_tensor(&images.iter().map(Image::view).collect::<Vec<_>>(), width, height, filter, spec)
}

/// The tensor's shape for `images` under `spec`, checked, and the kernels' format.
pub(crate) fn plan<P: Pixel>(images: &[ImageView<'_, P>], spec: &TensorSpec) -> Result<(TensorShape, TensorFormat)> {
    let size = spec.extent(images.iter().map(|i| (i.width(), i.height())))?;
    let shape = spec.shape(images.len(), P::CHANNELS, size);
    shape.bytes()?;
    Ok((shape, spec.format(size)))
}

/// Row `y` of one image's tensor from `img`: its elements, channel by channel (NCHW: the
/// row of each plane in turn) or pixel by pixel (NHWC), as [`place`] takes them.
pub(crate) fn row<P: Pixel>(img: &ImageView<'_, P>, shape: &TensorShape, f: &TensorFormat, y: usize) -> Vec<u8> {
    let (c_n, w) = (P::CHANNELS, shape.width);
    let mut out = vec![0u8; c_n * w * shape.dtype.bytes()];
    // The row's own shape: one image, one row.
    let one = TensorShape { images: 1, height: 1, ..*shape };
    for x in 0..w {
        let inside = x < img.width() as usize && y < img.height() as usize;
        let sx = if f.flip != 0 { (img.width() as usize).wrapping_sub(1 + x) } else { x };
        let px = if inside { Some(img.get(sx as u32, y as u32)) } else { None };
        for c in 0..c_n {
            let bits = match px {
                Some(p) => f.bits(bytemuck::bytes_of(&p)[c], c),
                None => f.element_bits(f.fill),
            };
            put(&mut out, shape.dtype, one.index(0, f.channel(c_n, c), 0, x), bits);
        }
    }
    out
}

/// Row `y`'s elements ([`row`]) into their places in one image's bytes `image`.
pub(crate) fn place(image: &mut [u8], shape: &TensorShape, y: usize, row: &[u8]) {
    let run = shape.width * shape.dtype.bytes();
    match shape.layout {
        super::TensorLayout::Nhwc => {
            let at = shape.index(0, 0, y, 0) * shape.dtype.bytes();
            image[at..at + row.len()].copy_from_slice(row);
        }
        super::TensorLayout::Nchw => {
            for (c, part) in row.chunks_exact(run).enumerate() {
                let at = shape.index(0, c, y, 0) * shape.dtype.bytes();
                image[at..at + run].copy_from_slice(part);
            }
        }
    }
}

/// Element `i` of `out` (of `dtype`) set to `bits` ([`TensorFormat::element_bits`]),
/// little-endian.
fn put(out: &mut [u8], dtype: DType, i: usize, bits: u32) {
    let n = dtype.bytes();
    out[n * i..n * (i + 1)].copy_from_slice(&bits.to_le_bytes()[..n]);
}

/// Image `index` of `tensor` back as a `width` x `height` image (at most the tensor's
/// size, from its top left): each element un-normalized by `spec`, rounded to nearest
/// (ties to even) and clamped.
///
/// ```
/// use cuimg::{cpu, DType, Image, Normalize, Rgb8, TensorSpec};
/// let img = Image::from_fn(5, 3, |x, y| Rgb8([x as u8 * 40, y as u8 * 90, 7]));
/// let spec = TensorSpec::new(DType::F32).normalize(Normalize::IMAGENET);
/// let t = cpu::to_tensor(&img.view(), &spec).unwrap();
/// assert_eq!(cpu::from_tensor::<Rgb8>(&t, 0, &spec, 5, 3).unwrap(), img);
/// ```
pub fn from_tensor<P: Pixel>(tensor: &Tensor, index: usize, spec: &TensorSpec, width: u32, height: u32) -> Result<Image<P>> {
    let f = check_back::<P>(&tensor.shape, index, spec, (width, height))?;
    let shape = tensor.shape;
    let first = index * shape.image_elements();
    let c_n = P::CHANNELS;
    let mut out = Image::<P>::filled(width, height, 0);
    for y in 0..height as usize {
        for x in 0..width as usize {
            let tx = if f.flip != 0 { width as usize - 1 - x } else { x };
            let mut p = P::zeroed();
            for (c, b) in bytemuck::bytes_of_mut(&mut p).iter_mut().enumerate() {
                *b = f.affine.inverse(tensor.get(first + shape.index(0, f.channel(c_n, c), y, tx)), c);
            }
            out.put(x as u32, y as u32, p);
        }
    }
    Ok(out)
}

/// Checks reading image `index` of a tensor of `shape` back into a `size` image of `P`
/// under `spec`; the kernels' format.
pub(crate) fn check_back<P: Pixel>(shape: &TensorShape, index: usize, spec: &TensorSpec, size: (u32, u32)) -> Result<TensorFormat> {
    spec.normalize.check()?;
    crate::validate::non_empty(size.0, size.1)?;
    let bad = |why: String| Err(Error::InvalidParameter { what: "tensor to read back".into(), why });
    if shape.channels != P::CHANNELS {
        return bad(format!("it has {} channels, {} has {}", shape.channels, P::NAME, P::CHANNELS));
    }
    if (shape.dtype, shape.layout) != (spec.dtype, spec.layout) {
        return bad(format!(
            "it is {:?} {:?}, the spec says {:?} {:?}",
            shape.dtype, shape.layout, spec.dtype, spec.layout
        ));
    }
    if index >= shape.images {
        return bad(format!("image {index} of a tensor of {}", shape.images));
    }
    if size.0 as usize > shape.width || size.1 as usize > shape.height {
        return bad(format!("a {}x{} image from a tensor of {}x{}", size.0, size.1, shape.width, shape.height));
    }
    Ok(spec.format((shape.width as u32, shape.height as u32)))
}
