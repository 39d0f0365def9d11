//! A JPEG's marker structure, read once per file without decoding: [`JpegFile::parse`]
//! walks its segments to the first scan (the frame header, the Adobe marker, the EXIF
//! orientation) and then its scans to the end-of-image marker (whether it is whole), and
//! every check of the CPU and GPU paths reads that one result: the limits, the luma check,
//! the batched decoder's check, the orientation, the size an output is allocated at.
//!
//! The walk up to the first scan is also what [`crate::limits::Header::read`] does on a file
//! not yet read (its admission check), through the same function. (This file imports
//! nothing of `limits`: `limits::Header` is made from a [`JpegHeader`] there.)

use std::io::{Read, Seek, SeekFrom};

use crate::Orientation;

/// Segments a JPEG may have before its first scan: each takes at least 4 bytes, so a file
/// of gigabytes of them would otherwise be walked for a long time.
const MAX_SEGMENTS: usize = 1 << 16;

/// What a JPEG's header says, beyond `limits::Header`'s size and channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct JpegHeader {
    pub width: u32,
    pub height: u32,
    /// Components: 1 gray, 3 color, 4 CMYK or YCCK.
    pub components: u8,
    /// Bits per sample.
    pub precision: u8,
    /// Where the first scan's entropy-coded data starts.
    pub data_offset: u64,
    /// The start-of-frame marker's second byte: `0xC0` baseline, `0xC1` extended
    /// sequential, `0xC2` progressive, `0xC3` lossless; `0xC9` to `0xCF` arithmetic coding.
    pub frame: u8,
    /// Whether the first component is the luma: one-component files, and three-component
    /// files coded as YCbCr (JFIF's default); not four components (CMYK, YCCK) or three coded
    /// as RGB (an Adobe marker with transform 0, or components named `R`, `G`, `B`).
    pub luma_first: bool,
    /// The EXIF orientation of its last `APP1` EXIF segment before the first scan (as the
    /// `image` crate reads it); [`Orientation::Identity`] when there is none or it does not
    /// parse, as every decoder here takes it.
    pub orientation: Orientation,
    /// Whether its marker structure runs to its end-of-image marker (`FF D9`): a file cut
    /// short is not.
    pub complete: bool,
}

impl JpegHeader {
    /// A baseline or extended-sequential (Huffman) JPEG of 1 or 3 components: the files the
    /// batched decoders take.
    pub fn baseline_color_or_gray(&self) -> bool {
        matches!(self.frame, 0xC0 | 0xC1) && matches!(self.components, 1 | 3)
    }
}

/// JPEG bytes with their [`JpegHeader`], parsed once: made only by [`JpegFile::parse`], so
/// the header is always the one of these bytes (the GPU decoders allocate from it).
///
/// ```
/// let jpeg = cuimg::io::encode(&cuimg::io::sample_rgb(), cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
/// let file = cuimg::jpeg::JpegFile::parse(&jpeg).unwrap();
/// assert_eq!((file.header().width, file.header().height), (451, 300));
/// assert!(file.header().complete && file.header().luma_first);
/// assert!(!cuimg::jpeg::JpegFile::parse(&jpeg[..jpeg.len() - 10]).unwrap().header().complete);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct JpegFile<'a> {
    bytes: &'a [u8],
    header: JpegHeader,
}

impl<'a> JpegFile<'a> {
    /// Walks `bytes` once. An error says what is wrong with the header (not a JPEG, broken
    /// segments, no frame header, a zero size); a file cut short after its header parses,
    /// with `complete` false.
    pub fn parse(bytes: &'a [u8]) -> Result<JpegFile<'a>, String> {
        let mut r = std::io::Cursor::new(bytes);
        let mut soi = [0u8; 2];
        read_exact(&mut r, &mut soi)?;
        if soi != [0xFF, 0xD8] {
            return Err("not a JPEG (no start-of-image marker)".into());
        }
        let mut header = walk(&mut r, true)?;
        header.complete = scans_complete(bytes, header.data_offset as usize);
        Ok(JpegFile { bytes, header })
    }

    /// The bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// What the header says.
    pub fn header(&self) -> &JpegHeader {
        &self.header
    }

    /// Width and height.
    pub fn dimensions(&self) -> (u32, u32) {
        (self.header.width, self.header.height)
    }
}

/// Whether a JPEG's marker structure runs to its end-of-image marker (`FF D9`). Parses what
/// [`JpegFile::parse`] parses; without a header that parses, walks the segments by their
/// lengths from the start.
pub fn is_complete(bytes: &[u8]) -> bool {
    match JpegFile::parse(bytes) {
        Ok(file) => file.header.complete,
        Err(_) => bytes.len() >= 2 && walk_to_end(bytes, 2, false),
    }
}

/// From `at`, inside a scan's entropy-coded data, whether the file reaches its end-of-image
/// marker.
fn scans_complete(bytes: &[u8], at: usize) -> bool {
    walk_to_end(bytes, at, true)
}

/// The marker walk to `FF D9`: the segments between scans skipped by their lengths, the
/// entropy-coded data of a scan by scanning for the next marker (`FF 00` is a stuffed byte,
/// `FF D0`..`FF D7` restarts). An embedded thumbnail's own end-of-image marker lies inside
/// a segment, so it is skipped.
fn walk_to_end(bytes: &[u8], mut i: usize, mut in_scan: bool) -> bool {
    loop {
        if in_scan {
            // Entropy-coded data: up to the next marker that is not a stuffed byte or a
            // restart (memchr: a 12-megapixel JPEG has megabytes of it).
            loop {
                let Some(at) = bytes.get(i..).and_then(|rest| memchr::memchr(0xFF, rest)) else {
                    return false;
                };
                i += at;
                match bytes.get(i + 1) {
                    Some(&next) if next != 0x00 && !(0xD0..=0xD7).contains(&next) => break,
                    Some(_) => i += 2,
                    None => return false,
                }
            }
            in_scan = false;
        }
        if i + 1 >= bytes.len() || bytes[i] != 0xFF {
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
                in_scan = marker == 0xDA;
            }
        }
    }
}

/// A JPEG's frame header from `r`, just after its start-of-image marker, without the
/// details (for `limits::Header::read`; `complete` is false: the scans are not read).
pub(crate) fn read_header<R: Read + Seek>(r: &mut R) -> Result<JpegHeader, String> {
    walk(r, false)
}

/// The segments from just after the start-of-image marker to the first scan: the frame
/// header, and with `details` the Adobe marker's transform and the first EXIF segment's
/// orientation (other segments are skipped by seeking).
fn walk<R: Read + Seek>(r: &mut R, details: bool) -> Result<JpegHeader, String> {
    let mut frame: Option<(JpegHeader, Vec<u8>)> = None;
    let (mut adobe_rgb, mut orientation) = (false, None);
    for _ in 0..MAX_SEGMENTS {
        let mut marker = [0u8; 2];
        read_exact(r, &mut marker)?;
        if marker[0] != 0xFF {
            return Err("a JPEG whose marker segments are broken before its first scan".into());
        }
        // Fill bytes may precede a marker.
        while marker[1] == 0xFF {
            read_exact(r, &mut marker[1..])?;
        }
        if matches!(marker[1], 0x01 | 0xD0..=0xD7) {
            continue; // no length
        }
        if marker[1] == 0xD9 {
            return Err("a JPEG that ends before its first scan".into());
        }
        let mut len = [0u8; 2];
        read_exact(r, &mut len)?;
        let len = u16::from_be_bytes(len) as u64;
        if len < 2 {
            return Err("a JPEG segment of a length under 2".into());
        }
        let m = marker[1];
        let body = len - 2;
        if is_frame(m) {
            if frame.is_some() {
                // Which one a decoder takes is its own choice: the size allocated by and the
                // size written by could differ.
                return Err("a JPEG with two frame headers before its first scan".into());
            }
            if len < 8 {
                return Err("a JPEG frame header too short to hold its size".into());
            }
            let mut sof = vec![0u8; body as usize];
            read_exact(r, &mut sof)?;
            let (height, width) = (u16::from_be_bytes([sof[1], sof[2]]), u16::from_be_bytes([sof[3], sof[4]]));
            if width == 0 || height == 0 {
                // Height 0 defers it to a DNL marker after the first scan: nothing to check
                // it against beforehand, so it is refused (no decoder here takes it).
                return Err(format!("a JPEG whose frame header says {width} x {height}"));
            }
            let header = JpegHeader {
                width: width.into(),
                height: height.into(),
                components: sof[5],
                precision: sof[0],
                data_offset: 0,
                frame: m,
                luma_first: false,
                orientation: Orientation::Identity,
                complete: false,
            };
            // The components' identifiers: 3 bytes each after the count.
            let ids = sof.get(6..).unwrap_or(&[]).chunks(3).map(|c| c[0]).collect();
            frame = Some((header, ids));
        } else if m == 0xDA {
            let at = r.seek(SeekFrom::Current(body as i64)).map_err(|e| e.to_string())?;
            let Some((header, ids)) = frame else {
                return Err("a JPEG whose first scan comes before its frame header".into());
            };
            let luma_first = match header.components {
                1 => true,
                3 => !adobe_rgb && ids.get(..3) != Some(&b"RGB"[..]),
                _ => false,
            };
            let orientation = orientation.unwrap_or_default();
            return Ok(JpegHeader { data_offset: at, luma_first, orientation, ..header });
        } else if details && m == 0xEE && body >= 12 {
            let mut adobe = [0u8; 12];
            read_exact(r, &mut adobe)?;
            if adobe.starts_with(b"Adobe") {
                adobe_rgb = adobe[11] == 0;
            }
            r.seek(SeekFrom::Current(body as i64 - 12)).map_err(|e| e.to_string())?;
        } else if details && m == 0xE1 && body > 6 {
            // Every EXIF segment, the last one's orientation kept: as the `image` crate's
            // decoder (zune-jpeg) takes it, so that the CPU and GPU paths turn a file alike.
            let mut app1 = vec![0u8; body as usize];
            read_exact(r, &mut app1)?;
            if let Some(exif) = app1.strip_prefix(b"Exif\0\0") {
                orientation = Some(exif_orientation(exif).unwrap_or_default());
            }
        } else {
            r.seek(SeekFrom::Current(body as i64)).map_err(|e| e.to_string())?;
        }
    }
    Err(format!("a JPEG of more than {MAX_SEGMENTS} segments before its first scan"))
}

/// A start of frame: `C0` to `CF` but for the table markers `C4`, `C8` and `CC`.
fn is_frame(marker: u8) -> bool {
    matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// The orientation tag (`0x0112`) of an EXIF block's first directory (a TIFF header, `II`
/// or `MM`, then the directory's entries of 12 bytes); `None` when it is missing or not 1
/// to 8. The rules are the `image` crate's (`Orientation::from_exif_chunk`): the entries are
/// read in order while whole, and the first of type SHORT and count 1 decides.
fn exif_orientation(tiff: &[u8]) -> Option<Orientation> {
    let big = match tiff.get(..4)? {
        [b'I', b'I', 42, 0] => false,
        [b'M', b'M', 0, 42] => true,
        _ => return None,
    };
    let u16_at = |at: usize| {
        let b: [u8; 2] = tiff.get(at..at + 2)?.try_into().ok()?;
        Some(if big { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) })
    };
    let u32_at = |at: usize| {
        let b: [u8; 4] = tiff.get(at..at + 4)?.try_into().ok()?;
        Some(if big { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
    };
    let ifd = u32_at(4)? as usize;
    let entries = u16_at(ifd)? as usize;
    for e in (0..entries).map(|k| ifd + 2 + 12 * k) {
        // Tag, type (3: SHORT), count, the value in the first two of four bytes.
        let (tag, kind, count, value) = (u16_at(e)?, u16_at(e + 2)?, u32_at(e + 4)?, u16_at(e + 8)?);
        u16_at(e + 10)?;
        if tag == 0x0112 && kind == 3 && count == 1 {
            return Orientation::from_exif(value);
        }
    }
    None
}

pub(crate) fn read_exact<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<(), String> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "the file ends inside its header".to_string(),
        _ => format!("cannot read its header: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An EXIF block holding only an orientation, in either byte order.
    fn exif(big: bool, value: u16) -> Vec<u8> {
        let u16b = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let u32b = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut t = if big { b"MM\0\x2a".to_vec() } else { b"II\x2a\0".to_vec() };
        t.extend(u32b(8));
        t.extend(u16b(1));
        t.extend(u16b(0x0112));
        t.extend(u16b(3));
        t.extend(u32b(1));
        t.extend(u16b(value));
        t.extend([0, 0]);
        t.extend(u32b(0));
        t
    }

    #[test]
    fn exif_orientations_parse_in_both_byte_orders() {
        for big in [false, true] {
            for v in 1..=8 {
                assert_eq!(exif_orientation(&exif(big, v)), Orientation::from_exif(v), "{big} {v}");
            }
            assert_eq!(exif_orientation(&exif(big, 0)), None);
            assert_eq!(exif_orientation(&exif(big, 9)), None);
            let whole = exif(big, 6);
            for cut in 0..whole.len() - 6 {
                assert_eq!(exif_orientation(&whole[..cut]), None, "cut at {cut}");
            }
        }
        assert_eq!(exif_orientation(b"XX\x2a\0"), None);
    }

    #[test]
    fn a_walk_from_the_start_and_from_the_scan_agree() {
        // SOI, a segment holding a thumbnail's EOI, SOF0, SOS, data with a stuffed byte and a
        // restart, EOI.
        let mut f = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 6, 0xFF, 0xD9, 0, 0];
        f.extend([0xFF, 0xC0, 0, 11, 8, 0, 2, 0, 3, 1, 1, 0x11, 0]);
        f.extend([0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0]);
        f.extend([1, 2, 0xFF, 0x00, 3, 0xFF, 0xD0, 4, 0xFF, 0xD9]);
        let file = JpegFile::parse(&f).unwrap();
        assert!(file.header().complete && file.header().luma_first && file.header().baseline_color_or_gray());
        assert_eq!(file.dimensions(), (3, 2));
        for cut in 2..f.len() {
            assert!(!is_complete(&f[..cut]), "cut at {cut}");
        }
        assert!(is_complete(&f));
    }

    /// The same reading as the `image` crate's (which the CPU decoders apply), on EXIF
    /// blocks mutated byte by byte.
    #[cfg(feature = "io")]
    #[test]
    fn exif_orientations_are_read_as_the_image_crate_reads_them() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for big in [false, true] {
            for v in 0..=9 {
                let base = exif(big, v);
                for _ in 0..2000 {
                    let mut t = base.clone();
                    for _ in 0..1 + next() % 3 {
                        let at = next() % t.len();
                        t[at] = next() as u8;
                    }
                    t.truncate(next() % (t.len() + 1) + if next() % 2 == 0 { t.len() } else { 0 });
                    let theirs = image::metadata::Orientation::from_exif_chunk(&t).map(|o| o.to_exif());
                    let ours = exif_orientation(&t).map(|o| o.exif() as u8);
                    assert_eq!(ours, theirs, "{t:02x?}");
                }
            }
        }
    }
}
