//! `tensor` in the registry (`crate::registry`): an image to a normalized float tensor of
//! one image. Its stream form writes image `index` of a device tensor
//! ([`Target::Tensor`]); the tool writes NumPy's `.npy` files ([`Tensor::to_npy`]).

use super::{DType, Normalize, Tensor, TensorLayout, TensorSpec};
use crate::error::{Error, Result};
use crate::registry::{
    AnyDeviceView, AnyView, Args, Bound, Cli, GrayInput, Operation, Output, Param, PixelFormat, Produces, Target, host,
    source, views_as, with_format, wrong_target,
};
use crate::runtime::{Gpu, Stream};
use crate::{cpu, par};

const NAME: &str = "tensor";

pub(crate) static TENSOR: Operation = Operation {
    name: NAME,
    about: "an image to a normalized float tensor (torchvision v2's ToDtype(scale=True), then Normalize)",
    reference: "torchvision v2 ToDtype(float32, scale=True) and Normalize, then .half() or .bfloat16()",
    formats: &PixelFormat::ALL,
    params: &[
        Param { name: "dtype", help: "f32, f16 or bf16", default: Some("f32"), samples: &["f16", "bf16"], bad: Some("f64") },
        Param {
            name: "layout",
            help: "nchw (channels as planes, PyTorch's) or nhwc (channels interleaved)",
            default: Some("nchw"),
            samples: &["nhwc"],
            bad: Some("chw"),
        },
        Param {
            name: "normalize",
            help: "unit (bytes scaled to 0..1), imagenet (then ImageNet's mean and std, RGB order) or raw (the \
                   bytes' values)",
            default: Some("unit"),
            samples: &["imagenet", "raw"],
            bad: Some("zscore"),
        },
        Param {
            name: "reverse",
            help: "the first three channels in reverse order (RGB images to a BGR model)",
            default: None,
            samples: &["on"],
            bad: None,
        },
        Param { name: "flip", help: "each row mirrored", default: None, samples: &["on"], bad: None },
        Param {
            name: "size",
            help: "a tensor of WIDTHxHEIGHT, the image at its top left and --fill around it; none: the image's size",
            default: Some("none"),
            samples: &["400x300"],
            bad: Some("0x3"),
        },
        Param {
            name: "fill",
            help: "the value around the image with --size (in the tensor's units)",
            default: Some("0"),
            samples: &["-1.5"],
            bad: Some("nan"),
        },
    ],
    bind: |args| Ok(Box::new(ToTensor { spec: spec(args)? })),
    cli: Some(Cli {
        command: "tensor",
        about: "Images to normalized float tensors for ML frameworks, as NumPy .npy files (torchvision v2's \
                ToDtype(scale=True) then Normalize; --dtype, --layout, --normalize say which). bf16 is written as \
                its bits ('<u2'): torch.from_numpy(a).view(torch.bfloat16).",
        gray: GrayInput::Unchanged,
    }),
};

/// The value of parameter `name` among `choices` (its names and what each means).
fn choice<T: Copy>(args: &Args, name: &str, choices: &[(&str, T)]) -> Result<T> {
    let v = args.get(name).unwrap_or_default();
    choices.iter().find(|(n, _)| *n == v).map(|&(_, t)| t).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        Error::InvalidParameter { what: format!("--{name}"), why: format!("{v:?} is not one of {}", names.join(", ")) }
    })
}

/// The spec the parameters ask for.
fn spec(args: &Args) -> Result<TensorSpec> {
    let dtype = choice(args, "dtype", &[("f32", DType::F32), ("f16", DType::F16), ("bf16", DType::Bf16)])?;
    let layout = choice(args, "layout", &[("nchw", TensorLayout::Nchw), ("nhwc", TensorLayout::Nhwc)])?;
    let raw = Normalize::ScaleOffset { scale: [1.0; 4], offset: [0.0; 4] };
    let normalize =
        choice(args, "normalize", &[("unit", Normalize::UNIT), ("imagenet", Normalize::IMAGENET), ("raw", raw)])?;
    let mut spec = TensorSpec::new(dtype)
        .layout(layout)
        .normalize(normalize)
        .reverse_channels(args.flag("reverse"))
        .flip(args.flag("flip"));
    let fill: f32 = args.number("fill")?;
    if !fill.is_finite() {
        return Err(Error::InvalidParameter { what: "--fill".into(), why: format!("{fill} is not a finite number") });
    }
    match args.get("size").unwrap_or("none") {
        "none" => {}
        text => {
            let (w, h) = crate::ops::resize::op::size("size", text)?;
            spec = spec.pad_to(w, h, fill);
        }
    }
    Ok(spec)
}

struct ToTensor {
    spec: TensorSpec,
}

/// A tensor result, erased.
fn tensor(t: Result<Tensor>) -> Result<Output> {
    t.map(Output::Tensor)
}

impl Bound for ToTensor {
    fn produces(&self, _: PixelFormat) -> Option<Produces> {
        Some(Produces { image: None, histogram: None, tensor: Some((self.spec.dtype, self.spec.layout)) })
    }

    fn size(&self, width: u32, height: u32) -> (u32, u32) {
        self.spec.size.unwrap_or((width, height))
    }

    fn cpu(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            tensor(cpu::to_tensor(host::<P>(src), &self.spec)))
    }

    fn par(&self, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            tensor(par::to_tensor(host::<P>(src), &self.spec)))
    }

    fn gpu(&self, gpu: &Gpu, src: &AnyView<'_>) -> Result<Output> {
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            tensor(gpu.to_tensor(host::<P>(src), &self.spec)))
    }

    /// One launch for the batch when the tensors are padded to one size; without `--size`,
    /// one launch for each size among the images (a tensor holds images of one size).
    fn gpu_batch(&self, gpu: &Gpu, imgs: &[AnyView<'_>]) -> Result<Vec<Output>> {
        let first = imgs.first().ok_or(Error::EmptyBatch)?.format();
        let groups: Vec<Vec<usize>> = match self.spec.size {
            Some(_) => vec![(0..imgs.len()).collect()],
            None => {
                let mut groups: Vec<((u32, u32), Vec<usize>)> = Vec::new();
                for (i, img) in imgs.iter().enumerate() {
                    match groups.iter_mut().find(|(size, _)| *size == img.dimensions()) {
                        Some((_, members)) => members.push(i),
                        None => groups.push((img.dimensions(), vec![i])),
                    }
                }
                groups.into_iter().map(|(_, members)| members).collect()
            }
        };
        let mut out: Vec<Option<Output>> = vec![None; imgs.len()];
        for members in groups {
            let views: Vec<AnyView<'_>> = members.iter().map(|&i| imgs[i]).collect();
            let t = with_format!(first, NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
                gpu.to_tensor_batch(&views_as::<P>(&views)?, &self.spec))?;
            for (&i, one) in members.iter().zip(t.split()) {
                out[i] = Some(Output::Tensor(one));
            }
        }
        Ok(out.into_iter().map(|o| o.expect("every image is in a group")).collect())
    }

    fn stream(&self, s: &Stream, src: &AnyDeviceView<'_>, target: Target<'_>) -> Result<()> {
        let Target::Tensor(dst, index) = target else { return Err(wrong_target(NAME, "an image of a tensor")) };
        with_format!(src.format(), NAME, [Gray8, La8, Rgb8, Bgr8, Rgba8, Bgra8], P =>
            s.to_tensor(source::<P>(src), &self.spec, dst, index))
    }
}
