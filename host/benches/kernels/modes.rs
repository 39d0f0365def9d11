//! The benchmark's other modes: `--profile` (one run of each kernel for ncu), `--sweep` (the
//! grid shapes) and `--knobs` (the tuning knobs), on fixed 8K inputs.

use super::*;

/// The fixed 8K inputs of `--profile` and `--knobs`: random RGB and gray images, a constant
/// gray one, an output, bins, a gamma table, a gather's identity indices over 1.5s, and two
/// 1 GiB buffers for the copies.
struct Fixed8k {
    n: u64,
    rgb: DeviceImage<Rgb8>,
    gray: DeviceImage<Gray8>,
    constant: DeviceImage<Gray8>,
    out: DeviceImage<Gray8>,
    bins: cuimg::DeviceHistogram,
    lut: cuimg::DeviceLuts,
    src: cuimg::DeviceBuffer<f32>,
    idx: cuimg::DeviceBuffer<u32>,
    gathered: cuimg::DeviceBuffer<f32>,
    a: cuimg::DeviceBuffer<u8>,
    b: cuimg::DeviceBuffer<u8>,
}

fn fixed_8k(s: &Stream) -> Fixed8k {
    let (w, h) = (7680, 4320);
    let n = w as u64 * h as u64;
    let idx: Vec<u32> = (0..n as u32).collect();
    Fixed8k {
        n,
        rgb: s.upload(&make::<Rgb8>(Data::Random, w, h, &Image::new(1, 1), 1).view()).unwrap(),
        gray: s.upload(&make::<Gray8>(Data::Random, w, h, &Image::new(1, 1), 3).view()).unwrap(),
        constant: s.upload(&Image::<Gray8>::filled(w, h, 77).view()).unwrap(),
        out: s.alloc::<Gray8>(w, h).unwrap(),
        bins: s.alloc_histogram(1).unwrap(),
        lut: s.upload_lut::<Gray8>(&Lut::gamma(2.2)).unwrap(),
        src: s.upload_slice(&vec![1.5f32; n as usize]).unwrap(),
        idx: s.upload_slice(&idx).unwrap(),
        gathered: s.alloc_slice::<f32>(n as usize).unwrap(),
        a: s.alloc_slice::<u8>(1 << 30).unwrap(),
        b: s.alloc_slice::<u8>(1 << 30).unwrap(),
    }
}

/// `--profile`: one launch of each 8K kernel, for `ncu`.
pub(super) fn profile(s: &Stream) {
    use cuimg::bench::GRAY_HISTOGRAM;
    use std::sync::atomic::Ordering::Relaxed;
    let Fixed8k { n, rgb, gray, mut out, mut bins, lut, src, idx, mut gathered, a, mut b, .. } = fixed_8k(s);
    s.grayscale(&rgb, &mut out, GrayWeights::Bt601).unwrap();
    s.apply_lut(&gray, &mut out, &lut).unwrap();
    s.histogram(&gray, &mut bins).unwrap();
    GRAY_HISTOGRAM.store(1, Relaxed);
    s.histogram(&gray, &mut bins).unwrap();
    GRAY_HISTOGRAM.store(0, Relaxed);
    s.gather(&src, &idx, &mut gathered).unwrap().check().unwrap();
    let random = s.upload_slice(&gather_indices(n, true)).unwrap();
    s.gather(&src, &random, &mut gathered).unwrap().check().unwrap();
    cuimg::bench::copy_kernel(s, &a, &mut b).unwrap();
    s.synchronize().unwrap();
    println!(
        "profile: one launch each of gray_c3_flat, lut_c1_flat, histogram_c1_flat, histogram_c1_runs, gather_b4 (identity, then random) at 8K, copy_flat on 1 GiB"
    );
}

/// `--sweep`: every 8K case isolated and back to back, with the host's time per call, beside
/// plain copies of the same bytes (`common::time_modes`); with `CUIMG_MODULE`, for a kernel
/// variant.
pub(super) fn sweep(s: &Stream, photo: &Image<Rgb8>, out: &std::path::Path) {
    let (w, h) = (7680, 4320);
    let n = w as u64 * h as u64;
    let mut bins = s.alloc_histogram(1).unwrap();
    let lut = s.upload_lut::<Gray8>(&Lut::gamma(2.2)).unwrap();
    let mut d_out = s.alloc_slice::<f32>(n as usize).unwrap();
    let a = s.alloc_slice::<u8>(1 << 30).unwrap();
    let mut b = s.alloc_slice::<u8>(1 << 30).unwrap();
    let copy = copy_ceiling(s);
    println!(
        "sweep at 8K ({}): each case as isolated calls (the GPU idle before each, the host's\n\
         submission inside the event window), the host's time per call, and back-to-back calls\n\
         (the GPU's own time once the host is ahead); us",
        s.gpu().startup().code
    );
    println!("{:<22} {:>9} {:>10} {:>8} {:>12} {:>9}", "op", "data", "isolated", "host", "back-to-back", "of copy");
    let mut rows = Vec::new();
    let mut row = |op: &str, data: &str, bytes: u64, m: common::Modes| {
        let frac = bytes as f64 / (m.queued_ms * 1e-3) / 1e9 / copy;
        println!(
            "{op:<22} {data:>9} {:>10.1} {:>8.1} {:>12.1} {:>9.2}",
            m.isolated_ms * 1e3,
            m.host_us,
            m.queued_ms * 1e3,
            frac
        );
        rows.push(json!({"op": op, "data": data, "bytes": bytes, "isolated_us": m.isolated_ms * 1e3,
            "host_us": m.host_us, "back_to_back_us": m.queued_ms * 1e3}));
    };
    let (runs, per_round) = (30, 20);
    for data in [Data::Random, Data::Photo, Data::Constant] {
        let dn = data.name();
        let rgb = make::<Rgb8>(data, w, h, photo, 1);
        let gray = make::<Gray8>(data, w, h, photo, 3);
        {
            let sets = sets_for(4 * n);
            let ins = rotation(s, &rgb, sets);
            let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
            let m = common::time_modes(s, runs, per_round, |i| {
                s.grayscale(&ins[i % sets], &mut outs[i % sets], GrayWeights::Bt601)
            });
            row("grayscale RGB8", dn, 4 * n, m);
            let m = common::time_modes(s, runs, per_round, |i| {
                s.grayscale_histogram(&ins[i % sets], &mut outs[i % sets], &mut bins, GrayWeights::Bt601)
            });
            row("grayscale+histogram", dn, 4 * n, m);
            let want = cpu::grayscale_histogram(&rgb.view(), GrayWeights::Bt601).unwrap();
            assert_eq!(s.download_histogram(&bins).unwrap(), want.1, "fused histogram {dn}");
        }
        let sets = sets_for(2 * n);
        let ins = rotation(s, &gray, sets);
        let mut outs: Vec<DeviceImage<Gray8>> = (0..sets).map(|_| s.alloc::<Gray8>(w, h).unwrap()).collect();
        let m = common::time_modes(s, runs, per_round, |i| s.histogram(&ins[i % sets], &mut bins));
        row("histogram", dn, n, m);
        assert_eq!(s.download_histogram(&bins).unwrap(), cpu::histogram(&gray.view()).unwrap(), "histogram {dn}");
        let m = common::time_modes(s, runs, per_round, |i| s.apply_lut(&ins[i % sets], &mut outs[i % sets], &lut));
        row("LUT", dn, 2 * n, m);
        let m = common::time_modes(s, runs, per_round, |i| s.equalize(&ins[i % sets], &mut outs[i % sets]));
        row("equalize", dn, 3 * n, m);
        assert_eq!(s.download(&outs[0]).unwrap(), cpu::equalize(&gray.view()).unwrap(), "equalize {dn}");
    }
    // Gather f32 (data-independent): the call as the full bench times it (its index check, a
    // copy back and a wait, inside the window), and the gather alone, checked after the window.
    let src: Vec<f32> = (0..n).map(|i| (i % 251) as f32).collect();
    let d_src = s.upload_slice(&src).unwrap();
    for (op, random) in [("gather f32 identity", false), ("gather f32 random", true)] {
        let idx = gather_indices(n, random);
        let d_idx = s.upload_slice(&idx).unwrap();
        let m = common::time_modes(s, 10, 5, |_| s.gather(&d_src, &d_idx, &mut d_out)?.check());
        row(op, "checked", 12 * n, m);
        let mut checks = Vec::new();
        let m = common::time_modes(s, 10, 5, |_| {
            // A pending check borrows the stream and the indices, not the output, so the next
            // gather can be queued; the checks run after the window.
            checks.push(s.gather(&d_src, &d_idx, &mut d_out)?);
            Ok(())
        });
        for c in checks {
            c.check().expect("every index in range");
        }
        row(op, "alone", 12 * n, m);
        let got = s.download_slice(&d_out).unwrap();
        assert!(got.iter().zip(&idx).all(|(&g, &j)| g == src[j as usize]), "{op}");
    }
    let m = common::time_modes(s, 10, 5, |_| cuimg::bench::copy_kernel(s, &a, &mut b));
    row("SM copy kernel 1 GiB", "-", 2 << 30, m);
    drop((a, b, d_src, d_out));
    // What a plain copy achieves moving each op's bytes (read + written) per call, by the SM
    // copy kernel and by the driver, with the same rotation: the floor a kernel of that size
    // can reach. "launch": 16 bytes each way, the cost of a launch alone.
    for (label, bytes) in [("gray", 4 * n), ("LUT", 2 * n), ("histogram", n), ("launch", 32)] {
        let half = (bytes / 2) as usize;
        let sets = sets_for(bytes);
        let srcs: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
        let mut dsts: Vec<_> = (0..sets).map(|_| s.alloc_slice::<u8>(half).unwrap()).collect();
        let m = common::time_modes(s, runs, per_round, |i| {
            cuimg::bench::copy_kernel(s, &srcs[i % sets], &mut dsts[i % sets])
        });
        row(&format!("SM copy, {label}'s bytes"), "-", bytes, m);
        let m = common::time_modes(s, runs, per_round, |i| s.copy_slice(&srcs[i % sets], &mut dsts[i % sets]));
        row(&format!("driver copy, {label}'s"), "-", bytes, m);
    }
    let out = out.join("sweep.json");
    let code = s.gpu().startup().code.to_string();
    let module = std::env::var("CUIMG_MODULE").unwrap_or_default();
    let json = json!({"device": s.gpu().name(), "code": code, "module": module, "copy_gbps": copy, "rows": rows});
    std::fs::write(&out, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    println!("wrote {}", out.display());
}

/// `--knobs`: the 8K kernels under each tuning knob (grid waves, the gray histogram's two
/// kernels, equalization's forms), for choosing the defaults.
pub(super) fn sweep_knobs(s: &Stream, photo: &Image<Rgb8>) {
    use cuimg::bench::{GRAY_HISTOGRAM, GRID_WAVES};
    use std::sync::atomic::Ordering::Relaxed;
    let (w, h) = (7680, 4320);
    let Fixed8k {
        n,
        rgb: d_rgb,
        gray: d_gray,
        constant: d_const,
        mut out,
        mut bins,
        lut,
        src: d_src,
        idx: d_idx,
        gathered: mut d_out,
        a,
        mut b,
    } = fixed_8k(s);
    let (gray, constant) = (s.download(&d_gray).unwrap(), s.download(&d_const).unwrap());
    let (copy_ms, _) = time_gpu(s, 3, 20, |_| s.copy_slice(&a, &mut b));
    let copy = 2.0 * (1u64 << 30) as f64 / (copy_ms * 1e-3) / 1e9;
    println!("sweep at 8K, random data (constant where said); copy {copy:.0} GB/s; fraction of copy:");
    println!(
        "{:<8} {:>8} {:>8} {:>14} {:>14} {:>14} {:>14} {:>8} {:>8}",
        "waves", "gray", "LUT", "hist", "hist (runs)", "hist const", "runs const", "gather", "SM copy"
    );
    for waves in [1u32, 2, 4, 8] {
        GRID_WAVES.store(waves, Relaxed);
        let frac = |bytes: u64, ms: f64| bytes as f64 / (ms * 1e-3) / 1e9 / copy;
        let g = time_gpu(s, 3, 30, |_| s.grayscale(&d_rgb, &mut out, GrayWeights::Bt601)).0;
        let l = time_gpu(s, 3, 30, |_| s.apply_lut(&d_gray, &mut out, &lut)).0;

        let mut hist = |v: u32, src: &DeviceImage<Gray8>| {
            GRAY_HISTOGRAM.store(v, Relaxed);
            let t = time_gpu(s, 3, 30, |_| s.histogram(src, &mut bins)).0;
            GRAY_HISTOGRAM.store(0, Relaxed);
            t
        };
        let (hl, ha, hlc, hac) = (hist(0, &d_gray), hist(1, &d_gray), hist(0, &d_const), hist(1, &d_const));
        let ga = time_gpu(s, 3, 30, |_| s.gather(&d_src, &d_idx, &mut d_out)?.check()).0;
        let sm_copy = time_gpu(s, 3, 20, |_| cuimg::bench::copy_kernel(s, &a, &mut b)).0;
        println!(
            "{waves:<8} {:>8.3} {:>8.3} {:>14.3} {:>14.3} {:>14.3} {:>14.3} {:>8.3} {:>8.3}",
            frac(4 * n, g),
            frac(2 * n, l),
            frac(n, hl),
            frac(n, ha),
            frac(n, hlc),
            frac(n, hac),
            frac(12 * n, ga),
            frac(2 << 30, sm_copy)
        );
    }
    GRID_WAVES.store(1, Relaxed);

    // Gray equalization's forms, alternated three times on the bench's rotation of inputs
    // (so that L2 does not hold them from one call to the next), in microseconds: the table
    // in the histogram's last block or in a kernel of its own; the apply from the last
    // vector or from the first.
    use cuimg::bench::{EQUALIZE_ONE_LAUNCH, EQUALIZE_REVERSE_APPLY};
    let forms = [(1, 1, "one launch, reversed"), (1, 0, "one launch, forward"), (0, 1, "two launches, reversed")];
    println!("equalize 8K, us, three rounds of: {}", forms.iter().map(|f| f.2).collect::<Vec<_>>().join(" / "));
    let cases = [("random", gray), ("photo", make::<Gray8>(Data::Photo, w, h, photo, 5)), ("constant", constant)];
    for (name, img) in &cases {
        let srcs = rotation(s, img, sets_for(2 * n));
        let mut outs = rotation(s, img, srcs.len());
        let mut line = format!("{name:<10}");
        for round in 0..3 {
            line += if round == 0 { " " } else { " | " };
            for (k, &(one, reverse, _)) in forms.iter().enumerate() {
                EQUALIZE_ONE_LAUNCH.store(one, Relaxed);
                EQUALIZE_REVERSE_APPLY.store(reverse, Relaxed);
                let m = srcs.len();
                let t = time_gpu(s, 3, 30, |i| s.equalize(&srcs[i % m], &mut outs[i % m])).0;
                line += &format!("{}{:.1}", if k == 0 { "" } else { " / " }, t * 1e3);
            }
        }
        println!("{line}");
    }
    EQUALIZE_ONE_LAUNCH.store(1, Relaxed);
    EQUALIZE_REVERSE_APPLY.store(1, Relaxed);
}
