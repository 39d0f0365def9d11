//! Gather as an image transform: a horizontal flip and a random pixel shuffle expressed as
//! index arrays, on the GPU, with the device-side bounds check shown failing on purpose.
//!
//! `cargo run --release --example gather -- [input.png] [output.png]`

mod common;

use cuimg::{Image, Rgb8, cpu, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, output) = common::args("gather-out.png");
    let mut gpu_stages = common::Stages::new();
    let img = common::decode(&mut gpu_stages, &input)?;
    let (w, h) = img.dimensions();
    println!("input: {w}x{h} RGB8, gathered as [u8; 3] elements");
    // Flip: out(x, y) = in(w - 1 - x, y).
    let flip: Vec<u32> = (0..h).flat_map(|y| (0..w).map(move |x| y * w + (w - 1 - x))).collect();
    let pixels: &[[u8; 3]] = bytemuck::cast_slice(img.as_bytes());
    let mut cpu_stages = common::Stages::new();
    let want = cpu_stages.host("CPU reference (serial loop)", || cpu::gather(pixels, &flip))?;
    // The fallback without a GPU: the same result on all cores.
    let on_cores = cpu_stages.host("all cores (cuimg::par)", || par::gather(pixels, &flip))?;
    assert_eq!(on_cores, want, "cuimg::par and the reference disagree");
    let flipped = match common::gpu()? {
        Some(gpu) => {
            let s = gpu.stream()?;
            let src = gpu_stages.device("upload", &s, || s.upload_slice(pixels))?;
            let idx = s.upload_slice(&flip)?;
            let mut out = s.alloc_slice::<[u8; 3]>(flip.len())?;
            gpu_stages.device("kernel", &s, || s.gather(&src, &idx, &mut out)?.check())?;
            let got = gpu_stages.device("download", &s, || s.download_slice(&out))?;
            assert_eq!(got, want, "GPU and CPU disagree");
            println!("GPU result equals the CPU reference");
            let mut bad = flip.clone();
            let at = 12345 % bad.len();
            bad[at] = u32::MAX;
            println!("a bad index on purpose -> {}", gpu.gather(pixels, &bad).unwrap_err());
            got
        }
        None => on_cores,
    };
    let out = Image::<Rgb8>::from_bytes(w, h, bytemuck::cast_slice(&flipped))?;
    gpu_stages.host("encode", || cuimg::io::save(&out, &output))?;
    gpu_stages.print(common::first_title());
    cpu_stages.print("CPU");
    println!("\nwrote {}", output.display());
    Ok(())
}
