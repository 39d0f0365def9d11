//! Histogram equalization, entirely on the device (histogram -> CDF -> LUT -> apply), of the
//! gray image and of the color image on its luma; against the CPU reference.
//!
//! `cargo run --release --example equalize -- [input.png] [output.png]`

mod common;

use cuimg::{EqualizeMode, Gray8, GrayWeights, Rgb8, cpu, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, output) = common::args("equalize-out.png");
    let mut gpu_stages = common::Stages::new();
    let img = common::decode(&mut gpu_stages, &input)?;
    println!("input: {}x{} RGB8", img.width(), img.height());
    let gray_in = cpu::grayscale(&img.view(), GrayWeights::Bt601)?;
    let mut cpu_stages = common::Stages::new();
    let want_gray = cpu_stages.host("CPU reference, gray", || cpu::equalize(&gray_in.view()))?;
    let want_color =
        cpu_stages.host("CPU reference, color (luma)", || cpu::equalize_color(&img.view(), EqualizeMode::Luma))?;
    // The fallback without a GPU: the same result on all cores.
    let on_cores =
        cpu_stages.host("all cores (par), color", || par::equalize_color(&img.view(), EqualizeMode::Luma))?;
    assert_eq!(on_cores, want_color, "cuimg::par and the reference disagree");
    let color = match common::gpu()? {
        Some(gpu) => {
            let s = gpu.stream()?;
            let src = gpu_stages.device("upload", &s, || s.upload(&img.view()))?;
            let gray_src = s.upload(&gray_in.view())?;
            let mut gray = s.alloc::<Gray8>(img.width(), img.height())?;
            let mut color = s.alloc::<Rgb8>(img.width(), img.height())?;
            gpu_stages.device("kernels, gray equalize", &s, || s.equalize(&gray_src, &mut gray))?;
            gpu_stages.device("kernels, color equalize (luma)", &s, || {
                s.equalize_color(&src, &mut color, EqualizeMode::Luma)
            })?;
            let color = gpu_stages.device("download", &s, || s.download(&color))?;
            assert_eq!(s.download(&gray)?, want_gray, "GPU and CPU disagree (gray)");
            assert_eq!(color, want_color, "GPU and CPU disagree (color)");
            println!("GPU results equal the CPU reference (gray: bit-exact with OpenCV's equalizeHist)");
            color
        }
        None => on_cores,
    };
    gpu_stages.host("encode", || cuimg::io::save(&color, &output))?;
    gpu_stages.print(common::first_title());
    cpu_stages.print("CPU");
    println!("\nwrote {}", output.display());
    Ok(())
}
