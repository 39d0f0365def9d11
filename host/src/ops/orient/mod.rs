//! Flips, transposes and quarter turns: the eight orientations a photo's EXIF tag names,
//! bit-exact with OpenCV's `flip`, `rotate` and `transpose` (they only move pixels). One
//! kernel per channel count evaluates [`cuimg_abi::orient::Mapping`], as the CPU reference
//! (`cpu.rs`) does; `gpu.rs` holds [`Stream::orient`](crate::Stream::orient),
//! [`Stream::orient_batch`](crate::Stream::orient_batch) and the blocking forms.

pub(crate) mod cpu;
mod gpu;
pub(crate) mod op;

use cuimg_abi::orient::Mapping;

/// How to turn an image upright, by the EXIF orientation tag (1 to 8) that names it.
///
/// ```
/// use cuimg::Orientation;
/// assert_eq!(Orientation::from_exif(6), Some(Orientation::Rotate90));
/// assert_eq!(Orientation::Rotate90.size(4, 3), (3, 4));
/// assert_eq!(Orientation::FlipHorizontal.size(4, 3), (4, 3));
/// assert_eq!("rotate-270".parse::<Orientation>().unwrap(), Orientation::Rotate270);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Orientation {
    /// 1: as stored.
    #[default]
    Identity,
    /// 2: mirrored left to right (`cv2.flip(img, 1)`).
    FlipHorizontal,
    /// 3: turned half a turn (`cv2.rotate(img, cv2.ROTATE_180)`).
    Rotate180,
    /// 4: mirrored top to bottom (`cv2.flip(img, 0)`).
    FlipVertical,
    /// 5: rows become columns (`cv2.transpose(img)`).
    Transpose,
    /// 6: a quarter turn clockwise (`cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)`).
    Rotate90,
    /// 7: transposed across the other diagonal (`cv2.flip(cv2.transpose(img), -1)`).
    Transverse,
    /// 8: a quarter turn counterclockwise (`cv2.rotate(img, cv2.ROTATE_90_COUNTERCLOCKWISE)`).
    Rotate270,
}

impl Orientation {
    /// All eight, in EXIF order (tag 1 first).
    pub const ALL: [Orientation; 8] = [
        Orientation::Identity,
        Orientation::FlipHorizontal,
        Orientation::Rotate180,
        Orientation::FlipVertical,
        Orientation::Transpose,
        Orientation::Rotate90,
        Orientation::Transverse,
        Orientation::Rotate270,
    ];

    /// The orientation an EXIF tag value names (1 to 8).
    pub fn from_exif(tag: u16) -> Option<Orientation> {
        Orientation::ALL.get((tag as usize).checked_sub(1)?).copied()
    }

    /// Its EXIF tag value.
    pub fn exif(self) -> u16 {
        Orientation::ALL.iter().position(|o| *o == self).expect("in ALL") as u16 + 1
    }

    /// Its name, as [`str::parse`] takes it.
    pub fn name(self) -> &'static str {
        NAMES[self.exif() as usize - 1]
    }

    /// The output's size for a `width` x `height` source.
    pub fn size(self, width: u32, height: u32) -> (u32, u32) {
        if self.mapping().swap != 0 { (height, width) } else { (width, height) }
    }

    /// What the kernels and the CPU reference evaluate.
    pub(crate) fn mapping(self) -> Mapping {
        let m = |swap, flip_x, flip_y| Mapping { swap, flip_x, flip_y };
        match self {
            Orientation::Identity => m(0, 0, 0),
            Orientation::FlipHorizontal => m(0, 1, 0),
            Orientation::Rotate180 => m(0, 1, 1),
            Orientation::FlipVertical => m(0, 0, 1),
            Orientation::Transpose => m(1, 0, 0),
            Orientation::Rotate90 => m(1, 0, 1),
            Orientation::Transverse => m(1, 1, 1),
            Orientation::Rotate270 => m(1, 1, 0),
        }
    }
}

const NAMES: [&str; 8] =
    ["none", "flip-horizontal", "rotate-180", "flip-vertical", "transpose", "rotate-90", "transverse", "rotate-270"];

impl std::str::FromStr for Orientation {
    type Err = crate::Error;

    /// A name (`rotate-90`, `flip-horizontal`, ...) or an EXIF tag value (`1` to `8`).
    fn from_str(s: &str) -> crate::Result<Orientation> {
        let by_name = NAMES.iter().position(|n| *n == s).map(|i| Orientation::ALL[i]);
        by_name.or_else(|| s.parse().ok().and_then(Orientation::from_exif)).ok_or_else(|| {
            crate::Error::InvalidParameter {
                what: format!("orientation {s:?}"),
                why: format!("use one of {} or an EXIF tag value 1 to 8", NAMES.join(", ")),
            }
        })
    }
}
