//! A JPEG's marker structure, walked without decoding: whether the file is whole, its
//! segments, its frame header's facts. Used before nvJPEG is called, and by `cuimg::io`.

/// Whether a JPEG's marker structure runs to its end-of-image marker (`FF D9`): the segments
/// before each scan are skipped by their lengths, the entropy-coded data of a scan by
/// scanning for the next marker (`FF 00` is a stuffed byte, `FF D0`..`FF D7` restarts).
/// An embedded thumbnail's own end-of-image marker lies inside a segment, so it is skipped.
pub fn is_complete(bytes: &[u8]) -> bool {
    let mut i = 2; // after SOI
    while i + 1 < bytes.len() {
        if bytes[i] != 0xFF {
            return false;
        }
        let marker = bytes[i + 1];
        match marker {
            0xD9 => return true,
            0xFF => i += 1, // fill byte
            0x01 | 0xD0..=0xD7 => i += 2,
            _ => {
                let Some(len) = bytes.get(i + 2..i + 4).map(|l| u16::from_be_bytes([l[0], l[1]]) as usize) else {
                    return false;
                };
                i += 2 + len;
                if marker == 0xDA {
                    // Entropy-coded data: up to the next marker that is not a stuffed byte
                    // or a restart (memchr: a 12-megapixel JPEG has megabytes of it).
                    while let Some(at) = bytes.get(i..).and_then(|rest| memchr::memchr(0xFF, rest)) {
                        i += at;
                        match bytes.get(i + 1) {
                            Some(&next) if next != 0x00 && !(0xD0..=0xD7).contains(&next) => break,
                            Some(_) => i += 2,
                            None => return false,
                        }
                    }
                }
            }
        }
    }
    false
}

/// A JPEG's marker segments from its start: each marker with the bytes after its length
/// field (as many as the length says and the file has). The walk goes by the lengths while
/// a marker is found, so it ends in the entropy-coded data after a scan's header.
pub(crate) fn segments(bytes: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut i = 2; // after SOI
    std::iter::from_fn(move || {
        if i + 4 > bytes.len() || bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        let segment = bytes.get(i + 4..(i + 2 + len).min(bytes.len())).unwrap_or(&[]);
        i += 2 + len;
        Some((marker, segment))
    })
}

/// A start of frame: `C0` to `CF` but for the table markers `C4`, `C8` and `CC`.
fn is_frame(marker: u8) -> bool {
    matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// True for a baseline or extended-sequential (Huffman) JPEG of 1 or 3 components: the
/// files the batched decoders take. Reads the frame header only.
pub(super) fn baseline_color_or_gray(bytes: &[u8]) -> bool {
    // The frame header: precision, height, width, then the component count.
    segments(bytes)
        .find(|&(marker, _)| is_frame(marker))
        .is_some_and(|(marker, frame)| matches!(marker, 0xC0 | 0xC1) && matches!(frame.get(5), Some(1 | 3)))
}

/// True when a JPEG's first component is its luma, so that nvJPEG's `Y` output is the
/// image in gray: one-component files, and three-component files coded as YCbCr (JFIF's
/// default). Not for four components (CMYK, YCCK) or three coded as RGB (an Adobe marker with
/// transform 0, or components named `R`, `G`, `B`).
pub(crate) fn first_component_is_luma(bytes: &[u8]) -> bool {
    let mut adobe_rgb = false;
    for (marker, segment) in segments(bytes) {
        if marker == 0xEE && segment.starts_with(b"Adobe") {
            adobe_rgb = segment.get(11) == Some(&0);
        }
        if is_frame(marker) {
            // Precision, height, width, the component count, then 3 bytes per component.
            let ids: Vec<u8> = segment.get(6..).unwrap_or(&[]).chunks(3).map(|c| c[0]).collect();
            return match segment.get(5) {
                Some(1) => true,
                Some(3) => !adobe_rgb && ids.get(..3) != Some(&b"RGB"[..]),
                _ => false,
            };
        }
    }
    false
}
