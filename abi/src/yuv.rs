//! YUV frames to and from RGB (issue 29, part 3). Where each sample of a frame lies
//! ([`Frame`]) and the fixed-point arithmetic ([`Decode`], [`Encode`]) live here, once,
//! for the kernels and the CPU reference. BT.601 limited range is OpenCV's own
//! (`color_yuv.simd.hpp`: 20-bit coefficients for 4:2:0 and decoding, 14-bit averaged pairs
//! for its 4:2:2 encoder); the other matrices and full range use the same forms with
//! coefficients from the standards, rounded once on the host.

/// Frame layouts: 4:2:0 two-plane (`NV12`: U then V interleaved; `NV21`: V then U),
/// 4:2:0 three-plane (`I420`: U plane then V; `YV12`: V then U), 4:2:2 packed (`YUYV`:
/// Y0 U Y1 V; `UYVY`: U Y0 V Y1). Every plane is packed: its rows as wide as its samples.
pub const NV12: u32 = 0;
pub const NV21: u32 = 1;
pub const I420: u32 = 2;
pub const YV12: u32 = 3;
pub const YUYV: u32 = 4;
pub const UYVY: u32 = 5;

/// A frame's place and shape: `layout` one of the constants above; `width` and `height`
/// are the image's (even: both for 4:2:0, the width for 4:2:2).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub data: u64,
    pub width: u32,
    pub height: u32,
    pub layout: u32,
    pub _pad: u32,
}

/// Where the chroma of one unit lies (a 2x2 block of pixels for 4:2:0, a pair for 4:2:2,
/// sharing one U and one V), as byte offsets from the frame's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chroma {
    pub u: usize,
    pub v: usize,
}

impl Frame {
    pub const fn is_420(&self) -> bool {
        self.layout < YUYV
    }

    /// Units across and down.
    pub const fn units(&self) -> (u32, u32) {
        if self.is_420() { (self.width / 2, self.height / 2) } else { (self.width / 2, self.height) }
    }

    /// Bytes of the frame.
    pub const fn bytes(&self) -> u64 {
        let px = self.width as u64 * self.height as u64;
        if self.is_420() { px + px / 2 } else { px * 2 }
    }

    /// The byte offset of pixel `(x, y)`'s luma.
    #[inline(always)]
    pub const fn luma(&self, x: u32, y: u32) -> usize {
        let (w, x, y) = (self.width as usize, x as usize, y as usize);
        match self.layout {
            YUYV => y * 2 * w + 2 * x,
            UYVY => y * 2 * w + 2 * x + 1,
            _ => y * w + x,
        }
    }

    /// Where unit `(ux, uy)`'s chroma lies.
    #[inline(always)]
    pub const fn chroma(&self, ux: u32, uy: u32) -> Chroma {
        let (w, h) = (self.width as usize, self.height as usize);
        let (ux, uy) = (ux as usize, uy as usize);
        let (plane, quarter) = (w * h, w * h / 4);
        let (u, v) = match self.layout {
            NV12 => (plane + uy * w + 2 * ux, plane + uy * w + 2 * ux + 1),
            NV21 => (plane + uy * w + 2 * ux + 1, plane + uy * w + 2 * ux),
            I420 => (plane + uy * (w / 2) + ux, plane + quarter + uy * (w / 2) + ux),
            YV12 => (plane + quarter + uy * (w / 2) + ux, plane + uy * (w / 2) + ux),
            YUYV => (uy * 2 * w + 4 * ux + 1, uy * 2 * w + 4 * ux + 3),
            _ => (uy * 2 * w + 4 * ux, uy * 2 * w + 4 * ux + 2),
        };
        Chroma { u, v }
    }

    /// The pixels of unit `(ux, uy)`: `(x, y)` of its `k`-th (left to right, then the row
    /// below for 4:2:0), for `k` below [`Frame::unit_pixels`].
    #[inline(always)]
    pub const fn unit_pixel(&self, ux: u32, uy: u32, k: u32) -> (u32, u32) {
        if self.is_420() { (2 * ux + (k & 1), 2 * uy + (k >> 1)) } else { (2 * ux + (k & 1), uy) }
    }

    /// Pixels of a unit: 4 (4:2:0) or 2 (4:2:2).
    pub const fn unit_pixels(&self) -> u32 {
        if self.is_420() { 4 } else { 2 }
    }
}

/// Where a frame's samples lie, in one form for every layout: pixel `(x, y)`'s luma at
/// `y * luma_pitch + x * luma_step + luma_at`, its chroma at `cy * chroma_pitch + (x / 2) *
/// chroma_step + u_at` (and `v_at`), `cy` its chroma row (`y / 2` for 4:2:0, `y` for 4:2:2).
/// The same offsets as [`Frame::luma`] and [`Frame::chroma`] (a test checks every layout),
/// without a branch on the layout: for kernels that read pixels one at a time (the resize
/// of frames). Offsets are 32-bit: frames of up to 4 GiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides {
    pub luma_pitch: u32,
    pub luma_step: u32,
    pub luma_at: u32,
    pub chroma_pitch: u32,
    pub chroma_step: u32,
    pub u_at: u32,
    pub v_at: u32,
}

impl Frame {
    /// The frame's [`Strides`].
    #[inline(always)]
    pub const fn strides(&self) -> Strides {
        let (w, plane) = (self.width, self.width * self.height);
        let quarter = plane / 4;
        let (luma_pitch, luma_step, luma_at) = match self.layout {
            YUYV => (2 * w, 2, 0),
            UYVY => (2 * w, 2, 1),
            _ => (w, 1, 0),
        };
        let (chroma_pitch, chroma_step, u_at, v_at) = match self.layout {
            NV12 => (w, 2, plane, plane + 1),
            NV21 => (w, 2, plane + 1, plane),
            I420 => (w / 2, 1, plane, plane + quarter),
            YV12 => (w / 2, 1, plane + quarter, plane),
            YUYV => (2 * w, 4, 1, 3),
            _ => (2 * w, 4, 0, 2),
        };
        Strides { luma_pitch, luma_step, luma_at, chroma_pitch, chroma_step, u_at, v_at }
    }

    /// Pixel row `y`'s chroma row.
    #[inline(always)]
    pub const fn chroma_row(&self, y: u32) -> u32 {
        if self.is_420() { y / 2 } else { y }
    }
}

/// YUV to RGB, OpenCV's form: with `uu = u - 128`, `vv = v - 128`, `yy = max(0, y -
/// y_offset) * cy`, each of `R = (yy + cvr*vv + 2^19) >> 20`, `G = (yy + cvg*vv + cug*uu +
/// 2^19) >> 20`, `B = (yy + cub*uu + 2^19) >> 20` saturated to a byte.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decode {
    pub y_offset: i32,
    pub cy: i32,
    pub cvr: i32,
    pub cvg: i32,
    pub cug: i32,
    pub cub: i32,
}

/// Bits of the decoder's fixed point.
pub const DECODE_SHIFT: u32 = 20;

impl Decode {
    /// OpenCV's `ITUR_BT_601_*` (1.164, 1.596, -0.813, -0.391, 2.018 times 2^20).
    pub const BT601_LIMITED: Decode =
        Decode { y_offset: 16, cy: 1220542, cvr: 1673527, cvg: -852492, cug: -409993, cub: 2116026 };

    /// The unit's shared chroma terms `[ruv, guv, buv]` (rounding included).
    #[inline(always)]
    pub const fn chroma(&self, u: u8, v: u8) -> [i32; 3] {
        let (uu, vv) = (u as i32 - 128, v as i32 - 128);
        let half = 1 << (DECODE_SHIFT - 1);
        [half + self.cvr * vv, half + self.cvg * vv + self.cug * uu, half + self.cub * uu]
    }

    /// One pixel's `[R, G, B]` from its luma and its unit's [`Decode::chroma`].
    #[inline(always)]
    pub const fn rgb(&self, y: u8, c: [i32; 3]) -> [u8; 3] {
        let d = y as i32 - self.y_offset;
        let yy = (if d > 0 { d } else { 0 }) * self.cy;
        [sat((yy + c[0]) >> DECODE_SHIFT), sat((yy + c[1]) >> DECODE_SHIFT), sat((yy + c[2]) >> DECODE_SHIFT)]
    }
}

/// RGB to YUV: `Y = (cry*r + cgy*g + cby*b + (y_offset << shift) + 2^(shift-1)) >> shift`
/// per pixel; `U` and `V` the same form with `cr*`, `cg*`, `cb*` and 128 over the sums of
/// the unit's chroma pixels (`pair` 0: the top left pixel alone, OpenCV's 4:2:0; 1: the
/// pair's two, OpenCV's 4:2:2, with halved coefficients), each saturated to a byte.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encode {
    pub shift: u32,
    pub pair: u32,
    pub y_offset: i32,
    pub cry: i32,
    pub cgy: i32,
    pub cby: i32,
    pub cru: i32,
    pub cgu: i32,
    pub cbu: i32,
    pub crv: i32,
    pub cgv: i32,
    pub cbv: i32,
}

impl Encode {
    /// OpenCV's RGB to YUV 4:2:0 (`ITUR_BT_601_C*`, 20 bits; V's red weight is its `CBU`).
    pub const BT601_LIMITED_420: Encode = Encode {
        shift: 20,
        pair: 0,
        y_offset: 16,
        cry: 269484,
        cgy: 528482,
        cby: 102760,
        cru: -155188,
        cgu: -305135,
        cbu: 460324,
        crv: 460324,
        cgv: -385875,
        cbv: -74448,
    };

    /// OpenCV's RGB to YUV 4:2:2 (`*2Y422`, `*2U422`, 14 bits, the pair averaged).
    pub const BT601_LIMITED_422: Encode = Encode {
        shift: 14,
        pair: 1,
        y_offset: 16,
        cry: 4211,
        cgy: 8258,
        cby: 1606,
        cru: -1212,
        cgu: -2384,
        cbu: 3596,
        crv: 3596,
        cgv: -3015,
        cbv: -582,
    };

    #[inline(always)]
    pub const fn y(&self, p: [u8; 3]) -> u8 {
        let s = self.cry * p[0] as i32 + self.cgy * p[1] as i32 + self.cby * p[2] as i32;
        sat((s + (self.y_offset << self.shift) + (1 << (self.shift - 1))) >> self.shift)
    }

    /// `[U, V]` of a unit whose chroma pixels sum to `s` (`[r, g, b]` sums).
    #[inline(always)]
    pub const fn uv(&self, s: [i32; 3]) -> [u8; 2] {
        let base = (128 << self.shift) + (1 << (self.shift - 1));
        let u = self.cru * s[0] + self.cgu * s[1] + self.cbu * s[2] + base;
        let v = self.crv * s[0] + self.cgv * s[1] + self.cbv * s[2] + base;
        [sat(u >> self.shift), sat(v >> self.shift)]
    }
}

/// `saturate_cast<uchar>(int)`.
#[inline(always)]
const fn sat(x: i32) -> u8 {
    if x < 0 {
        0
    } else if x > 255 {
        255
    } else {
        x as u8
    }
}

/// YUV frame to image: one thread per unit, 2-D over the units.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct YuvDecode {
    pub frame: Frame,
    pub dst: u64,
    pub pitch: u64,
    /// 1: blue first (BGR, BGRA).
    pub bgr: u32,
    pub _pad: u32,
    pub coef: Decode,
}

/// Image to YUV frame: one thread per unit, 2-D over the units.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct YuvEncode {
    pub frame: Frame,
    pub src: u64,
    pub pitch: u64,
    pub bgr: u32,
    pub _pad: u32,
    pub coef: Encode,
}

kernels! {
    /// Gray: the luma plane itself (OpenCV's `COLOR_YUV2GRAY_*`).
    YuvDecodeC1 = yuv_decode_c1(YuvDecode);
    YuvDecodeC3 = yuv_decode_c3(YuvDecode);
    YuvDecodeC4 = yuv_decode_c4(YuvDecode);
    /// Gray: each pixel encoded as red, green and blue of its value.
    YuvEncodeC1 = yuv_encode_c1(YuvEncode);
    YuvEncodeC3 = yuv_encode_c3(YuvEncode);
    YuvEncodeC4 = yuv_encode_c4(YuvEncode);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_place_every_sample_where_the_frame_does() {
        for layout in [NV12, NV21, I420, YV12, YUYV, UYVY] {
            for (w, h) in [(2, 2), (6, 4), (34, 18), (640, 2)] {
                let f = Frame { data: 0, width: w, height: h, layout, _pad: 0 };
                let s = f.strides();
                for y in 0..h {
                    let cy = f.chroma_row(y);
                    for x in 0..w {
                        let luma = y * s.luma_pitch + x * s.luma_step + s.luma_at;
                        assert_eq!(luma as usize, f.luma(x, y), "layout {layout} {w}x{h} luma ({x}, {y})");
                        let c = f.chroma(x / 2, cy);
                        let at = cy * s.chroma_pitch + (x / 2) * s.chroma_step;
                        assert_eq!((at + s.u_at) as usize, c.u, "layout {layout} {w}x{h} U of ({x}, {y})");
                        assert_eq!((at + s.v_at) as usize, c.v, "layout {layout} {w}x{h} V of ({x}, {y})");
                    }
                }
            }
        }
    }
}
