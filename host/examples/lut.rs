//! A lookup table per channel (gamma on red and green, inversion on blue) on the GPU.
//!
//! `cargo run --release --example lut -- [input.png] [output.png]`

mod common;

use cuimg::{Lut, Rgb8, cpu, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, output) = common::args("lut-out.png");
    let mut gpu_stages = common::Stages::new();
    let img = common::decode(&mut gpu_stages, &input)?;
    println!("input: {}x{} RGB8", img.width(), img.height());
    let luts = [Lut::gamma(2.2), Lut::gamma(2.2), Lut::invert()];
    let mut cpu_stages = common::Stages::new();
    let want = cpu_stages.host("CPU reference (serial loop)", || cpu::apply_luts(&img.view(), &luts))?;
    // The fallback without a GPU: the same result on all cores.
    let on_cores = cpu_stages.host("all cores (cuimg::par)", || par::apply_luts(&img.view(), &luts))?;
    assert_eq!(on_cores, want, "cuimg::par and the reference disagree");
    let out = match common::gpu()? {
        Some(gpu) => {
            let s = gpu.stream()?;
            let d_luts = s.upload_luts(&luts)?;
            let src = gpu_stages.device("upload", &s, || s.upload(&img.view()))?;
            let mut dst = s.alloc::<Rgb8>(img.width(), img.height())?;
            gpu_stages.device("kernel", &s, || s.apply_lut(&src, &mut dst, &d_luts))?;
            let out = gpu_stages.device("download", &s, || s.download(&dst))?;
            assert_eq!(out, want, "GPU and CPU disagree");
            println!("GPU result equals the CPU reference, byte for byte");
            out
        }
        None => on_cores,
    };
    gpu_stages.host("encode", || cuimg::io::save(&out, &output))?;
    gpu_stages.print(common::first_title());
    cpu_stages.print("CPU");
    println!("\nwrote {}", output.display());
    Ok(())
}
