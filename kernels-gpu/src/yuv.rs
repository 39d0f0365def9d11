//! YUV frames to and from 8-bit images (`cuimg_abi::yuv`): one thread per unit (a 2x2 block
//! for 4:2:0, a pair for 4:2:2), in the arithmetic `cuimg_abi::yuv` defines once for the
//! kernels and the CPU reference.

use crate::device::thread::{grid_stride_x, grid_stride_y};
use cuimg_abi::yuv::{YuvDecode, YuvEncode};

/// Every unit of the frame into the image at `dst` (rows `pitch` apart): `C` 1 copies the
/// luma; 3 and 4 decode (alpha 255), blue first where `bgr`.
///
/// # Safety
/// The frame holds `frame.bytes()` readable bytes; `dst` holds `height` writable rows of
/// `width` pixels of `C` bytes, `pitch` apart; the frame's sides are even as its layout
/// needs.
#[inline(always)]
unsafe fn decode<const C: usize>(p: YuvDecode) {
    let f = p.frame;
    let (uw, uh) = f.units();
    let src = f.data as usize as *const u8;
    for uy in grid_stride_y(uh as u64) {
        for ux in grid_stride_x(uw as u64) {
            let (ux, uy) = (ux as u32, uy as u32);
            let c = f.chroma(ux, uy);
            // SAFETY: the unit's samples lie in the frame (its layout's offsets).
            let (cu, cv) = unsafe { (*src.add(c.u), *src.add(c.v)) };
            let chroma = p.coef.chroma(cu, cv);
            for k in 0..f.unit_pixels() {
                let (x, y) = f.unit_pixel(ux, uy, k);
                // SAFETY: as above.
                let luma = unsafe { *src.add(f.luma(x, y)) };
                let out = (p.dst + y as u64 * p.pitch + x as u64 * C as u64) as usize as *mut u8;
                // SAFETY: (x, y) is a pixel of the image (units cover it exactly).
                unsafe {
                    if C == 1 {
                        *out = luma;
                    } else {
                        let rgb = p.coef.rgb(luma, chroma);
                        let (r, b) = if p.bgr != 0 { (2, 0) } else { (0, 2) };
                        *out.add(r) = rgb[0];
                        *out.add(1) = rgb[1];
                        *out.add(b) = rgb[2];
                        if C == 4 {
                            *out.add(3) = 255;
                        }
                    }
                }
            }
        }
    }
}

/// The image at `src` into every unit of the frame: each pixel's luma, and the unit's
/// chroma from its top left pixel (`coef.pair` 0) or its pair's sums (1). Gray pixels are
/// red, green and blue of their value.
///
/// # Safety
/// As [`decode`], the image readable and the frame writable.
#[inline(always)]
unsafe fn encode<const C: usize>(p: YuvEncode) {
    let f = p.frame;
    let (uw, uh) = f.units();
    let dst = f.data as usize as *mut u8;
    for uy in grid_stride_y(uh as u64) {
        for ux in grid_stride_x(uw as u64) {
            let (ux, uy) = (ux as u32, uy as u32);
            let mut sums = [0i32; 3];
            for k in 0..f.unit_pixels() {
                let (x, y) = f.unit_pixel(ux, uy, k);
                let at = (p.src + y as u64 * p.pitch + x as u64 * C as u64) as usize as *const u8;
                // SAFETY: (x, y) is a pixel of the image.
                let rgb = unsafe {
                    if C == 1 {
                        [*at; 3]
                    } else if p.bgr != 0 {
                        [*at.add(2), *at.add(1), *at]
                    } else {
                        [*at, *at.add(1), *at.add(2)]
                    }
                };
                // SAFETY: the pixel's luma lies in the frame.
                unsafe { *dst.add(f.luma(x, y)) = p.coef.y(rgb) };
                if k == 0 || (k == 1 && p.coef.pair != 0) {
                    sums = [sums[0] + rgb[0] as i32, sums[1] + rgb[1] as i32, sums[2] + rgb[2] as i32];
                }
            }
            let [cu, cv] = p.coef.uv(sums);
            let c = f.chroma(ux, uy);
            // SAFETY: the unit's chroma lies in the frame.
            unsafe {
                *dst.add(c.u) = cu;
                *dst.add(c.v) = cv;
            }
        }
    }
}

macro_rules! yuv_kernels {
    ($([$dec:ident, $dec_marker:ident, $enc:ident, $enc_marker:ident, $c:literal]),*) => {
        $(
            /// See [`decode`]; 2-D over the units.
            ///
            /// # Safety
            /// [`decode`]'s contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $dec(p: YuvDecode) {
                // SAFETY: forwarded contract.
                unsafe { decode::<$c>(p) }
            }
            abi!(cuimg_abi::yuv::$dec_marker, $dec);

            /// See [`encode`]; 2-D over the units.
            ///
            /// # Safety
            /// [`encode`]'s contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $enc(p: YuvEncode) {
                // SAFETY: forwarded contract.
                unsafe { encode::<$c>(p) }
            }
            abi!(cuimg_abi::yuv::$enc_marker, $enc);
        )*
    };
}

yuv_kernels!(
    [yuv_decode_c1, YuvDecodeC1, yuv_encode_c1, YuvEncodeC1, 1],
    [yuv_decode_c3, YuvDecodeC3, yuv_encode_c3, YuvEncodeC3, 3],
    [yuv_decode_c4, YuvDecodeC4, yuv_encode_c4, YuvEncodeC4, 4]
);
