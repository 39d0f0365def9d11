//! 8-bit images to normalized float tensors for ML frameworks, and model outputs back to
//! images (issue 29, part 2): f32, f16 or bf16 elements, NCHW or NHWC, channel order kept
//! or reversed, per-channel mean and std (torchvision v2's `ToDtype(scale=True)` then
//! `Normalize`) or scale and offset, mirrored rows, padding to a fixed size; a crop is a
//! region of the source (`roi`), read in the same pass. Every form computes what
//! `cuimg_abi::tensor` defines, so the GPU's elements are the CPU reference's bit for bit.
//!
//! In the registry as `tensor` (`op.rs`): an image to a tensor of one image, its stream form
//! into image `index` of a device tensor, and in the tool as `cuimg tensor`, which writes
//! NumPy's `.npy` files (`npy.rs`). `tests/tests/tensor.rs` tests the batches, the inverse
//! and the goldens.

pub(crate) mod cpu;
pub(crate) mod gpu;
mod npy;
pub(crate) mod op;

use cuimg_abi::tensor::{
    AFFINE_MEAN_STD, AFFINE_SCALE_OFFSET, Affine, DTYPE_BF16, DTYPE_F16, DTYPE_F32, TensorFormat, bf16_value,
    f16_value,
};

use crate::error::{Error, Result};
use crate::runtime::DeviceBuffer;

/// A tensor's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    /// IEEE half precision (rounded to nearest, ties to even, as `torch.Tensor.half()`).
    F16,
    /// bfloat16 (rounded to nearest, ties to even, as `torch.Tensor.bfloat16()`).
    Bf16,
}

impl DType {
    /// Bytes of one element.
    pub const fn bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
        }
    }

    fn code(self) -> u32 {
        match self {
            DType::F32 => DTYPE_F32,
            DType::F16 => DTYPE_F16,
            DType::Bf16 => DTYPE_BF16,
        }
    }
}

/// How a tensor's elements lie: images, then channels as planes, rows, columns (`Nchw`,
/// PyTorch's default), or images, rows, columns, channels (`Nhwc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorLayout {
    Nchw,
    Nhwc,
}

/// What each byte becomes, per channel (alpha is a channel like the others). The values
/// are indexed by the image's channels: with [`TensorSpec::reverse_channels`], an RGB image
/// normalized by RGB means becomes a BGR tensor, each channel by its own color's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Normalize {
    /// torchvision v2's `ToDtype(torch.float32, scale=True)` then `Normalize(mean, std)`:
    /// `(x * (1 / 255) - mean) / std`, `1 / 255` rounded to f32 as torchvision's scaling
    /// does, each step one f32 rounding.
    MeanStd { mean: [f32; 4], std: [f32; 4] },
    /// `x * scale + offset`, two f32 roundings (not fused): DALI's and CV-CUDA's form, and
    /// plain `x` with scale 1 and offset 0.
    ScaleOffset { scale: [f32; 4], offset: [f32; 4] },
}

impl Normalize {
    /// ImageNet's mean and std (RGB order; a fourth channel 0 and 1), over bytes scaled
    /// to 0..1: what most vision models were trained on.
    pub const IMAGENET: Normalize =
        Normalize::MeanStd { mean: [0.485, 0.456, 0.406, 0.0], std: [0.229, 0.224, 0.225, 1.0] };

    /// Bytes scaled to 0..1 (torchvision's `ToDtype(scale=True)` alone).
    pub const UNIT: Normalize = Normalize::MeanStd { mean: [0.0; 4], std: [1.0; 4] };

    fn affine(&self) -> Affine {
        match *self {
            Normalize::MeanStd { mean, std } => Affine { kind: AFFINE_MEAN_STD, a: mean, b: std },
            Normalize::ScaleOffset { scale, offset } => Affine { kind: AFFINE_SCALE_OFFSET, a: scale, b: offset },
        }
    }

    /// Refuses what makes no tensor or cannot be undone: a value that is not finite, a zero
    /// std or scale.
    fn check(&self) -> Result<()> {
        let (a, b, names) = match *self {
            Normalize::MeanStd { mean, std } => (mean, std, ("mean", "std")),
            Normalize::ScaleOffset { scale, offset } => (scale, offset, ("scale", "offset")),
        };
        let bad = |what: &str, why: String| Err(Error::InvalidParameter { what: format!("normalization {what}"), why });
        for c in 0..4 {
            if !a[c].is_finite() {
                return bad(names.0, format!("channel {c} is {}, not a finite number", a[c]));
            }
            if !b[c].is_finite() {
                return bad(names.1, format!("channel {c} is {}, not a finite number", b[c]));
            }
        }
        let zero = match *self {
            Normalize::MeanStd { std, .. } => std.iter().position(|&s| s == 0.0).map(|c| ("std", c)),
            Normalize::ScaleOffset { scale, .. } => scale.iter().position(|&s| s == 0.0).map(|c| ("scale", c)),
        };
        if let Some((what, c)) = zero {
            return bad(what, format!("channel {c} is 0: every byte would map to one value (or divide by zero)"));
        }
        Ok(())
    }
}

/// How an image becomes a tensor (and, read back, an image again).
///
/// ```
/// use cuimg::{DType, Normalize, TensorLayout, TensorSpec};
/// let spec = TensorSpec::new(DType::F16).normalize(Normalize::IMAGENET).pad_to(224, 224, 0.0);
/// assert_eq!(spec.layout, TensorLayout::Nchw);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorSpec {
    pub dtype: DType,
    pub layout: TensorLayout,
    pub normalize: Normalize,
    /// The first three channels in reverse order (RGB images to a BGR-trained model, or the
    /// reverse); alpha stays last. No effect on one or two channels.
    pub reverse_channels: bool,
    /// Each row mirrored (a horizontal flip, as DALI's `crop_mirror_normalize`).
    pub flip: bool,
    /// The tensor's width and height, where larger than the images: each image at the top
    /// left, `fill` (in the tensor's units) around it. Needed for ragged batches.
    pub size: Option<(u32, u32)>,
    pub fill: f32,
}

impl TensorSpec {
    /// NCHW, bytes scaled to 0..1, channels kept, no flip, no padding.
    pub const fn new(dtype: DType) -> TensorSpec {
        TensorSpec {
            dtype,
            layout: TensorLayout::Nchw,
            normalize: Normalize::UNIT,
            reverse_channels: false,
            flip: false,
            size: None,
            fill: 0.0,
        }
    }

    pub const fn layout(mut self, layout: TensorLayout) -> TensorSpec {
        self.layout = layout;
        self
    }

    pub const fn normalize(mut self, normalize: Normalize) -> TensorSpec {
        self.normalize = normalize;
        self
    }

    pub const fn reverse_channels(mut self, reverse: bool) -> TensorSpec {
        self.reverse_channels = reverse;
        self
    }

    pub const fn flip(mut self, flip: bool) -> TensorSpec {
        self.flip = flip;
        self
    }

    /// Tensors of `width` x `height`, `fill` around each image.
    pub const fn pad_to(mut self, width: u32, height: u32, fill: f32) -> TensorSpec {
        self.size = Some((width, height));
        self.fill = fill;
        self
    }

    /// The tensor's width and height for images of `sizes`, checked: every image fits the
    /// padded size, or (without one) all share a size; the normalization and fill are
    /// usable.
    pub(crate) fn extent(&self, sizes: impl IntoIterator<Item = (u32, u32)>) -> Result<(u32, u32)> {
        self.normalize.check()?;
        if !self.fill.is_finite() {
            return Err(Error::InvalidParameter {
                what: "tensor fill".into(),
                why: format!("{} is not a finite number", self.fill),
            });
        }
        let mut sizes = sizes.into_iter().peekable();
        let first = *sizes.peek().ok_or(Error::EmptyBatch)?;
        let (w, h) = self.size.unwrap_or(first);
        crate::validate::non_empty(w, h)?;
        for (i, (iw, ih)) in sizes.enumerate() {
            crate::validate::non_empty(iw, ih)?;
            let fits = match self.size {
                Some(_) => iw <= w && ih <= h,
                None => (iw, ih) == (w, h),
            };
            if !fits {
                let why = match self.size {
                    Some(_) => format!("image {i} is {iw}x{ih}, larger than the tensor's {w}x{h}"),
                    None => format!(
                        "image {i} is {iw}x{ih} and image 0 {w}x{h}: a batch of several sizes needs a size to pad to \
                         (TensorSpec::pad_to)"
                    ),
                };
                return Err(Error::InvalidParameter { what: "tensor size".into(), why });
            }
        }
        Ok((w, h))
    }

    /// The shape of a tensor of `images` images of `P` at `width` x `height` (before
    /// padding: `size`, where set, replaces them), for [`crate::Stream::alloc_tensor`].
    pub fn shape_of<P: crate::Pixel>(&self, images: usize, width: u32, height: u32) -> TensorShape {
        self.shape(images, P::CHANNELS, self.size.unwrap_or((width, height)))
    }

    /// The shape of `images` images of `channels` in tensors of `width` x `height`.
    pub(crate) fn shape(&self, images: usize, channels: usize, (width, height): (u32, u32)) -> TensorShape {
        TensorShape {
            images,
            channels,
            height: height as usize,
            width: width as usize,
            dtype: self.dtype,
            layout: self.layout,
        }
    }

    pub(crate) fn format(&self, (width, height): (u32, u32)) -> TensorFormat {
        TensorFormat {
            width,
            height,
            dtype: self.dtype.code(),
            planar: u32::from(self.layout == TensorLayout::Nchw),
            reverse: u32::from(self.reverse_channels),
            flip: u32::from(self.flip),
            fill: self.fill,
            _pad: 0,
            affine: self.normalize.affine(),
        }
    }
}

/// A tensor's shape and element type: `images` of `channels` x `height` x `width`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorShape {
    pub images: usize,
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub dtype: DType,
    pub layout: TensorLayout,
}

impl TensorShape {
    /// The dimensions in memory order: `[n, c, h, w]` (NCHW) or `[n, h, w, c]` (NHWC).
    pub fn dims(&self) -> [usize; 4] {
        match self.layout {
            TensorLayout::Nchw => [self.images, self.channels, self.height, self.width],
            TensorLayout::Nhwc => [self.images, self.height, self.width, self.channels],
        }
    }

    /// Elements of one image.
    pub fn image_elements(&self) -> usize {
        self.channels * self.height * self.width
    }

    /// Bytes of one image.
    pub fn image_bytes(&self) -> usize {
        self.image_elements() * self.dtype.bytes()
    }

    /// Bytes of the whole tensor, checked.
    pub fn bytes(&self) -> Result<usize> {
        [self.images, self.channels, self.height, self.width, self.dtype.bytes()]
            .into_iter()
            .try_fold(1usize, |a, b| a.checked_mul(b))
            .ok_or_else(|| Error::TooLarge { what: "tensor".into(), size: u64::MAX, limit: usize::MAX as u64 })
    }

    /// The flat element index of channel `c` of pixel `(x, y)` of image `n`.
    pub fn index(&self, n: usize, c: usize, y: usize, x: usize) -> usize {
        n * self.image_elements()
            + match self.layout {
                TensorLayout::Nchw => (c * self.height + y) * self.width + x,
                TensorLayout::Nhwc => (y * self.width + x) * self.channels + c,
            }
    }
}

/// A tensor in host memory: its elements as little-endian bytes (f32, or the bits of f16
/// and bf16), and its shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub(crate) bytes: Vec<u8>,
    pub(crate) shape: TensorShape,
}

impl Tensor {
    /// A tensor from its bytes (as [`Tensor::as_bytes`] gives them); their length must be
    /// the shape's.
    pub fn from_bytes(shape: TensorShape, bytes: Vec<u8>) -> Result<Tensor> {
        let want = shape.bytes()?;
        if bytes.len() != want {
            return Err(Error::WrongLength { what: "tensor bytes".into(), expected: want, actual: bytes.len() });
        }
        Ok(Tensor { bytes, shape })
    }

    pub fn shape(&self) -> TensorShape {
        self.shape
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Element `i` (flat, in memory order) as f32 (f16 and bf16 widened exactly).
    pub fn get(&self, i: usize) -> f32 {
        let b = &self.bytes;
        match self.shape.dtype {
            DType::F32 => f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]),
            DType::F16 => f16_value(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])),
            DType::Bf16 => bf16_value(u16::from_le_bytes([b[2 * i], b[2 * i + 1]])),
        }
    }

    /// Every element as f32, in memory order.
    pub fn to_f32(&self) -> Vec<f32> {
        (0..self.bytes.len() / self.shape.dtype.bytes()).map(|i| self.get(i)).collect()
    }
}

/// A tensor in device memory (see [`Tensor`]), for a framework to take by address
/// ([`DeviceTensor::as_raw_ptr`]) or to read back.
#[derive(Debug)]
pub struct DeviceTensor {
    pub(crate) buf: DeviceBuffer<u8>,
    pub(crate) shape: TensorShape,
}

impl DeviceTensor {
    pub fn shape(&self) -> TensorShape {
        self.shape
    }

    /// The device address of its first element (densely packed in [`TensorShape::dims`]
    /// order), for handing to a framework (`torch.from_blob`, candle's `wrap_cuda_slice`);
    /// valid while the tensor lives. Work queued on its stream must be waited for first.
    pub fn as_raw_ptr(&self) -> u64 {
        self.buf.buf.device_addr()
    }
}
