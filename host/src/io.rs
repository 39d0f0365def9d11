//! Reading and writing image files through the `image` crate (PNG and JPEG).

use std::path::Path;

use image::{DynamicImage, GrayAlphaImage, GrayImage, RgbImage, RgbaImage};

use crate::error::{Error, Result};
use crate::image::Image;
use crate::jpeg::JpegFile;
use crate::limits::{Header, Limits};
use crate::pixel::{Gray8, La8, Pixel, Rgb8, Rgba8};

/// A real photograph embedded in the crate (a cat, 451x300, CC0, from scikit-image's sample
/// data), so the examples and tests run without any file.
pub const SAMPLE_PNG: &[u8] = include_bytes!("../assets/chelsea.png");

/// The embedded sample photo, decoded.
///
/// ```
/// let cat = cuimg::io::sample_rgb();
/// assert_eq!(cat.dimensions(), (451, 300));
/// ```
pub fn sample_rgb() -> Image<Rgb8> {
    decode_rgb(SAMPLE_PNG, Path::new("<embedded sample>")).expect("the embedded sample is a valid PNG")
}

/// What to do with samples of more than 8 bits (16-bit PNG, float formats).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Refuse them: [`Error::UnsupportedFormat`], naming the file and its format.
    Refuse,
    /// Round them to 8 bits: the caller asked for it by the function's name.
    RoundTo8,
}

/// A file's header, read once: a JPEG's whole marker walk ([`JpegFile`]), or a PNG's header.
enum Parsed<'a> {
    Png(Header),
    Jpeg(JpegFile<'a>),
}

impl Parsed<'_> {
    fn header(&self) -> Header {
        match self {
            Parsed::Png(h) => *h,
            Parsed::Jpeg(f) => Header::from(f.header()),
        }
    }
}

fn failed(path: &Path, format: image::error::ImageFormatHint, why: impl Into<String>) -> Error {
    Error::Decode { path: path.into(), source: decoding_error(format, why).into() }
}

/// Parses a file's header, and refuses a JPEG cut short: the `image` crate's JPEG decoder
/// returns a truncated file as an image, with zeros where the data ends.
fn parse<'a>(bytes: &'a [u8], path: &Path) -> Result<Parsed<'a>> {
    let truncated = || {
        let why = "truncated JPEG: the data ends before its end-of-image marker";
        failed(path, image::ImageFormat::Jpeg.into(), why)
    };
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        let header = Header::parse(bytes).map_err(|why| failed(path, image::error::ImageFormatHint::Unknown, why))?;
        return Ok(Parsed::Png(header));
    }
    match JpegFile::parse(bytes) {
        Ok(file) if file.header().complete => Ok(Parsed::Jpeg(file)),
        Ok(_) => Err(truncated()),
        Err(_) if !jpeg_is_complete(bytes) => Err(truncated()),
        Err(why) => Err(failed(path, image::ImageFormat::Jpeg.into(), why)),
    }
}

fn decode(bytes: &[u8], path: &Path, depth: Depth, limits: &Limits, bytes_per_pixel: u32) -> Result<DynamicImage> {
    decode_parsed(bytes, &parse(bytes, path)?, path, depth, limits, bytes_per_pixel)
}

fn decode_parsed(
    bytes: &[u8],
    parsed: &Parsed,
    path: &Path,
    depth: Depth,
    limits: &Limits,
    bytes_per_pixel: u32,
) -> Result<DynamicImage> {
    let failed = |source: image::ImageError| Error::Decode { path: path.into(), source: source.into() };
    // The header before any decoder: a decoder allocates from what it claims.
    limits.check(&parsed.header(), bytes.len() as u64, bytes_per_pixel, path)?;
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| failed(image::ImageError::IoError(e)))?;
    let mut image_limits = image::Limits::default();
    image_limits.max_alloc = Some(limits.max_image_bytes);
    reader.limits(image_limits);
    let mut decoder = reader.into_decoder().map_err(failed)?;
    let color = image::ImageDecoder::color_type(&decoder);
    let bits = crate::image_crate::bits_per_sample(color);
    if depth == Depth::Refuse && bits > 8 {
        return Err(Error::UnsupportedFormat(format!(
            "{}: {color:?} samples ({bits} bits per channel); load it with cuimg::io::load_converted \
             or decode_converted to round them to 8 bits",
            path.display()
        )));
    }
    // EXIF orientation (phone photos): applied, so the pixels come upright. A file whose
    // orientation cannot be read is taken as it is stored.
    let orientation =
        image::ImageDecoder::orientation(&mut decoder).unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut img = DynamicImage::from_decoder(decoder).map_err(failed)?;
    img.apply_orientation(orientation);
    Ok(img)
}

fn decoding_error(format: image::error::ImageFormatHint, why: impl Into<String>) -> image::ImageError {
    image::ImageError::Decoding(image::error::DecodingError::new(format, why.into()))
}

pub use crate::jpeg::is_complete as jpeg_is_complete;

/// Reads a file for an image that will be held at `bytes_per_pixel` (3 for [`Rgb8`]), after
/// checking it: a path that is not a regular file (a FIFO, a device, a folder) is refused
/// with [`Error::NotARegularFile`] before it is opened for reading; then its length and its
/// header, read alone, must be within `limits` ([`Error::Limit`]) and name a PNG or JPEG
/// ([`Error::Decode`]); only then is the file read in full. Returns the header with the
/// bytes.
///
/// ```
/// use cuimg::{Limits, io::read_checked};
/// let path = std::env::temp_dir().join(format!("cuimg-doc-read-{}.png", std::process::id()));
/// cuimg::io::save(&cuimg::io::sample_rgb(), &path).unwrap();
/// let (header, bytes) = read_checked(&path, 3, &Limits::default()).unwrap();
/// assert_eq!((header.width, header.height), (451, 300));
/// let small = Limits::default().with_max_image_bytes(1000);
/// assert!(matches!(read_checked(&path, 3, &small), Err(cuimg::Error::Limit { .. })));
/// std::fs::remove_file(&path).unwrap();
/// # drop(bytes);
/// ```
pub fn read_checked(path: impl AsRef<Path>, bytes_per_pixel: u32, limits: &Limits) -> Result<(Header, Vec<u8>)> {
    let file = CheckedFile::open(path, bytes_per_pixel, limits)?;
    let header = file.header;
    Ok((header, file.read()?))
}

/// A file opened and checked as [`read_checked`] does, before it is read in full: its
/// header and length tell what reading and decoding it will take (the `cuimg` tool admits
/// it against its memory budget in between).
///
/// ```
/// use cuimg::{Limits, io::CheckedFile};
/// let path = std::env::temp_dir().join(format!("cuimg-doc-checked-{}.png", std::process::id()));
/// cuimg::io::save(&cuimg::io::sample_rgb(), &path).unwrap();
/// let file = CheckedFile::open(&path, 3, &Limits::default()).unwrap();
/// assert_eq!((file.header.width, file.header.height, file.header.channels), (451, 300, 3));
/// let bytes = file.read().unwrap();
/// assert!(cuimg::io::decode_rgb(&bytes, &path).is_ok());
/// std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Debug)]
pub struct CheckedFile {
    /// What the header says.
    pub header: Header,
    /// The file's length in bytes.
    pub len: u64,
    file: std::fs::File,
    path: std::path::PathBuf,
    max_file_bytes: u64,
}

impl CheckedFile {
    /// Opens and checks a file, reading its header alone (see [`read_checked`]).
    pub fn open(path: impl AsRef<Path>, bytes_per_pixel: u32, limits: &Limits) -> Result<CheckedFile> {
        let path = path.as_ref();
        let io = |source: std::io::Error| Error::Io { path: path.into(), source };
        regular_file(path, &std::fs::metadata(path).map_err(io)?)?;
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            // Opening a FIFO for reading waits for a writer; swapped in after the check
            // above, it is opened without waiting and refused by the check below.
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK);
        }
        let mut file = options.open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        regular_file(path, &meta)?;
        let header =
            Header::read(&mut std::io::BufReader::with_capacity(4096, &mut file)).map_err(|why| Error::Decode {
                path: path.into(),
                source: decoding_error(image::error::ImageFormatHint::Unknown, why).into(),
            })?;
        limits.check(&header, meta.len(), bytes_per_pixel, path)?;
        Ok(CheckedFile { header, len: meta.len(), file, path: path.into(), max_file_bytes: limits.max_file_bytes })
    }

    /// The whole file. One that grew past the limit since it was opened is refused.
    pub fn read(mut self) -> Result<Vec<u8>> {
        use std::io::{Read, Seek};
        let io = |source: std::io::Error| Error::Io { path: self.path.clone(), source };
        self.file.rewind().map_err(io)?;
        let mut bytes = Vec::with_capacity(self.len as usize);
        (&mut self.file).take(self.max_file_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(Error::Limit {
                path: self.path,
                what: "the file (grown while read)".into(),
                size: bytes.len() as u64,
                limit: self.max_file_bytes,
            });
        }
        Ok(bytes)
    }
}

/// `Err(NotARegularFile)` unless `meta` is a regular file's.
fn regular_file(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    let t = meta.file_type();
    if t.is_file() {
        return Ok(());
    }
    #[cfg(unix)]
    let kind = {
        use std::os::unix::fs::FileTypeExt;
        match () {
            _ if t.is_fifo() => "a FIFO (named pipe)",
            _ if t.is_char_device() => "a character device",
            _ if t.is_block_device() => "a block device",
            _ if t.is_socket() => "a socket",
            _ if t.is_dir() => "a folder",
            _ => "not a file",
        }
    };
    #[cfg(not(unix))]
    let kind = if t.is_dir() { "a folder" } else { "not a file" };
    Err(Error::NotARegularFile { path: path.into(), kind: kind.into() })
}

/// Bits per channel of an encoded image, from its header alone (no pixels decoded): 8 for
/// ordinary files, 16 for 16-bit PNG; `None` when the header does not parse.
///
/// cuimg's images are 8 bits per channel: `load_rgb` and the other `load_*` and
/// `decode_rgb` refuse deeper sources, and [`load_converted`] and [`decode_converted`] round
/// them to 8 bits. Call this first to choose, or to warn, as the `cuimg` tool does.
///
/// ```
/// let png = cuimg::io::encode(&cuimg::io::sample_rgb(), cuimg::io::Format::Png).unwrap();
/// assert_eq!(cuimg::io::bits_per_channel(&png), Some(8));
/// assert_eq!(cuimg::io::bits_per_channel(b"not an image"), None);
/// ```
pub fn bits_per_channel(bytes: &[u8]) -> Option<u8> {
    use image::ImageDecoder;
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format().ok()?;
    let color = reader.into_decoder().ok()?.color_type();
    Some(crate::image_crate::bits_per_sample(color) as u8)
}

/// `img` with every sample rounded to 8 bits, for formats cuimg refuses as they are
/// ([`crate::DynamicView`] takes 8-bit images only): 16-bit and float gray, gray + alpha,
/// RGB and RGBA become their 8-bit kind; 8-bit images are cloned unchanged.
///
/// ```
/// let deep = image::DynamicImage::new_luma16(4, 4);
/// let eight = cuimg::io::convert_to_8bit(&deep);
/// assert_eq!(eight.color(), image::ColorType::L8);
/// ```
pub fn convert_to_8bit(img: &image::DynamicImage) -> image::DynamicImage {
    crate::image_crate::convert_to_8bit(img)
}

/// Decodes PNG or JPEG bytes to RGB (gray and RGBA sources are converted), upright. Files
/// of more than 8 bits per channel are refused with [`Error::UnsupportedFormat`]:
/// [`decode_converted`] rounds them to 8 bits instead.
pub fn decode_rgb(bytes: &[u8], name: &Path) -> Result<Image<Rgb8>> {
    decode_with(bytes, name, &Limits::default())
}

/// Decodes PNG or JPEG bytes to `P` within `limits` (checked from the header before any
/// pixel is allocated, against the bytes `P` takes: [`Error::Limit`]), upright; samples of
/// more than 8 bits are refused as by [`decode_rgb`].
///
/// ```
/// use cuimg::{Limits, Rgb8, io::decode_with};
/// let png = cuimg::io::encode(&cuimg::io::sample_rgb(), cuimg::io::Format::Png).unwrap();
/// let name = std::path::Path::new("cat.png");
/// assert!(decode_with::<Rgb8>(&png, name, &Limits::default()).is_ok());
/// let small = Limits::default().with_max_image_bytes(1000);
/// assert!(matches!(decode_with::<Rgb8>(&png, name, &small), Err(cuimg::Error::Limit { .. })));
/// ```
pub fn decode_with<P: Encode>(bytes: &[u8], name: &Path, limits: &Limits) -> Result<Image<P>> {
    decode_as(bytes, name, Depth::Refuse, limits)
}

/// [`decode_converted`] within `limits`, as [`decode_with`].
pub fn decode_converted_with<P: Encode>(bytes: &[u8], name: &Path, limits: &Limits) -> Result<Image<P>> {
    decode_as(bytes, name, Depth::RoundTo8, limits)
}

/// Decodes a file to gray. A JPEG gives its luma plane, decoded without converting its color
/// planes to RGB (as libjpeg's grayscale output and OpenCV's `imread(path,
/// IMREAD_GRAYSCALE)` do, and [`crate::jpeg::Jpeg::decode_as`] into `Gray8` on the GPU): the encoder
/// made that plane from the original pixels with the BT.601 weights of
/// [`crate::cpu::grayscale`], so it differs from decoding to RGB and converting by rounding
/// only, and it takes a third less time. Other files (PNG, CMYK JPEG, JPEG coded in RGB) are
/// decoded to RGB and converted with those weights. Upright, truncation and limits as
/// [`decode_rgb`].
///
/// ```
/// use cuimg::io::{decode_luma, decode_rgb, encode, Format};
/// let jpeg = encode(&cuimg::io::sample_rgb(), Format::Jpeg { quality: 90 }).unwrap();
/// let name = std::path::Path::new("cat.jpg");
/// let luma = decode_luma(&jpeg, name).unwrap();
/// let via_rgb = cuimg::cpu::grayscale(&decode_rgb(&jpeg, name).unwrap().view(), cuimg::GrayWeights::Bt601).unwrap();
/// let apart = luma.as_bytes().iter().zip(via_rgb.as_bytes()).map(|(a, b)| a.abs_diff(*b)).max();
/// assert!(apart <= Some(8));
/// ```
pub fn decode_luma(bytes: &[u8], name: &Path) -> Result<Image<Gray8>> {
    decode_luma_with(bytes, name, &Limits::default())
}

/// A JPEG decoded on the CPU to what nvJPEG's [`crate::jpeg::Jpeg::decode_as`] gives for
/// `P`: RGB, or the luma plane ([`decode_luma`]), upright, within `limits`.
pub fn decode_jpeg_as<P: crate::jpeg::JpegPixel>(bytes: &[u8], name: &Path, limits: &Limits) -> Result<Image<P>> {
    decode_jpeg_parsed(bytes, &parse(bytes, name)?, name, limits)
}

/// [`decode_jpeg_as`] of a JPEG already parsed (its header read once, by the caller, for its
/// own checks too: the GPU path's, the orientation).
pub fn decode_jpeg_file<P: crate::jpeg::JpegPixel>(file: &JpegFile, name: &Path, limits: &Limits) -> Result<Image<P>> {
    if !file.header().complete {
        return Err(failed(
            name,
            image::ImageFormat::Jpeg.into(),
            "truncated JPEG: the data ends before its end-of-image marker",
        ));
    }
    decode_jpeg_parsed(file.bytes(), &Parsed::Jpeg(*file), name, limits)
}

fn decode_jpeg_parsed<P: crate::jpeg::JpegPixel>(
    bytes: &[u8],
    parsed: &Parsed,
    name: &Path,
    limits: &Limits,
) -> Result<Image<P>> {
    let decoded: Box<dyn std::any::Any> = match <P as crate::jpeg::sealed::Output>::GRAY {
        true => Box::new(decode_luma_parsed(bytes, parsed, name, limits)?),
        false => Box::new(Rgb8::from_dynamic(decode_parsed(bytes, parsed, name, Depth::Refuse, limits, 3)?)),
    };
    Ok(*decoded.downcast::<Image<P>>().expect("a JpegPixel is Gray8 or Rgb8"))
}

/// [`decode_luma`] within `limits`, as [`decode_with`].
pub fn decode_luma_with(bytes: &[u8], name: &Path, limits: &Limits) -> Result<Image<Gray8>> {
    decode_luma_parsed(bytes, &parse(bytes, name)?, name, limits)
}

fn decode_luma_parsed(bytes: &[u8], parsed: &Parsed, name: &Path, limits: &Limits) -> Result<Image<Gray8>> {
    use zune_core::{bytestream::ZCursor, colorspace::ColorSpace, options::DecoderOptions};
    let file = match parsed {
        Parsed::Jpeg(file) if file.header().luma_first => file,
        // PNG, CMYK and JPEGs coded in RGB: decoded to RGB and converted.
        _ => {
            let rgb = Rgb8::from_dynamic(decode_parsed(bytes, parsed, name, Depth::Refuse, limits, 3)?);
            return crate::cpu::grayscale(&rgb.view(), crate::GrayWeights::Bt601);
        }
    };
    let failed = |why: String| failed(name, image::ImageFormat::Jpeg.into(), why);
    let options = DecoderOptions::default()
        .jpeg_set_out_colorspace(ColorSpace::Luma)
        .set_strict_mode(false)
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX);
    // The limits before any pixel is allocated (a header may claim 65535 x 65535).
    limits.check(&Header::from(file.header()), bytes.len() as u64, 1, name)?;
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    decoder.decode_headers().map_err(|e| failed(format!("{e:?}")))?;
    let (w, h) = decoder.dimensions().ok_or_else(|| failed("no frame header".into()))?;
    let pixels = decoder.decode().map_err(|e| failed(format!("{e:?}")))?;
    let plane = GrayImage::from_raw(w as u32, h as u32, pixels).ok_or_else(|| failed("short output".into()))?;
    let img = Gray8::from_dynamic(DynamicImage::ImageLuma8(plane));
    // Upright, by the orientation the one parse read.
    match file.header().orientation {
        crate::Orientation::Identity => Ok(img),
        o => crate::cpu::orient(&img.view(), o),
    }
}

/// The turn or flip a JPEG's EXIF orientation asks for, from its `APP1` segment (no pixels
/// decoded); `None` when it is stored upright: no orientation, `NoTransforms`, or one that
/// does not parse, as every decoder here takes it. The CPU decoders apply it; nvJPEG
/// decodes the pixels as stored, so the `cuimg` tool sends such a file through the CPU.
///
/// ```
/// let jpeg = cuimg::io::encode(&cuimg::io::sample_rgb(), cuimg::io::Format::Jpeg { quality: 90 }).unwrap();
/// assert_eq!(cuimg::io::jpeg_orientation(&jpeg), None);
/// ```
pub fn jpeg_orientation(bytes: &[u8]) -> Option<crate::Orientation> {
    let o = JpegFile::parse(bytes).ok()?.header().orientation;
    (o != crate::Orientation::Identity).then_some(o)
}

/// Decodes PNG or JPEG bytes to `P`, upright, rounding samples of more than 8 bits (16-bit
/// PNG) to 8: the `image` crate rounds `v / 257` to the nearest. [`bits_per_channel`] tells
/// beforehand, to warn about it as the `cuimg` tool does.
///
/// ```
/// let deep = image::DynamicImage::new_rgb16(3, 2);
/// let mut png = Vec::new();
/// deep.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png).unwrap();
/// let name = std::path::Path::new("deep.png");
/// assert!(matches!(cuimg::io::decode_rgb(&png, name), Err(cuimg::Error::UnsupportedFormat(_))));
/// let img = cuimg::io::decode_converted::<cuimg::Rgb8>(&png, name).unwrap();
/// assert_eq!(img.dimensions(), (3, 2));
/// ```
pub fn decode_converted<P: Encode>(bytes: &[u8], name: &Path) -> Result<Image<P>> {
    decode_as(bytes, name, Depth::RoundTo8, &Limits::default())
}

fn decode_as<P: Encode>(bytes: &[u8], name: &Path, depth: Depth, limits: &Limits) -> Result<Image<P>> {
    Ok(P::from_dynamic(decode(bytes, name, depth, limits, P::CHANNELS as u32)?))
}

/// Reads a file as RGB, upright (its EXIF orientation applied). A file that cannot be read
/// is [`Error::Io`] with its path; one that does not decode, [`Error::Decode`]; one of more
/// than 8 bits per channel, [`Error::UnsupportedFormat`] ([`load_converted`] takes it).
///
/// ```
/// let err = cuimg::io::load_rgb("no/such/file.png").unwrap_err();
/// assert!(matches!(err, cuimg::Error::Io { .. }));
/// assert!(err.to_string().contains("no/such/file.png"));
/// ```
pub fn load_rgb(path: impl AsRef<Path>) -> Result<Image<Rgb8>> {
    load_as(path.as_ref(), Depth::Refuse)
}

/// Reads a file as RGBA, as [`load_rgb`] does.
pub fn load_rgba(path: impl AsRef<Path>) -> Result<Image<Rgba8>> {
    load_as(path.as_ref(), Depth::Refuse)
}

/// Reads a file as 8-bit gray, as [`load_rgb`] does (color sources are converted by the
/// `image` crate's own luma, not this crate's kernels).
pub fn load_gray(path: impl AsRef<Path>) -> Result<Image<Gray8>> {
    load_as(path.as_ref(), Depth::Refuse)
}

/// Reads a file as 8-bit gray + alpha, as [`load_rgb`] does (sources without alpha get an
/// opaque one).
///
/// ```
/// let img = cuimg::Image::<cuimg::La8>::from_bytes(2, 1, &[10, 255, 20, 128]).unwrap();
/// // One name per process: the doc tests may run in several processes at once.
/// let path = std::env::temp_dir().join(format!("cuimg-doc-la8-{}.png", std::process::id()));
/// cuimg::io::save(&img, &path).unwrap();
/// assert_eq!(cuimg::io::load_gray_alpha(&path).unwrap(), img);
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn load_gray_alpha(path: impl AsRef<Path>) -> Result<Image<La8>> {
    load_as(path.as_ref(), Depth::Refuse)
}

/// Reads a file as `P`, rounding samples of more than 8 bits to 8 (see
/// [`decode_converted`]); otherwise as [`load_rgb`].
pub fn load_converted<P: Encode>(path: impl AsRef<Path>) -> Result<Image<P>> {
    load_as(path.as_ref(), Depth::RoundTo8)
}

fn load_as<P: Encode>(path: &Path, depth: Depth) -> Result<Image<P>> {
    let limits = Limits::default();
    decode_as(&read_checked(path, P::CHANNELS as u32, &limits)?.1, path, depth, &limits)
}

/// Formats the `image` crate reads into and writes from an [`Image`].
pub trait Encode: Pixel {
    #[doc(hidden)]
    fn to_dynamic(img: &Image<Self>) -> DynamicImage;
    #[doc(hidden)]
    fn from_dynamic(img: DynamicImage) -> Image<Self>;
}

impl Encode for Gray8 {
    fn from_dynamic(img: DynamicImage) -> Image<Self> {
        img.into_luma8().into() // keeps the decoder's allocation
    }

    fn to_dynamic(img: &Image<Self>) -> DynamicImage {
        DynamicImage::ImageLuma8(
            GrayImage::from_raw(img.width(), img.height(), img.as_bytes().to_vec()).expect("packed"),
        )
    }
}

impl Encode for La8 {
    fn from_dynamic(img: DynamicImage) -> Image<Self> {
        img.into_luma_alpha8().into() // keeps the decoder's allocation
    }

    fn to_dynamic(img: &Image<Self>) -> DynamicImage {
        DynamicImage::ImageLumaA8(
            GrayAlphaImage::from_raw(img.width(), img.height(), img.as_bytes().to_vec()).expect("packed"),
        )
    }
}

impl Encode for Rgb8 {
    fn from_dynamic(img: DynamicImage) -> Image<Self> {
        img.into_rgb8().into() // keeps the decoder's allocation
    }

    fn to_dynamic(img: &Image<Self>) -> DynamicImage {
        DynamicImage::ImageRgb8(RgbImage::from_raw(img.width(), img.height(), img.as_bytes().to_vec()).expect("packed"))
    }
}

impl Encode for Rgba8 {
    fn from_dynamic(img: DynamicImage) -> Image<Self> {
        img.into_rgba8().into() // keeps the decoder's allocation
    }

    fn to_dynamic(img: &Image<Self>) -> DynamicImage {
        DynamicImage::ImageRgba8(
            RgbaImage::from_raw(img.width(), img.height(), img.as_bytes().to_vec()).expect("packed"),
        )
    }
}

/// Writes an image; the format follows the extension (`.png`, `.jpg`).
///
/// ```
/// let img = cuimg::Image::<cuimg::Gray8>::filled(8, 8, 128);
/// let path = std::env::temp_dir().join(format!("cuimg-doc-save-{}.png", std::process::id()));
/// cuimg::io::save(&img, &path).unwrap();
/// assert_eq!(cuimg::io::load_gray(&path).unwrap(), img);
/// std::fs::remove_file(&path).unwrap();
/// let err = cuimg::io::save(&img, "out.unknown-format").unwrap_err();
/// assert!(matches!(err, cuimg::Error::Encode { .. }));
/// ```
pub fn save<P: Encode>(img: &Image<P>, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    P::to_dynamic(img).save(path).map_err(|source| Error::Encode { path: path.into(), source: source.into() })
}

/// Writes an image in `format` (a JPEG's quality with it), whatever the path's extension.
///
/// ```
/// use cuimg::io::{save_with, Format};
/// let img = cuimg::io::sample_rgb();
/// let path = std::env::temp_dir().join(format!("cuimg-doc-save-with-{}.jpg", std::process::id()));
/// save_with(&img, &path, Format::Jpeg { quality: 80 })?;
/// assert_eq!(cuimg::io::load_rgb(&path)?.dimensions(), (451, 300));
/// std::fs::remove_file(&path)?; // std::io::Error converts into cuimg::Error
/// # Ok::<(), cuimg::Error>(())
/// ```
pub fn save_with<P: Encode>(img: &Image<P>, path: impl AsRef<Path>, format: Format) -> Result<()> {
    let path = path.as_ref();
    let bytes = encode(img, format).map_err(|e| match e {
        Error::Encode { source, .. } => Error::Encode { path: path.into(), source },
        e => e,
    })?;
    std::fs::write(path, bytes).map_err(|source| Error::Io { path: path.into(), source })
}

/// A file format to encode to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Png,
    /// JPEG at `quality` 1 to 100.
    Jpeg {
        quality: u8,
    },
}

impl Format {
    /// The format a path's extension names (`png`, `jpg`, `jpeg`; any case), JPEG at
    /// `quality`.
    pub fn from_path(path: &Path, quality: u8) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "png" => Some(Format::Png),
            "jpg" | "jpeg" => Some(Format::Jpeg { quality }),
            _ => None,
        }
    }
}

/// Encodes to bytes in memory (PNG, or JPEG at a quality).
///
/// ```
/// use cuimg::io::{encode, Format};
/// let img = cuimg::Image::<cuimg::Rgb8>::filled(16, 16, 90);
/// let jpg = encode(&img, Format::Jpeg { quality: 90 }).unwrap();
/// assert!(jpg.starts_with(&[0xFF, 0xD8]) && cuimg::io::jpeg_is_complete(&jpg));
/// ```
pub fn encode<P: Encode>(img: &Image<P>, format: Format) -> Result<Vec<u8>> {
    let err = |source: image::ImageError| Error::Encode { path: "<memory>".into(), source: source.into() };
    let mut out = std::io::Cursor::new(Vec::new());
    match format {
        Format::Png => P::to_dynamic(img).write_to(&mut out, image::ImageFormat::Png).map_err(err)?,
        Format::Jpeg { quality } => {
            // JPEG has no alpha: formats with one are flattened to their color channels.
            let dynamic = P::to_dynamic(img);
            let dynamic = match dynamic.color().has_alpha() {
                true if dynamic.color().has_color() => DynamicImage::ImageRgb8(dynamic.into_rgb8()),
                true => DynamicImage::ImageLuma8(dynamic.into_luma8()),
                false => dynamic,
            };
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality.clamp(1, 100));
            dynamic.write_with_encoder(encoder).map_err(err)?;
        }
    }
    Ok(out.into_inner())
}

/// Encodes to PNG bytes in memory.
pub fn encode_png<P: Encode>(img: &Image<P>) -> Result<Vec<u8>> {
    let mut out = std::io::Cursor::new(Vec::new());
    P::to_dynamic(img)
        .write_to(&mut out, image::ImageFormat::Png)
        .map_err(|source| Error::Encode { path: "<memory>".into(), source: source.into() })?;
    Ok(out.into_inner())
}
