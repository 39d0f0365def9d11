//! What one file may make cuimg allocate: a [`Limits`] value passed down to every read and
//! decode (the `image` crate's `Limits` is the model; there is no process-wide setting), and
//! the [`Header`] it is checked against, read from a PNG's or JPEG's first bytes before any
//! decoder allocates.
//!
//! A decompression bomb is a small file whose header claims a huge image: a 31 KB JPEG that
//! says 65535 x 65535 asks a decoder for 12.9 GB of RGB. The checks here refuse it from the
//! header alone, against the bytes the caller will hold (3 a pixel for RGB8), and, for JPEG,
//! against the data that could possibly code that many pixels (see
//! [`Limits::max_jpeg_pixels_per_byte`]).

use std::io::{Read, Seek};

use crate::codec::jpeg::header::JpegHeader;
use crate::codec::jpeg::header::read_exact;
use std::path::Path;

use crate::error::{Error, Result};

/// Bytes one image may take by default: the 4 GiB the kernels take in one image, and a
/// little for a decoder's own buffers.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = (4 << 30) + (64 << 20);

/// The limits of one read or decode. Build one from [`Limits::default`] and the `with_`
/// methods; pass it to `cuimg::io::read_checked`, `cuimg::io::decode_with` (feature `io`) or
/// [`crate::jpeg::Jpeg::set_limits`].
///
/// ```
/// let limits = cuimg::Limits::default().with_max_image_bytes(64 << 20);
/// assert_eq!(limits.max_image_bytes, 64 << 20);
/// assert_eq!(limits.max_jpeg_pixels_per_byte, 512);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Bytes of the decoded image, in the format the caller holds (width x height x bytes a
    /// pixel) or the decoder's own, whichever is larger. Default: [`DEFAULT_MAX_IMAGE_BYTES`].
    pub max_image_bytes: u64,
    /// Bytes of the file itself, which is read in full only after its header passed.
    /// Default: [`DEFAULT_MAX_IMAGE_BYTES`] (a PNG stored without compression is about its
    /// image's size).
    pub max_file_bytes: u64,
    /// JPEG only: pixels the frame header declares per byte of entropy-coded data (the bytes
    /// from the first scan to the end of the file). Default 512, a bound no whole Huffman
    /// JPEG exceeds: every scan that codes DC values spends at least one bit on each 8x8
    /// block of the full-resolution component (a Huffman code is at least one bit long),
    /// which is 64 pixels a bit, 512 a byte. (Arithmetic coding can do with less, but no
    /// decoder cuimg uses reads it.) A file claiming more is cut short or made to exhaust
    /// memory: the issue's bombs (31 KB claiming 65535 x 65535, 35 KB claiming 40000 x
    /// 40000) claim about 138,000 and 45,000 a byte.
    pub max_jpeg_pixels_per_byte: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new()
    }
}

impl Limits {
    /// The defaults (see each field).
    pub const fn new() -> Limits {
        Limits {
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
            max_file_bytes: DEFAULT_MAX_IMAGE_BYTES,
            max_jpeg_pixels_per_byte: 512,
        }
    }

    /// With another [`Limits::max_image_bytes`].
    pub const fn with_max_image_bytes(mut self, bytes: u64) -> Limits {
        self.max_image_bytes = bytes;
        self
    }

    /// With another [`Limits::max_file_bytes`].
    pub const fn with_max_file_bytes(mut self, bytes: u64) -> Limits {
        self.max_file_bytes = bytes;
        self
    }

    /// With another [`Limits::max_jpeg_pixels_per_byte`].
    pub const fn with_max_jpeg_pixels_per_byte(mut self, pixels: u64) -> Limits {
        self.max_jpeg_pixels_per_byte = pixels;
        self
    }

    /// Checks a file's header and length against the limits, for a caller that will hold
    /// the image at `bytes_per_pixel`. `path` names the file in the error.
    ///
    /// ```
    /// use cuimg::{Limits, limits::Header};
    /// let png = cuimg::io::encode(&cuimg::io::sample_rgb(), cuimg::io::Format::Png).unwrap();
    /// let header = Header::parse(&png).unwrap();
    /// let name = std::path::Path::new("cat.png");
    /// assert!(Limits::default().check(&header, png.len() as u64, 3, name).is_ok());
    /// let small = Limits::default().with_max_image_bytes(451 * 300 * 3 - 1);
    /// assert!(matches!(small.check(&header, png.len() as u64, 3, name), Err(cuimg::Error::Limit { .. })));
    /// ```
    pub fn check(&self, header: &Header, file_len: u64, bytes_per_pixel: u32, path: &Path) -> Result<()> {
        let over = |what: String, size: u64, limit: u64| Error::Limit { path: path.into(), what, size, limit };
        if file_len > self.max_file_bytes {
            return Err(over("the file".into(), file_len, self.max_file_bytes));
        }
        let pixels = u64::from(header.width) * u64::from(header.height);
        let bytes = pixels.saturating_mul(u64::from(bytes_per_pixel.max(header.decoded_bytes_per_pixel())));
        if bytes > self.max_image_bytes {
            let what = format!("the decoded {} x {} image", header.width, header.height);
            return Err(over(what, bytes, self.max_image_bytes));
        }
        if header.format == FileFormat::Jpeg {
            let data = file_len.saturating_sub(header.data_offset).max(1);
            if pixels > self.max_jpeg_pixels_per_byte.saturating_mul(data) {
                let what = format!(
                    "the pixels a JPEG of {data} bytes of coded data can hold ({} x {} claimed; at most {} a byte)",
                    header.width, header.height, self.max_jpeg_pixels_per_byte
                );
                return Err(over(what, pixels, self.max_jpeg_pixels_per_byte.saturating_mul(data)));
            }
        }
        Ok(())
    }
}

/// The file formats cuimg reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Png,
    Jpeg,
}

/// What a file's header says, read without decoding a pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    pub format: FileFormat,
    pub width: u32,
    pub height: u32,
    /// Channels as decoded: 1 gray, 2 gray + alpha, 3 color, 4 color + alpha (a PNG palette
    /// counts 4: its transparency comes later in the file) or, in a JPEG, CMYK.
    pub channels: u8,
    /// Bits per channel (1, 2, 4, 8 or 16; a JPEG's precision).
    pub bits: u8,
    /// PNG: whether the color type has alpha (palettes may have it too: see `channels`).
    pub alpha: bool,
    /// JPEG: where the first scan's entropy-coded data starts (0 for PNG).
    pub data_offset: u64,
}

impl Header {
    /// The header of PNG or JPEG bytes.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Header, String> {
        Header::read(&mut std::io::Cursor::new(bytes))
    }

    /// The header of a PNG or JPEG, read from the start of `r`: 33 bytes of a PNG; the
    /// marker segments of a JPEG up to its first scan, skipped by their lengths (seeking,
    /// not reading, over large ones such as EXIF thumbnails).
    pub fn read<R: Read + Seek>(r: &mut R) -> std::result::Result<Header, String> {
        let mut start = [0u8; 8];
        read_exact(r, &mut start[..2])?;
        if start[..2] == [0xFF, 0xD8] {
            return crate::codec::jpeg::header::read_header(r).map(|h| Header::from(&h));
        }
        read_exact(r, &mut start[2..])?;
        if start != *b"\x89PNG\r\n\x1a\n" {
            return Err("neither a PNG nor a JPEG (the format could not be determined from its first bytes)".into());
        }
        let mut ihdr = [0u8; 25];
        read_exact(r, &mut ihdr)?;
        if &ihdr[4..8] != b"IHDR" {
            return Err("a PNG whose first chunk is not its header (IHDR)".into());
        }
        let be = |i: usize| u32::from_be_bytes([ihdr[i], ihdr[i + 1], ihdr[i + 2], ihdr[i + 3]]);
        let (width, height, bits, color) = (be(8), be(12), ihdr[16], ihdr[17]);
        let (channels, alpha) = match color {
            0 => (1, false),
            2 => (3, false),
            3 => (4, false),
            4 => (2, true),
            6 => (4, true),
            c => return Err(format!("a PNG of color type {c}, which does not exist")),
        };
        if width == 0 || height == 0 || width > i32::MAX as u32 || height > i32::MAX as u32 {
            return Err(format!("a PNG whose header says {width} x {height}"));
        }
        Ok(Header { format: FileFormat::Png, width, height, channels, bits, alpha, data_offset: 0 })
    }

    /// Bytes a pixel in the decoder's own output: samples of fewer than 8 bits come out as
    /// 8, 16-bit ones as 16.
    pub fn decoded_bytes_per_pixel(&self) -> u32 {
        u32::from(self.channels) * if self.bits > 8 { 2 } else { 1 }
    }
}

impl From<&JpegHeader> for Header {
    fn from(h: &JpegHeader) -> Header {
        Header {
            format: FileFormat::Jpeg,
            width: h.width,
            height: h.height,
            channels: h.components,
            bits: h.precision,
            alpha: false,
            data_offset: h.data_offset,
        }
    }
}
