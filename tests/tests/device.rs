//! One API whatever the hardware: `Device` on the CPU (always) and on the GPU (where there
//! is one) gives the CPU reference's bytes for every call, single and batch, the same
//! errors, results in input order from `Device::run`; `?` takes `std::io::Error`; files save
//! with a JPEG quality.

use cuimg::{Clahe, Device, EqualizeMode, Error, Gray8, GrayWeights, Image, La8, Lut, Rgb8, Rgba8, cpu};
use cuimg_tests::{gpu, random, skewed};

/// The CPU device, and the GPU one where there is a GPU.
fn devices() -> Vec<Device> {
    let mut d = vec![Device::cpu()];
    d.extend(gpu().map(Device::Gpu));
    d
}

#[test]
fn every_call_gives_the_reference_bytes_on_every_device() {
    let w = GrayWeights::Bt601;
    let rgb = random::<Rgb8>(333, 257, 1);
    let rgba = skewed::<Rgba8>(64, 48, 2);
    let gray = skewed::<Gray8>(127, 131, 3);
    let la = random::<La8>(31, 29, 4);
    let p = Clahe::new(3.0, (4, 3)).unwrap();
    for d in devices() {
        let on = d.to_string();
        assert_eq!(d.grayscale(&rgb.view(), w).unwrap(), cpu::grayscale(&rgb.view(), w).unwrap(), "{on}");
        assert_eq!(d.black_and_white(&rgba.view(), w).unwrap(), cpu::black_and_white(&rgba.view(), w).unwrap());
        assert_eq!(d.histogram(&rgba.view()).unwrap(), cpu::histogram(&rgba.view()).unwrap(), "{on}");
        assert_eq!(d.equalize(&gray.view()).unwrap(), cpu::equalize(&gray.view()).unwrap(), "{on}");
        assert_eq!(d.equalize(&la.view()).unwrap(), cpu::equalize(&la.view()).unwrap(), "{on}");
        let m = EqualizeMode::Luma;
        assert_eq!(d.equalize_color(&rgb.view(), m).unwrap(), cpu::equalize_color(&rgb.view(), m).unwrap());
        let lut = Lut::gamma(2.2);
        assert_eq!(d.apply_lut(&rgb.view(), &lut).unwrap(), cpu::apply_lut(&rgb.view(), &lut).unwrap(), "{on}");
        let luts = [Lut::invert(), Lut::identity()];
        assert_eq!(d.apply_luts(&la.view(), &luts).unwrap(), cpu::apply_luts(&la.view(), &luts).unwrap());
        assert_eq!(d.clahe(&gray.view(), p).unwrap(), cpu::clahe(&gray.view(), p).unwrap(), "{on}");
        let pc = EqualizeMode::PerChannel;
        assert_eq!(d.clahe_color(&rgb.view(), p, pc).unwrap(), cpu::clahe_color(&rgb.view(), p, pc).unwrap());
        assert_eq!(d.grayscale_histogram(&rgb.view(), w).unwrap(), cpu::grayscale_histogram(&rgb.view(), w).unwrap());
        let src: Vec<u16> = (0..1000).collect();
        let idx: Vec<u32> = (0..500).map(|i| (i * 7) % 1000).collect();
        assert_eq!(d.gather(&src, &idx).unwrap(), cpu::gather(&src, &idx).unwrap(), "{on}");
        // Batches: each image as alone.
        let (a, b) = (random::<Rgb8>(40, 30, 5), random::<Rgb8>(17, 9, 6));
        let views = [a.view(), b.view()];
        let g = d.grayscale_batch(&views, w).unwrap();
        assert_eq!(g, vec![cpu::grayscale(&views[0], w).unwrap(), cpu::grayscale(&views[1], w).unwrap()]);
        let h = d.histogram_batch(&views).unwrap();
        assert_eq!(h[1], cpu::histogram(&views[1]).unwrap(), "{on}");
        assert_eq!(d.equalize_color_batch(&views, m).unwrap()[0], cpu::equalize_color(&views[0], m).unwrap());
        assert_eq!(d.apply_lut_batch(&views, &lut).unwrap()[1], cpu::apply_lut(&views[1], &lut).unwrap());
        assert_eq!(d.black_and_white_batch(&views, w).unwrap()[1], cpu::black_and_white(&views[1], w).unwrap());
        assert_eq!(d.clahe_color_batch(&views, p, m).unwrap()[0], cpu::clahe_color(&views[0], p, m).unwrap());
        let grays = [gray.view(), skewed::<Gray8>(20, 20, 7).view().to_image().view()].map(|v| v.to_image());
        let gv: Vec<_> = grays.iter().map(|g| g.view()).collect();
        assert_eq!(d.equalize_batch(&gv).unwrap()[0], cpu::equalize(&gv[0]).unwrap(), "{on}");
        assert_eq!(d.clahe_batch(&gv, p).unwrap()[1], cpu::clahe(&gv[1], p).unwrap(), "{on}");
        // The same errors.
        assert!(matches!(d.grayscale_batch::<Rgb8>(&[], w), Err(Error::EmptyBatch)), "{on}");
        let empty = Image::<Rgb8>::new(0, 3);
        assert!(matches!(d.grayscale(&empty.view(), w), Err(Error::EmptyImage { .. })), "{on}");
    }
}

#[test]
fn best_is_a_gpu_where_there_is_one_and_says_why_not() {
    let best = Device::best();
    match gpu() {
        Some(_) => assert!(best.is_gpu() && best.why_cpu().is_none()),
        None => {
            assert!(!best.is_gpu());
            let why = best.why_cpu().expect("why the CPU");
            assert!(why.contains("no CUDA"), "{why}");
            assert!(why.contains("cuimg::par") && why.contains("Device::best"), "the CPU path named: {why}");
        }
    }
    assert!(best.to_string().starts_with(if best.is_gpu() { "GPU" } else { "CPU" }));
}

#[test]
fn run_streams_images_in_input_order_on_every_device() {
    for d in devices() {
        let inputs: Vec<Image<Rgb8>> = (0..37).map(|i| random::<Rgb8>(10 + i % 7, 9, i as u64)).collect();
        let mut got = Vec::new();
        let n = d
            .run(
                &inputs,
                |d, img| if img.width() == 13 { Err(Error::EmptyBatch) } else { d.grayscale(img, GrayWeights::Bt709) },
                |i, r| got.push((i, r)),
            )
            .unwrap();
        assert_eq!(n, 37);
        for (k, (i, r)) in got.into_iter().enumerate() {
            assert_eq!(k, i, "input order");
            match r {
                Ok(g) => assert_eq!(g, cpu::grayscale(&inputs[i].view(), GrayWeights::Bt709).unwrap()),
                Err(e) => assert!(inputs[i].width() == 13 && matches!(e, Error::EmptyBatch), "{e}"),
            }
        }
    }
}

#[test]
fn io_errors_convert_and_files_save_with_a_jpeg_quality() {
    fn read_missing() -> cuimg::Result<Vec<u8>> {
        Ok(std::fs::read("/no/such/file")?)
    }
    let err = read_missing().unwrap_err();
    assert!(matches!(err, Error::IoError(_)) && err.to_string().starts_with("I/O error"), "{err}");
    let img = random::<Rgb8>(64, 48, 9);
    let dir = std::env::temp_dir().join(format!("cuimg-save-with-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (low, high) = (dir.join("low.jpg"), dir.join("high.jpg"));
    cuimg::io::save_with(&img, &low, cuimg::io::Format::Jpeg { quality: 20 }).unwrap();
    cuimg::io::save_with(&img, &high, cuimg::io::Format::Jpeg { quality: 95 }).unwrap();
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&low) < size(&high), "the quality is used");
    assert_eq!(cuimg::io::load_rgb(&low).unwrap().dimensions(), (64, 48));
    let err = cuimg::io::save_with(&img, dir.join("no/such/dir/x.png"), cuimg::io::Format::Png).unwrap_err();
    assert!(matches!(err, Error::Io { .. }) && err.to_string().contains("no/such/dir"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
