//! CLAHE (contrast-limited adaptive histogram equalization, bit-exact with OpenCV's
//! `createCLAHE(2.0, (8, 8)).apply`) of the gray image and of the color image on its luma,
//! on the device; against the CPU reference and the same on all cores.
//!
//! `cargo run --release --example clahe -- [input.png] [output.png]`

mod common;

use cuimg::{Clahe, EqualizeMode, Gray8, GrayWeights, Rgb8, cpu, par};

fn main() -> std::process::ExitCode {
    common::exit(run())
}

fn run() -> cuimg::Result<()> {
    let (input, output) = common::args("clahe-out.png");
    let mut gpu_stages = common::Stages::new();
    let img = common::decode(&mut gpu_stages, &input)?;
    println!("input: {}x{} RGB8", img.width(), img.height());
    let p = Clahe::default();
    let gray_in = cpu::grayscale(&img.view(), GrayWeights::Bt601)?;
    let mut cpu_stages = common::Stages::new();
    let want_gray = cpu_stages.host("CPU reference, gray", || cpu::clahe(&gray_in.view(), p))?;
    let want_color =
        cpu_stages.host("CPU reference, color (luma)", || cpu::clahe_color(&img.view(), p, EqualizeMode::Luma))?;
    // The fallback without a GPU: the same result on all cores.
    let on_cores =
        cpu_stages.host("all cores (par), color", || par::clahe_color(&img.view(), p, EqualizeMode::Luma))?;
    assert_eq!(on_cores, want_color, "cuimg::par and the reference disagree");
    let color = match common::gpu()? {
        Some(gpu) => {
            let s = gpu.stream()?;
            let src = gpu_stages.device("upload", &s, || s.upload(&img.view()))?;
            let gray_src = s.upload(&gray_in.view())?;
            let mut gray = s.alloc::<Gray8>(img.width(), img.height())?;
            let mut color = s.alloc::<Rgb8>(img.width(), img.height())?;
            gpu_stages.device("kernels, gray CLAHE", &s, || s.clahe(&gray_src, &mut gray, p))?;
            gpu_stages
                .device("kernels, color CLAHE (luma)", &s, || s.clahe_color(&src, &mut color, p, EqualizeMode::Luma))?;
            let color = gpu_stages.device("download", &s, || s.download(&color))?;
            assert_eq!(s.download(&gray)?, want_gray, "GPU and CPU disagree (gray)");
            assert_eq!(color, want_color, "GPU and CPU disagree (color)");
            println!("GPU results equal the CPU reference (gray: bit-exact with OpenCV's CLAHE)");
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
