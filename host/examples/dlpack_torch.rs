//! cuimg and PyTorch in one process through DLPack (issue 29, part 4): a shared library
//! that `host/examples/dlpack_torch.py` loads with `ctypes` and checks against PyTorch's own
//! `torch.from_dlpack` and `Tensor.__dlpack__`. Built as a `cdylib`:
//!
//! `cargo build --release --features dlpack --example dlpack_torch`, then
//! `python3 host/examples/dlpack_torch.py target/release/examples/libdlpack_torch.so`
//!
//! Every function returns 0 on success and -1 on failure, with the error's message from
//! [`cuimg_last_error`]. Each managed tensor handed out belongs to the caller, who calls its
//! deleter (PyTorch does, once the tensor it made is freed). cuimg and PyTorch share the
//! device's primary context, so the addresses are valid on both sides.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::OnceLock;

use cuimg::dlpack::SafeManagedTensorVersioned;
use cuimg::{DType, DeviceTensor, Gpu, Image, Normalize, Rgb8, TensorLayout, TensorSpec};

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn gpu() -> cuimg::Result<&'static Gpu> {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    if let Some(g) = GPU.get() {
        return Ok(g);
    }
    let g = Gpu::new()?;
    Ok(GPU.get_or_init(|| g))
}

/// The test image both sides make: channel values from the pixel's place.
pub fn pattern(width: u32, height: u32) -> Image<Rgb8> {
    Image::from_fn(width, height, |x, y| {
        Rgb8([((x * 7 + y * 3) % 256) as u8, ((x * y) % 256) as u8, ((x + 2 * y) % 256) as u8])
    })
}

/// The spec the exported tensor and the imported one are read with.
fn spec(dtype: DType) -> TensorSpec {
    TensorSpec::new(dtype).normalize(Normalize::IMAGENET)
}

/// `f`'s managed tensor into `*out` (0), or its error kept for [`cuimg_last_error`] (-1).
fn hand_out(out: *mut *mut c_void, f: impl FnOnce() -> cuimg::Result<SafeManagedTensorVersioned>) -> i32 {
    match f() {
        Ok(t) => {
            // SAFETY: `out` is a writable pointer slot (the caller's contract); the managed
            // tensor is the caller's from here, freed by its deleter.
            unsafe { *out = t.into_raw().cast() };
            0
        }
        Err(e) => {
            LAST_ERROR.with(|l| *l.borrow_mut() = e.to_string());
            -1
        }
    }
}

/// The pattern image, `width` x `height`, as an NCHW ImageNet-normalized tensor of f32
/// (`dtype` 0), f16 (1) or bf16 (2), handed out as a versioned DLPack managed tensor.
///
/// # Safety
/// `out` is a writable pointer slot.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuimg_export_tensor(width: u32, height: u32, dtype: u32, out: *mut *mut c_void) -> i32 {
    hand_out(out, || {
        let dtype = match dtype {
            0 => DType::F32,
            1 => DType::F16,
            _ => DType::Bf16,
        };
        let s = gpu()?.stream()?;
        let src = s.upload(&pattern(width, height).view())?;
        let spec = spec(dtype);
        let mut t = s.alloc_tensor(spec.shape_of::<Rgb8>(1, width, height))?;
        s.to_tensor(&src, &spec, &mut t, 0)?;
        t.into_dlpack()
    })
}

/// The pattern image itself, `[height, width, 3]` bytes with its row pitch as the first
/// stride, handed out as a versioned DLPack managed tensor.
///
/// # Safety
/// `out` is a writable pointer slot.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuimg_export_image(width: u32, height: u32, out: *mut *mut c_void) -> i32 {
    hand_out(out, || gpu()?.stream()?.upload(&pattern(width, height).view())?.into_dlpack())
}

/// A PyTorch tensor taken in (`t`, a versioned managed tensor of NCHW f32, f16 or bf16 with
/// one image of three channels), turned back into bytes by the ImageNet spec
/// (`Stream::from_tensor`), and those bytes handed out as [`cuimg_export_image`] does. The
/// producer's deleter runs before this returns.
///
/// # Safety
/// `t` is a live `DLManagedTensorVersioned` of CUDA memory whose producer's work on it has
/// finished, given to this function (it calls the deleter); `out` is a writable pointer slot.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuimg_import_to_image(t: *mut c_void, out: *mut *mut c_void) -> i32 {
    hand_out(out, || {
        // SAFETY: the caller's contract: a managed tensor given to us.
        let t = unsafe { SafeManagedTensorVersioned::from_raw(t.cast()) };
        let s = gpu()?.stream()?;
        // SAFETY: CUDA memory of the primary context (PyTorch's and cuimg's), finished (the
        // caller's contract); `tensor_from_dlpack` checks the rest.
        let imported = unsafe { s.tensor_from_dlpack(t, TensorLayout::Nchw)? };
        let tensor: &DeviceTensor = &imported;
        let shape = tensor.shape();
        let mut img = s.alloc::<Rgb8>(shape.width as u32, shape.height as u32)?;
        s.from_tensor(tensor, 0, &spec(shape.dtype), &mut img)?;
        drop(imported);
        img.into_dlpack()
    })
}

/// Copies the last error's message (UTF-8, not terminated) into `buf`, at most `len` bytes;
/// returns its full length.
///
/// # Safety
/// `buf` holds `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuimg_last_error(buf: *mut u8, len: usize) -> usize {
    LAST_ERROR.with(|l| {
        let l = l.borrow();
        let n = l.len().min(len);
        // SAFETY: `buf` holds `len >= n` writable bytes (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(l.as_ptr(), buf, n) };
        l.len()
    })
}
