//! Other CUDA Rust code and cuimg on the same memory, with no copies between them: a cudarc
//! buffer (the photo) and a cudarc output buffer, on cudarc's own stream, processed by
//! cuimg's grayscale kernel in place of an upload, then read back by cudarc.
//!
//! `cargo run --release --example interop -- [input.png] [output.png]`

mod common;

use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut};
use cuimg::{DeviceImage, Gray8, GrayWeights, Image, Rgb8, cpu};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, output) = common::args("interop-out.png");
    let mut stages = common::Stages::new();
    let img = common::decode(&mut stages, &input)?;
    let (w, h) = img.dimensions();
    let want = cpu::grayscale(&img.view(), GrayWeights::Bt601)?;
    let Some(gpu) = common::gpu()? else { return Ok(()) };

    // Their side: cudarc's context for the same device (the device's primary context, which
    // cuimg uses too), their stream, their buffers.
    let ctx = CudaContext::new(gpu.ordinal())?;
    let theirs = ctx.new_stream()?;
    let rgb = theirs.clone_htod(img.as_bytes())?;
    let mut gray = theirs.alloc_zeros::<u8>(w as usize * h as usize)?;

    // cuimg on their stream and their memory.
    // SAFETY: `theirs` is a stream of this device's primary context and outlives `s`.
    let s = unsafe { cuimg::Stream::from_raw(&gpu, theirs.cu_stream().cast()) };
    {
        let (src_ptr, _reading) = rgb.device_ptr(&theirs);
        let (dst_ptr, _writing) = gray.device_ptr_mut(&theirs);
        // SAFETY: `rgb` holds h packed rows of w RGB pixels and `gray` h rows of w gray
        // bytes, both alive past this block; only `theirs` (= `s`) touches them meanwhile.
        let src = unsafe { DeviceImage::<Rgb8>::from_raw_parts(&s, src_ptr, w, h)? };
        // SAFETY: as above.
        let mut dst = unsafe { DeviceImage::<Gray8>::from_raw_parts(&s, dst_ptr, w, h)? };
        stages.device("kernel on their memory", &s, || s.grayscale(&src, &mut dst, GrayWeights::Bt601))?;
    } // the borrowed images drop here, once cuimg's work on the memory has finished

    // Back on their side: the result is in their buffer.
    let bytes = theirs.clone_dtoh(&gray)?;
    let got = Image::<Gray8>::from_bytes(w, h, &bytes)?;
    assert_eq!(got, want, "cuimg on cudarc's buffers disagrees with the CPU reference");
    println!("cuimg's kernel wrote cudarc's buffer in place: equal to the CPU reference, byte for byte");
    stages.host("encode", || cuimg::io::save(&got, &output))?;
    stages.print("cudarc buffers through cuimg");
    println!("\nwrote {}", output.display());
    Ok(())
}
