//! Every operation on all CPU cores: the fallback where there is no GPU.
//!
//! The same results as [`crate::cpu`], byte for byte, and the same errors: each function
//! cuts the image into bands of rows, runs the serial reference of `cpu` on each band on a
//! core of its own (rayon), and joins the bands (histograms are summed, equalization tables
//! built from the whole image's histogram). `cpu` stays the plain, obviously-correct oracle
//! the tests compare against; this module is what to call for speed without a GPU.
//!
//! ```
//! use cuimg::{GrayWeights, Image, Rgb8};
//! let img = Image::<Rgb8>::from_fn(640, 480, |x, y| Rgb8([x as u8, y as u8, 9]));
//! let gpu = match cuimg::Gpu::new() {
//!     Ok(gpu) => Some(gpu),
//!     Err(e) if e.is_no_gpu() => None, // no GPU here: all cores instead
//!     Err(e) => return Err(e),         // a GPU that fails is an error, not a fallback
//! };
//! let gray = match &gpu {
//!     Some(gpu) => gpu.grayscale(&img.view(), GrayWeights::Bt601)?,
//!     None => cuimg::par::grayscale(&img.view(), GrayWeights::Bt601)?,
//! };
//! assert_eq!(gray, cuimg::cpu::grayscale(&img.view(), GrayWeights::Bt601)?);
//! # Ok::<(), cuimg::Error>(())
//! ```

use bytemuck::Pod;
use rayon::prelude::*;

use crate::cpu;
use crate::error::Result;
use crate::image::{Image, ImageView, Rect};
use crate::ops::clahe::Clahe;
use crate::ops::clahe::cpu::{apply_band, clahe_color_with, tile_lut, tiles};
use crate::ops::equalize::EqualizeMode;
use crate::ops::equalize::cpu::{channel_luts, shift_by_luma};
use crate::ops::grayscale::GrayWeights;
use crate::ops::histogram::{Histogram, equalization_lut};
use crate::ops::lut::Lut;
use crate::pixel::{Color, Gray, Gray8, Pixel};
use crate::validate;

/// Rows per band: enough bands for every core to take several (load balance), none so thin
/// that the per-band overhead shows.
fn band_rows(height: u32) -> u32 {
    let bands = 4 * rayon::current_num_threads() as u32;
    height.div_ceil(bands).max(16)
}

/// `src` cut into bands of whole rows, top to bottom, each with its first row.
fn bands<'a, P: Pixel>(src: &ImageView<'a, P>) -> Vec<(u32, ImageView<'a, P>)> {
    let rows = band_rows(src.height());
    (0..src.height())
        .step_by(rows as usize)
        .map(|y| (y, src.roi(Rect::new(0, y, src.width(), rows.min(src.height() - y))).expect("bands lie inside")))
        .collect()
}

/// Runs `op` on every band of `src` at once and stacks the results, top to bottom; the
/// error of the first band that fails, as the serial loop would report it.
fn per_band<P: Pixel, Q: Pixel>(
    src: &ImageView<'_, P>,
    op: impl Fn(u32, &ImageView<'_, P>) -> Result<Image<Q>> + Sync,
) -> Result<Image<Q>> {
    validate::non_empty(src.width(), src.height())?;
    let parts: Vec<Result<Image<Q>>> = bands(src).par_iter().map(|(top, band)| op(*top, band)).collect();
    let mut pixels = Vec::with_capacity(src.width() as usize * src.height() as usize);
    for part in parts {
        pixels.extend_from_slice(part?.pixels());
    }
    Image::from_pixels(src.width(), src.height(), pixels)
}

/// [`cpu::grayscale`] on all cores.
pub fn grayscale<P: Color>(src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<Gray8>> {
    per_band(src, |_, band| cpu::grayscale(band, weights))
}

/// [`cpu::black_and_white`] on all cores.
pub fn black_and_white<P: Color>(src: &ImageView<'_, P>, weights: GrayWeights) -> Result<Image<P>> {
    per_band(src, |_, band| cpu::black_and_white(band, weights))
}

/// [`cpu::apply_lut`] on all cores.
pub fn apply_lut<P: Pixel>(src: &ImageView<'_, P>, lut: &Lut) -> Result<Image<P>> {
    per_band(src, |_, band| cpu::apply_lut(band, lut))
}

/// [`cpu::apply_luts`] on all cores.
pub fn apply_luts<P: Pixel>(src: &ImageView<'_, P>, luts: &[Lut]) -> Result<Image<P>> {
    per_band(src, |_, band| cpu::apply_luts(band, luts))
}

/// [`cpu::histogram`] on all cores: the bands' histograms, summed.
pub fn histogram<P: Pixel>(src: &ImageView<'_, P>) -> Result<Histogram> {
    validate::non_empty(src.width(), src.height())?;
    validate::countable(src.width(), src.height())?;
    bands(src).par_iter().map(|(_, band)| cpu::histogram(band)).try_reduce(
        || Histogram::zeros(P::CHANNELS),
        |mut a, b| {
            for c in 0..P::CHANNELS {
                for (x, y) in a.channel_mut(c).iter_mut().zip(b.channel(c)) {
                    *x += y; // no overflow: `countable` bounds the whole image's count
                }
            }
            Ok(a)
        },
    )
}

/// [`cpu::clahe`] on all cores: the tiles' tables at once, then the bands of rows at once.
pub fn clahe(src: &ImageView<'_, Gray8>, params: Clahe) -> Result<Image<Gray8>> {
    let plan = params.plan(src.width(), src.height())?;
    let grid: Vec<(u32, u32)> = tiles(params.tiles()).collect();
    let luts: Vec<[u8; 256]> = grid.par_iter().map(|&t| tile_lut(src, &plan, t)).collect();
    per_band(src, |top, band| apply_band(band, top, &luts, params.tiles(), &plan))
}

/// [`cpu::clahe_color`] on all cores.
pub fn clahe_color<P: Color>(src: &ImageView<'_, P>, params: Clahe, mode: EqualizeMode) -> Result<Image<P>> {
    clahe_color_with(src, params, mode, |gray| clahe(gray, params))
}

/// [`cpu::equalize`] on all cores.
pub fn equalize<P: Gray>(src: &ImageView<'_, P>) -> Result<Image<P>> {
    equalize_per_channel(src)
}

fn equalize_per_channel<P: Pixel>(src: &ImageView<'_, P>) -> Result<Image<P>> {
    apply_luts(src, &channel_luts::<P>(&histogram(src)?))
}

/// [`cpu::equalize_color`] on all cores.
pub fn equalize_color<P: Color>(src: &ImageView<'_, P>, mode: EqualizeMode) -> Result<Image<P>> {
    match mode {
        EqualizeMode::PerChannel => equalize_per_channel(src),
        EqualizeMode::Luma => {
            validate::countable(src.width(), src.height())?;
            let luma = grayscale(src, GrayWeights::Bt601)?;
            let lut = equalization_lut(histogram(&luma.view())?.channel(0));
            let width = src.width() as usize;
            per_band(src, |top, band| {
                let first = top as usize * width; // the band's rows of the luma
                Ok(shift_by_luma(band, &luma.pixels()[first..first + width * band.height() as usize], &lut))
            })
        }
    }
}

/// [`cpu::gather`] on all cores (the indices are checked first, in order, so the error names
/// the same first bad position).
pub fn gather<T: Pod + Send + Sync>(src: &[T], idx: &[u32]) -> Result<Vec<T>> {
    crate::ops::gather::check_source(src.len())?;
    crate::ops::gather::first_bad_index(idx, src.len())?;
    Ok(idx.par_iter().map(|&j| src[j as usize]).collect())
}

/// [`cpu::orient`] on all cores: bands of output rows, each read from the source.
pub fn orient<P: Pixel>(src: &ImageView<'_, P>, o: crate::Orientation) -> Result<Image<P>> {
    validate::non_empty(src.width(), src.height())?;
    let (w, h) = o.size(src.width(), src.height());
    let m = o.mapping();
    let (sw, sh) = (src.width() as u64, src.height() as u64);
    let rows = band_rows(h) as usize;
    let mut pixels = vec![P::zeroed(); w as usize * h as usize];
    pixels.par_chunks_mut(rows * w as usize).enumerate().for_each(|(band, out)| {
        for (i, p) in out.iter_mut().enumerate() {
            let (x, y) = ((i % w as usize) as u64, (band * rows + i / w as usize) as u64);
            let (sx, sy) = m.source(x, y, sw, sh);
            *p = src.get(sx as u32, sy as u32);
        }
    });
    Image::from_pixels(w, h, pixels)
}

/// [`cpu::grayscale_histogram`] on all cores: gray by bands, then its histogram by bands
/// (two passes; the same bytes and counts).
pub fn grayscale_histogram<P: Color>(
    src: &ImageView<'_, P>,
    weights: GrayWeights,
) -> Result<(Image<Gray8>, Histogram)> {
    let gray = grayscale(src, weights)?;
    let hist = histogram(&gray.view())?;
    Ok((gray, hist))
}

/// [`cpu::resize`] on all cores: bands of output rows (Pillow's first pass, when there are
/// two, on all cores before them).
pub fn resize<P: Pixel>(src: &ImageView<'_, P>, width: u32, height: u32, filter: crate::Filter) -> Result<Image<P>> {
    crate::ops::resize::exec::on_host(src, (width, height), filter, None, true)
}

/// [`cpu::copy_make_border`] on all cores: bands of output rows.
pub fn copy_make_border<P: Pixel>(
    src: &ImageView<'_, P>,
    pad: crate::Padding,
    border: crate::Border,
) -> Result<Image<P>> {
    crate::ops::border::cpu::on_host(src, pad, border, true)
}

/// [`cpu::resize_layout`] on all cores.
pub fn resize_layout<P: Pixel>(
    src: &ImageView<'_, P>,
    filter: crate::Filter,
    layout: &crate::ResizeLayout,
) -> Result<Image<P>> {
    crate::ops::resize::exec::layout_on_host(src, filter, layout, true)
}

/// [`cpu::resize_planar`] on all cores.
pub fn resize_planar(
    src: &ImageView<'_, Gray8>,
    planes: u32,
    width: u32,
    height: u32,
    filter: crate::Filter,
) -> Result<Image<Gray8>> {
    crate::ops::resize::exec::planar_on_host(src, planes, (width, height), filter, true)
}

/// [`cpu::resize_box`] on all cores.
pub fn resize_box<P: Pixel>(
    src: &ImageView<'_, P>,
    width: u32,
    height: u32,
    filter: crate::Filter,
    bx: crate::SourceBox,
) -> Result<Image<P>> {
    crate::ops::resize::exec::on_host(src, (width, height), filter, Some(bx), true)
}

/// [`cpu::warp`] on all cores: bands of output rows.
pub fn warp<P: Pixel>(
    src: &ImageView<'_, P>,
    warp: &crate::Warp,
    width: u32,
    height: u32,
    filter: crate::WarpFilter,
    border: crate::Border,
) -> Result<Image<P>> {
    crate::ops::warp::cpu::run(src, warp, (width, height), filter, border, true)
}

/// [`cpu::to_tensor`] on all cores.
pub fn to_tensor<P: Pixel>(src: &ImageView<'_, P>, spec: &crate::TensorSpec) -> Result<crate::Tensor> {
    to_tensor_batch(std::slice::from_ref(src), spec)
}

/// [`cpu::to_tensor_batch`] on all cores: every row of every image at once, each placed
/// in the tensor after.
pub fn to_tensor_batch<P: Pixel>(images: &[ImageView<'_, P>], spec: &crate::TensorSpec) -> Result<crate::Tensor> {
    use crate::ops::tensor::cpu::{place, plan, row};
    let (shape, format) = plan::<P>(images, spec)?;
    let rows: Vec<Vec<u8>> = (0..images.len() * shape.height)
        .into_par_iter()
        .map(|i| row(&images[i / shape.height], &shape, &format, i % shape.height))
        .collect();
    let mut bytes = vec![0u8; shape.bytes()?];
    for (n, out) in bytes.chunks_exact_mut(shape.image_bytes()).enumerate() {
        for y in 0..shape.height {
            place(out, &shape, y, &rows[n * shape.height + y]);
        }
    }
    crate::Tensor::from_bytes(shape, bytes)
}

/// [`cpu::resize_to_tensor`] on all cores: the images resized at once (each by
/// [`resize`]), then [`to_tensor_batch`].
pub fn resize_to_tensor<P: Pixel>(
    images: &[ImageView<'_, P>],
    width: u32,
    height: u32,
    filter: crate::Filter,
    spec: &crate::TensorSpec,
) -> Result<crate::Tensor> {
    let resized = images.par_iter().map(|i| resize(i, width, height, filter)).collect::<Result<Vec<_>>>()?;
    to_tensor_batch(&resized.iter().map(Image::view).collect::<Vec<_>>(), spec)
}

/// [`cpu::yuv_resize_to_tensor`] on all cores: the frames decoded at once (each by
/// [`yuv_to_image`]), then [`resize_to_tensor`].
pub fn yuv_resize_to_tensor(
    frames: &[&crate::YuvFrame],
    yuv: crate::YuvSpec,
    width: u32,
    height: u32,
    filter: crate::Filter,
    spec: &crate::TensorSpec,
) -> Result<crate::Tensor> {
    let images = frames.par_iter().map(|f| yuv_to_image::<crate::Rgb8>(f, yuv)).collect::<Result<Vec<_>>>()?;
    resize_to_tensor(&images.iter().map(Image::view).collect::<Vec<_>>(), width, height, filter, spec)
}

/// [`cpu::yuv_to_image`] on all cores: rows of units at once.
pub fn yuv_to_image<P: crate::YuvPixel>(frame: &crate::YuvFrame, spec: crate::YuvSpec) -> Result<Image<P>> {
    use crate::ops::yuv::cpu::decode_units;
    let f = frame.frame(0);
    let (uw, uh) = f.units();
    let rows: Vec<Vec<(u32, u32, P)>> = (0..uh)
        .into_par_iter()
        .map(|uy| {
            let mut v = Vec::with_capacity(uw as usize * f.unit_pixels() as usize);
            decode_units::<P>(frame, &f, spec, uy, 0..uw, |x, y, p| v.push((x, y, p)));
            v
        })
        .collect();
    let mut out = Image::<P>::filled(frame.width(), frame.height(), 0);
    for (x, y, p) in rows.into_iter().flatten() {
        out.put(x, y, p);
    }
    Ok(out)
}

/// [`cpu::image_to_yuv`] on all cores: rows of units at once.
pub fn image_to_yuv<P: crate::YuvPixel>(
    src: &ImageView<'_, P>,
    layout: crate::YuvLayout,
    spec: crate::YuvSpec,
) -> Result<crate::YuvFrame> {
    use crate::ops::yuv::cpu::encode_units;
    let n = layout.frame_bytes(src.width(), src.height())?;
    let f = layout.frame(src.width(), src.height(), 0);
    let (uw, uh) = f.units();
    let rows: Vec<Vec<(usize, u8)>> =
        (0..uh).into_par_iter().map(|uy| encode_units(src, &f, spec, layout, uy, 0..uw)).collect();
    let mut bytes = vec![0; n];
    for (at, v) in rows.into_iter().flatten() {
        bytes[at] = v;
    }
    crate::YuvFrame::from_bytes(layout, src.width(), src.height(), bytes)
}
