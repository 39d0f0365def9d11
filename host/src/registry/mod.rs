//! The operation registry: every image operation declares itself once, in its own folder
//! (`ops/<op>/op.rs`), as an [`Operation`]: its name, the reference it matches, the formats
//! it takes, its parameters (as text, so that the tool and the tests can set them), and,
//! once bound to parameter values, its forms ([`Bound`]): the serial CPU reference, all
//! cores, the GPU's blocking call, one GPU launch for a batch, and the launch on a stream
//! into any region of a device image.
//!
//! An operation makes an image, histograms, both, or a tensor (`tensor`: images to the
//! normalized float tensors of ML frameworks).
//!
//! [`OPERATIONS`] lists them. The cross-cutting tests (`tests/tests/registry.rs`: every
//! format, every form against the reference, regions with every byte around them kept,
//! batches, errors, sanitizers, soak), the `cuimg` tool's subcommands and the kernel
//! benchmark iterate over it, so a new operation is in all of them once it is listed; a
//! form it lacks fails a test that names it.
//!
//! ```
//! use cuimg::registry::{self, AnyImage, Args};
//! use cuimg::{Image, Rgb8};
//! let op = registry::find("grayscale").unwrap();
//! let bound = (op.bind)(&Args::parse(op, &[("weights", "bt709")])?)?;
//! let img = AnyImage::from(Image::<Rgb8>::filled(4, 3, 200));
//! let out = bound.cpu(&img.view())?;
//! assert_eq!(out.image().unwrap().as_bytes(), &[200; 12]);
//! assert_eq!(bound.par(&img.view())?, out); // all cores: the same bytes
//! # Ok::<(), cuimg::Error>(())
//! ```

mod any;
mod output;
mod then;

pub use any::{AnyDeviceImage, AnyDeviceView, AnyDeviceViewMut, AnyImage, AnyView, PixelFormat};
pub(crate) use any::{Erased, unsupported, views_as, with_format};
pub use output::DeviceOutput;
pub use then::Then;

pub use crate::ops::OPERATIONS;

use crate::error::{Error, Result};
use crate::ops::histogram::{DeviceHistogram, Histogram};
use crate::ops::tensor::{DType, DeviceTensor, Tensor, TensorLayout, TensorShape};
use crate::runtime::{Gpu, Stream};

/// One operation, as its folder declares it.
pub struct Operation {
    /// Its name: `snake_case`, the name of its folder.
    pub name: &'static str,
    /// One line: what it does.
    pub about: &'static str,
    /// What it is bit-exact with (an OpenCV call, or the CPU reference alone).
    pub reference: &'static str,
    /// The input formats it takes.
    pub formats: &'static [PixelFormat],
    /// Its parameters, with their defaults.
    pub params: &'static [Param],
    /// Its forms with the parameters given (each checked here: a bad value is an error
    /// before any image is seen).
    pub bind: fn(&Args) -> Result<Box<dyn Bound>>,
    /// Its subcommand in the `cuimg` tool, when it makes images or histograms of files.
    pub cli: Option<Cli>,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Operation({})", self.name)
    }
}

/// A parameter: `--name VALUE` in the tool, or `--name` alone for a flag.
#[derive(Debug)]
pub struct Param {
    /// Its name: `--name` in the tool.
    pub name: &'static str,
    /// One line for `--help`.
    pub help: &'static str,
    /// The value when none is given; `None` makes it a flag (absent: off).
    pub default: Option<&'static str>,
    /// Values the cross-cutting tests run the operation with (the default is always run),
    /// and one that must be refused, if any value can be.
    pub samples: &'static [&'static str],
    pub bad: Option<&'static str>,
}

/// How the tool shows an operation.
#[derive(Clone, Copy, Debug)]
pub struct Cli {
    /// The subcommand (`gray` for `grayscale`).
    pub command: &'static str,
    /// Its help: the first sentence in the list of commands, all of it in its own.
    pub about: &'static str,
    /// What happens to the gray formats the operation does not take.
    pub gray: GrayInput,
}

/// For an operation that does not take gray (or gray + alpha) images: what the tool makes
/// of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrayInput {
    /// They are written as they are (gray is already black and white).
    Unchanged,
    /// Gray is written as it is; gray + alpha loses its alpha (the result has none).
    AlphaDropped,
}

/// Parameter values by name, each checked against the operation's [`Param`]s.
#[derive(Clone, Debug, Default)]
pub struct Args {
    values: Vec<(&'static str, Option<String>)>,
}

impl Args {
    /// `given` over the defaults; a flag is on when given (its value is ignored). A name
    /// the operation does not have is an error.
    pub fn parse(op: &Operation, given: &[(&str, &str)]) -> Result<Args> {
        for (name, _) in given {
            if !op.params.iter().any(|p| p.name == *name) {
                return Err(Error::InvalidParameter {
                    what: format!("{}'s parameters", op.name),
                    why: format!("it has no parameter {name}"),
                });
            }
        }
        let values = op
            .params
            .iter()
            .map(|p| {
                let given = given.iter().rev().find(|(n, _)| *n == p.name).map(|(_, v)| v.to_string());
                match p.default {
                    Some(d) => (p.name, Some(given.unwrap_or_else(|| d.to_string()))),
                    None => (p.name, given.map(|_| String::new())),
                }
            })
            .collect();
        Ok(Args { values })
    }

    /// The defaults.
    pub fn defaults(op: &Operation) -> Args {
        Args::parse(op, &[]).expect("the defaults name only the operation's parameters")
    }

    /// A value (the default when not given); `None` for a flag that is off or a name the
    /// operation does not have.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(n, _)| *n == name).and_then(|(_, v)| v.as_deref())
    }

    /// Whether a flag is on.
    pub fn flag(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// A value parsed as `T`, with an error that names the parameter.
    pub fn number<T: std::str::FromStr>(&self, name: &str) -> Result<T> {
        let v = self.get(name).unwrap_or_default();
        v.parse()
            .map_err(|_| Error::InvalidParameter { what: format!("--{name}"), why: format!("{v:?} is not a number") })
    }
}

/// What a form returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// An image (of the format and size [`Bound::produces`] and [`Bound::size`] say).
    Image(AnyImage),
    /// One histogram per channel.
    Histogram(Histogram),
    /// An image and its histogram (`grayscale_histogram`).
    Both(AnyImage, Histogram),
    /// A tensor of one image (of the shape [`Produces::tensor_shape`] says).
    Tensor(Tensor),
}

impl Output {
    /// The image, if it made one.
    pub fn image(&self) -> Option<&AnyImage> {
        match self {
            Output::Image(i) | Output::Both(i, _) => Some(i),
            Output::Histogram(_) | Output::Tensor(_) => None,
        }
    }

    /// The histogram, if it made one.
    pub fn histogram(&self) -> Option<&Histogram> {
        match self {
            Output::Histogram(h) | Output::Both(_, h) => Some(h),
            Output::Image(_) | Output::Tensor(_) => None,
        }
    }

    /// The tensor, if it made one.
    pub fn tensor(&self) -> Option<&Tensor> {
        match self {
            Output::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

/// What an operation makes of an input of a format it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Produces {
    /// An image of this format, of [`Bound::size`].
    pub image: Option<PixelFormat>,
    /// A histogram of this many channels.
    pub histogram: Option<usize>,
    /// A tensor of one image, of these elements and layout ([`Produces::tensor_shape`]).
    pub tensor: Option<(DType, TensorLayout)>,
}

impl Produces {
    /// An image of `format`.
    pub const fn image(format: PixelFormat) -> Produces {
        Produces { image: Some(format), histogram: None, tensor: None }
    }

    /// The shape of the tensor it makes of an input of `input`'s channels, where
    /// [`Bound::size`] gives `size`.
    pub fn tensor_shape(&self, input: PixelFormat, (width, height): (u32, u32)) -> Option<TensorShape> {
        self.tensor.map(|(dtype, layout)| TensorShape {
            images: 1,
            channels: input.channels(),
            height: height as usize,
            width: width as usize,
            dtype,
            layout,
        })
    }
}

/// Where the stream form writes: a device region (of the format and size [`Produces`]
/// says), device bins, both, or an image of a device tensor.
#[derive(Debug)]
pub enum Target<'a> {
    /// A device region of the output's format and size.
    Image(AnyDeviceViewMut<'a>),
    /// Bins of the output's channel count, replaced.
    Histogram(&'a mut DeviceHistogram),
    /// Both, for an operation that makes both.
    Both(AnyDeviceViewMut<'a>, &'a mut DeviceHistogram),
    /// Image `index` of a tensor of the shape [`Produces::tensor_shape`] says, with room
    /// for `index + 1` images (other images are kept).
    Tensor(&'a mut DeviceTensor, usize),
}

impl<'a> Target<'a> {
    /// The target of an operation that makes `image`, `bins`, or both; `None` for neither.
    pub fn new(image: Option<AnyDeviceViewMut<'a>>, bins: Option<&'a mut DeviceHistogram>) -> Option<Target<'a>> {
        match (image, bins) {
            (Some(i), None) => Some(Target::Image(i)),
            (None, Some(b)) => Some(Target::Histogram(b)),
            (Some(i), Some(b)) => Some(Target::Both(i, b)),
            (None, None) => None,
        }
    }
}

/// An operation with its parameters: its forms. Each takes an input of any format the
/// operation lists and gives the same bytes; a format it does not list is
/// [`Error::UnsupportedFormat`].
pub trait Bound: Send + Sync {
    /// What it makes of `input` (`None` for a format it does not take).
    fn produces(&self, input: PixelFormat) -> Option<Produces>;
    /// The size of the image it makes of a `width` x `height` input (the same, unless it
    /// turns or resizes).
    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        (width, height)
    }
    /// The serial CPU reference (`cuimg::cpu`): the oracle.
    fn cpu(&self, src: &AnyView<'_>) -> Result<Output>;
    /// On all CPU cores (`cuimg::par`).
    fn par(&self, src: &AnyView<'_>) -> Result<Output>;
    /// The GPU's blocking call.
    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output>;
    /// One GPU launch for images of one format and any sizes.
    fn gpu_batch(&self, gpu: &Gpu, images: &[AnyView<'_>]) -> Result<Vec<Output>>;
    /// The launch on `stream`, from a device region into `target` (queued, not waited for).
    fn stream(&self, stream: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()>;
}

/// The operation named `name`.
pub fn find(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().copied().find(|op| op.name == name)
}

/// The target a stream form was not given: an error naming what it needs.
pub(crate) fn wrong_target(op: &str, needs: &str) -> Error {
    Error::InvalidParameter { what: format!("{op}'s target"), why: format!("it writes {needs}") }
}

/// The device image inside `target`, as `Q`.
pub(crate) fn target_image<'t, 'a, Q: Erased>(
    op: &str,
    target: &'t mut AnyDeviceViewMut<'a>,
) -> Result<&'t mut crate::runtime::DeviceViewMut<'a, Q>> {
    let format = target.format();
    Q::device_mut(target)
        .ok_or_else(|| Error::UnsupportedFormat(format!("{op} writes {} images, not {}", Q::NAME, format.name())))
}

/// The device region `src` as `P` (its format was matched by the caller).
pub(crate) fn source<'v, 'a, P: Erased>(src: &'v AnyDeviceView<'a>) -> &'v crate::runtime::DeviceView<'a, P> {
    P::device(src).expect("dispatched on this format")
}

/// The host view `src` as `P` (its format was matched by the caller).
pub(crate) fn host<'v, 'a, P: Erased>(src: &'v AnyView<'a>) -> &'v crate::image::ImageView<'a, P> {
    P::view(src).expect("dispatched on this format")
}

/// An image result of `P`, erased.
pub(crate) fn image<P: Erased>(img: Result<crate::image::Image<P>>) -> Result<Output> {
    img.map(|i| Output::Image(P::wrap(i)))
}

/// Image results of `P`, erased.
pub(crate) fn images<P: Erased>(imgs: Result<Vec<crate::image::Image<P>>>) -> Result<Vec<Output>> {
    imgs.map(|v| v.into_iter().map(|i| Output::Image(P::wrap(i))).collect())
}
