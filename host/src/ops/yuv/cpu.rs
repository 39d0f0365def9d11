//! The serial reference: each unit in `cuimg_abi::yuv`'s arithmetic, as the kernels.

use cuimg_abi::yuv::Frame;

use super::{YuvFrame, YuvLayout, YuvPixel, YuvSpec};
use crate::error::Result;
use crate::image::{Image, ImageView};

/// `frame` as an image of `P`.
///
/// ```
/// use cuimg::{cpu, Rgb8, YuvFrame, YuvLayout, YuvSpec};
/// // A 2x2 NV12 frame: Y 16 (black in limited range), U and V 128.
/// let frame = YuvFrame::from_bytes(YuvLayout::Nv12, 2, 2, vec![16, 16, 16, 16, 128, 128]).unwrap();
/// let img = cpu::yuv_to_image::<Rgb8>(&frame, YuvSpec::default()).unwrap();
/// assert!(img.pixels().iter().all(|p| p.0 == [0, 0, 0]));
/// ```
pub fn yuv_to_image<P: YuvPixel>(frame: &YuvFrame, spec: YuvSpec) -> Result<Image<P>> {
    let f = frame.frame(0);
    let mut out = Image::<P>::filled(frame.width, frame.height, 0);
    let (uw, uh) = f.units();
    for uy in 0..uh {
        decode_units::<P>(frame, &f, spec, uy, 0..uw, |x, y, p| out.put(x, y, p));
    }
    Ok(out)
}

/// Units `xs` of unit row `uy` decoded, each pixel handed to `put(x, y, pixel)`.
pub(crate) fn decode_units<P: YuvPixel>(
    frame: &YuvFrame,
    f: &Frame,
    spec: YuvSpec,
    uy: u32,
    xs: std::ops::Range<u32>,
    mut put: impl FnMut(u32, u32, P),
) {
    let coef = spec.decode();
    let b = &frame.bytes;
    for ux in xs {
        let c = f.chroma(ux, uy);
        let chroma = coef.chroma(b[c.u], b[c.v]);
        for k in 0..f.unit_pixels() {
            let (x, y) = f.unit_pixel(ux, uy, k);
            let luma = b[f.luma(x, y)];
            let mut p = P::zeroed();
            let px = bytemuck::bytes_of_mut(&mut p);
            if P::CHANNELS == 1 {
                px[0] = luma;
            } else {
                let rgb = coef.rgb(luma, chroma);
                let (r, bl) = if P::BGR { (2, 0) } else { (0, 2) };
                (px[r], px[1], px[bl]) = (rgb[0], rgb[1], rgb[2]);
                if P::CHANNELS == 4 {
                    px[3] = 255;
                }
            }
            put(x, y, p);
        }
    }
}

/// `src` as a frame of `layout` (its sides even as the layout needs): each pixel's luma,
/// and each unit's chroma from its top left pixel (4:2:0, as OpenCV) or its pair averaged
/// (4:2:2, as OpenCV).
///
/// ```
/// use cuimg::{cpu, Image, Rgb8, YuvLayout, YuvSpec};
/// let img = Image::<Rgb8>::filled(4, 2, 255);
/// let frame = cpu::image_to_yuv(&img.view(), YuvLayout::I420, YuvSpec::default()).unwrap();
/// assert_eq!(frame.as_bytes(), &[235, 235, 235, 235, 235, 235, 235, 235, 128, 128, 128, 128]);
/// ```
pub fn image_to_yuv<P: YuvPixel>(src: &ImageView<'_, P>, layout: YuvLayout, spec: YuvSpec) -> Result<YuvFrame> {
    let n = layout.frame_bytes(src.width(), src.height())?;
    let mut frame = YuvFrame { bytes: vec![0; n], width: src.width(), height: src.height(), layout };
    let f = layout.frame(src.width(), src.height(), 0);
    let (uw, uh) = f.units();
    for uy in 0..uh {
        for (at, v) in encode_units(src, &f, spec, layout, uy, 0..uw) {
            frame.bytes[at] = v;
        }
    }
    Ok(frame)
}

/// Units `xs` of unit row `uy` encoded: each sample's byte offset in the frame and value.
pub(crate) fn encode_units<P: YuvPixel>(
    src: &ImageView<'_, P>,
    f: &Frame,
    spec: YuvSpec,
    layout: YuvLayout,
    uy: u32,
    xs: std::ops::Range<u32>,
) -> Vec<(usize, u8)> {
    let coef = spec.encode(layout);
    let mut out = Vec::with_capacity(xs.len() * (f.unit_pixels() as usize + 2));
    for ux in xs {
        let mut sums = [0i32; 3];
        for k in 0..f.unit_pixels() {
            let (x, y) = f.unit_pixel(ux, uy, k);
            let p = src.get(x, y);
            let b = bytemuck::bytes_of(&p);
            let rgb = match (P::CHANNELS, P::BGR) {
                (1, _) => [b[0]; 3],
                (_, true) => [b[2], b[1], b[0]],
                _ => [b[0], b[1], b[2]],
            };
            out.push((f.luma(x, y), coef.y(rgb)));
            if k == 0 || (k == 1 && coef.pair != 0) {
                sums = [sums[0] + rgb[0] as i32, sums[1] + rgb[1] as i32, sums[2] + rgb[2] as i32];
            }
        }
        let [u, v] = coef.uv(sums);
        let c = f.chroma(ux, uy);
        out.push((c.u, u));
        out.push((c.v, v));
    }
    out
}
