//! RGB -> gray on the GPU, timed stage by stage, against the CPU reference.
//!
//! `cargo run --release --example grayscale -- [input.png] [output.png]`

mod common;

use cuimg::{Gray8, GrayWeights, cpu, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, output) = common::args("grayscale-out.png");
    let mut gpu_stages = common::Stages::new();
    let img = common::decode(&mut gpu_stages, &input)?;
    println!("input: {}x{} RGB8", img.width(), img.height());
    let mut cpu_stages = common::Stages::new();
    let want = cpu_stages.host("CPU reference (serial loop)", || cpu::grayscale(&img.view(), GrayWeights::Bt601))?;
    // The fallback without a GPU: the same result on all cores.
    let on_cores = cpu_stages.host("all cores (cuimg::par)", || par::grayscale(&img.view(), GrayWeights::Bt601))?;
    assert_eq!(on_cores, want, "cuimg::par and the reference disagree");

    let gray = match common::gpu()? {
        Some(gpu) => {
            let s = gpu.stream()?;
            let src = gpu_stages.device("upload", &s, || s.upload(&img.view()))?;
            let mut dst = s.alloc::<Gray8>(img.width(), img.height())?;
            gpu_stages.device("kernel", &s, || s.grayscale(&src, &mut dst, GrayWeights::Bt601))?;
            let gray = gpu_stages.device("download", &s, || s.download(&dst))?;
            assert_eq!(gray, want, "GPU and CPU disagree");
            println!("GPU result equals the CPU reference, byte for byte");
            gray
        }
        None => on_cores,
    };
    gpu_stages.host("encode", || cuimg::io::save(&gray, &output))?;
    gpu_stages.print(common::first_title());
    cpu_stages.print("CPU");
    println!("\nwrote {}", output.display());
    Ok(())
}
