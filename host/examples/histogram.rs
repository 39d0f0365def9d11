//! A per-channel histogram on the GPU, against the CPU reference; prints a coarse chart.
//!
//! `cargo run --release --example histogram -- [input.png]`

mod common;

use cuimg::{cpu, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, _) = common::args("");
    let mut gpu_stages = common::Stages::new();
    let img = common::decode(&mut gpu_stages, &input)?;
    println!("input: {}x{} RGB8", img.width(), img.height());
    let mut cpu_stages = common::Stages::new();
    let want = cpu_stages.host("CPU reference (serial loop)", || cpu::histogram(&img.view()))?;
    // The fallback without a GPU: the same result on all cores.
    let on_cores = cpu_stages.host("all cores (cuimg::par)", || par::histogram(&img.view()))?;
    assert_eq!(on_cores, want, "cuimg::par and the reference disagree");
    let hist = match common::gpu()? {
        Some(gpu) => {
            let s = gpu.stream()?;
            let src = gpu_stages.device("upload", &s, || s.upload(&img.view()))?;
            let mut bins = s.alloc_histogram(3)?;
            gpu_stages.device("kernel", &s, || s.histogram(&src, &mut bins))?;
            let hist = gpu_stages.device("download", &s, || s.download_histogram(&bins))?;
            assert_eq!(hist, want, "GPU and CPU disagree");
            println!("GPU result equals the CPU reference, bin for bin");
            hist
        }
        None => on_cores,
    };
    for (c, name) in ["red", "green", "blue"].iter().enumerate() {
        let bins = hist.channel(c);
        let groups: Vec<u64> = bins.chunks(16).map(|g| g.iter().map(|&b| b as u64).sum()).collect();
        let max = *groups.iter().max().unwrap_or(&1).max(&1);
        let bars: String =
            groups.iter().map(|&g| [' ', '.', ':', '-', '=', '+', '*', '#'][(g * 7 / max) as usize]).collect();
        println!("{name:>5} |{bars}| 0..255 in 16 groups");
    }
    gpu_stages.print(common::first_title());
    cpu_stages.print("CPU");
    Ok(())
}
