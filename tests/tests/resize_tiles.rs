//! `resize`'s tiled launches against the CPU reference on the GPU: tiles of every height,
//! plans too tall for one tile, the tables kept on streams (as their arenas grow, queued
//! back to back, and failing to upload), and Pillow's kernels by dot products and by the
//! tensor cores, each forced on and off. Split from `resize.rs` (the goldens, bad requests,
//! letterboxes, planar images and batches).

use cuimg::{Filter, Gray8, Image, Rgb8, Rgba8, cpu};
use cuimg_tests::{Poisoned, splitmix_bytes};

/// The tiled launches' choices, each against the CPU reference on the GPU, alone and in a
/// batch: OpenCV's separable filters at factors whose tiles take 16, fewer and one row
/// (Lanczos-4 on RGBA at /4 needs 68 source rows for 16 output rows, more than shared
/// memory holds), and Pillow's two passes where they fit one tiled launch and where a
/// plan's taps do not (hundreds of rows for one output row: the two-pass launches).
#[test]
fn assorted_tiles_and_pillow_plans_too_tall_for_one_match_the_reference() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let img = Image::<Rgba8>::from_bytes(901, 677, &splitmix_bytes(77, 901 * 677 * 4)).unwrap();
    let gray = Image::<Gray8>::from_bytes(901, 677, &splitmix_bytes(78, 901 * 677)).unwrap();
    let cases = [
        ("cv-lanczos4", (225, 169)),
        ("cv-lanczos4", (56, 42)),
        ("cv-cubic", (56, 42)),
        ("cv-linear", (1802, 1354)),
        ("cv-cubic", (17, 1300)),
        ("pil-bilinear", (450, 338)),
        ("pil-lanczos", (3, 2)),
        ("pil-bicubic", (2, 400)),
        // The area in tiles of 4 taps (about 2 across), of 8 (about 4: lists of up to
        // 5 sources), and a pixel a thread (16: lists of 18).
        ("cv-area", (450, 338)),
        ("cv-area", (225, 169)),
        ("cv-area", (56, 42)),
    ];
    for (name, (w, h)) in cases {
        let f: Filter = name.parse().unwrap();
        let want = cpu::resize(&img.view(), w, h, f).unwrap();
        assert_eq!(p.resize(&img.view(), w, h, f), want, "{name} RGBA to {w}x{h}");
        let want_gray = cpu::resize(&gray.view(), w, h, f).unwrap();
        assert_eq!(p.resize(&gray.view(), w, h, f), want_gray, "{name} gray to {w}x{h}");
        let views = [img.view(), img.view()];
        let got = p.batch(&views, w, h, f);
        assert_eq!(got, vec![want.clone(), want], "{name} RGBA to {w}x{h} in a batch");
    }
}

/// Tiles of every height from 1 to 32 output rows, forced (the model picks a few of them
/// for any one size): the separable kernels and Pillow's tiled passes, single and batched,
/// against the reference, on sizes whose last tile is short; Pillow's `_mma` kernels to 64
/// rows (theirs go that tall).
#[test]
fn tiles_of_any_height_match_the_reference() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let img = Image::<Rgb8>::from_bytes(301, 233, &splitmix_bytes(80, 301 * 233 * 3)).unwrap();
    let gray = Image::<Gray8>::from_bytes(301, 233, &splitmix_bytes(81, 301 * 233)).unwrap();
    let cases = [
        ("cv-cubic", (150, 116)),
        ("cv-linear", (603, 467)),
        ("cv-lanczos4", (97, 301)),
        ("pil-bicubic", (149, 117)),
        // Pillow's kernels by the tensor cores (`_mma`): RGB8 above, Gray8 here (21 taps).
        ("pil-lanczos", (97, 71)),
        // The area's tiled kernels: 4 taps each way (301/137, 233/101), 5 across and 4
        // down (301/87), 8 across and 4 down (301/71, 233/101), 8 each way (301/71,
        // 233/57).
        ("cv-area", (137, 101)),
        ("cv-area", (87, 101)),
        ("cv-area", (71, 101)),
        ("cv-area", (71, 57)),
    ];
    let wants: Vec<_> = cases
        .iter()
        .map(|&(name, (w, h))| {
            let f: Filter = name.parse().unwrap();
            let pillow = name.starts_with("pil-");
            (f, w, h, cpu::resize(&img.view(), w, h, f).unwrap(), cpu::resize(&gray.view(), w, h, f).unwrap(), pillow)
        })
        .collect();
    for rows in 1..=64 {
        cuimg::ops::resize::force_tile_rows(rows);
        for (f, w, h, want, want_gray, pillow) in &wants {
            if rows > 32 && !pillow {
                continue;
            }
            let (f, w, h) = (*f, *w, *h);
            assert_eq!(&p.resize(&img.view(), w, h, f), want, "{f} RGB to {w}x{h} in tiles of {rows} rows");
            assert_eq!(&p.resize(&gray.view(), w, h, f), want_gray, "{f} gray to {w}x{h} in tiles of {rows}");
            let got = p.batch(&[img.view(), img.view()], w, h, f);
            assert!(got.iter().all(|g| g == want), "{f} RGB to {w}x{h} in a batch, tiles of {rows} rows");
        }
    }
    cuimg::ops::resize::force_tile_rows(0);
}

/// Tables kept on a stream between calls: many sizes on two streams, interleaved, so each
/// stream's arena fills and is replaced several times (Pillow's Lanczos tables of a few
/// hundred sizes: several MB, the first arena 1 MB), sizes repeated after their tables
/// moved, and a batch holding one size many times; every output against the CPU reference.
#[test]
fn tables_kept_on_streams_stay_right_as_their_arenas_grow() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let img = Image::<Rgb8>::from_bytes(640, 480, &splitmix_bytes(79, 640 * 480 * 3)).unwrap();
    let streams = [gpu.stream().unwrap(), gpu.stream().unwrap()];
    let src: Vec<_> = streams.iter().map(|s| s.upload(&img.view()).unwrap()).collect();
    for name in ["pil-lanczos", "cv-cubic", "cv-nearest", "cv-area"] {
        let f: Filter = name.parse().unwrap();
        let sizes: Vec<(u32, u32)> =
            (0..120).map(|i| (200 + 3 * i, 150 + 2 * i)).chain((0..40).map(|i| (200 + 9 * i, 150 + 6 * i))).collect();
        for (i, &(w, h)) in sizes.iter().enumerate() {
            let k = i % 2;
            let mut out = cuimg_tests::poisoned::<Rgb8>(&streams[k], w, h);
            streams[k].resize(&src[k], &mut out, f).unwrap();
            if i % 7 == 0 || i >= 120 {
                let want = cpu::resize(&img.view(), w, h, f).unwrap();
                assert_eq!(streams[k].download(&out).unwrap(), want, "{name} to {w}x{h} on stream {k}");
            }
        }
    }
    let f: Filter = "cv-linear".parse().unwrap();
    let views = vec![img.view(); 9];
    let batch = streams[0].upload_batch(&views).unwrap();
    let mut out = streams[0].alloc_batch::<Rgb8>(&[(224, 224); 9]).unwrap();
    streams[0].resize_batch(&batch, &mut out, f).unwrap();
    let want = cpu::resize(&img.view(), 224, 224, f).unwrap();
    assert_eq!(streams[0].download_batch(&out).unwrap(), vec![want; 9], "one size nine times in a batch");
}

/// Launch tables (each launch's job list) share one buffer a stream (`Stream::with_table`):
/// batches of 2 to 300 ragged jobs queued back to back on one stream behind slow work,
/// nothing waited for between them, so each table is copied while the launches before it
/// are still queued, and the buffer grows twice (at 70 jobs and at 300); every output
/// poisoned first and against the reference. Were a table copied before the launches
/// queued ahead of it had run, those launches would read the later jobs and write the
/// wrong images (or none).
#[test]
fn launch_tables_queued_back_to_back_are_each_launchs_own() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let s = &p.0;
    let big = s.upload(&cuimg_tests::random::<Rgb8>(3000, 2000, 500).view()).unwrap();
    let slow: Filter = "pil-lanczos".parse().unwrap();
    for _ in 0..3 {
        let mut out = s.alloc::<Rgb8>(2999, 1999).unwrap();
        s.resize(&big, &mut out, slow).unwrap();
    }
    let mut queued = Vec::new();
    for (b, (n, name)) in
        [(2, "cv-linear"), (3, "cv-cubic"), (70, "cv-linear"), (5, "pil-bicubic"), (300, "cv-area"), (40, "cv-linear")]
            .into_iter()
            .enumerate()
    {
        let f: Filter = name.parse().unwrap();
        let imgs: Vec<Image<Rgb8>> = (0..n)
            .map(|i| {
                cuimg_tests::random(20 + (7 * i + b) as u32 % 53, 15 + (5 * i) as u32 % 41, 600 + (b * 1000 + i) as u64)
            })
            .collect();
        let sizes: Vec<(u32, u32)> = (0..n).map(|i| (3 + (i as u32 * 11) % 29, 2 + (i as u32 * 13) % 23)).collect();
        let views: Vec<_> = imgs.iter().map(|i| i.view()).collect();
        let src = s.upload_batch(&views).unwrap();
        let poison: Vec<Image<Rgb8>> = sizes.iter().map(|&(w, h)| p.poison(w, h)).collect();
        let mut dst = s.upload_batch(&poison.iter().map(|i| i.view()).collect::<Vec<_>>()).unwrap();
        s.resize_batch(&src, &mut dst, f).unwrap();
        queued.push((name, f, imgs, sizes, src, dst));
    }
    for (b, (name, f, imgs, sizes, _, dst)) in queued.iter().enumerate() {
        let got = s.download_batch(dst).unwrap();
        for (i, (img, &(w, h))) in imgs.iter().zip(sizes).enumerate() {
            assert_eq!(got[i], cpu::resize(&img.view(), w, h, *f).unwrap(), "batch {b} ({name}), image {i} to {w}x{h}");
        }
    }
}

/// A launch whose tables fail to upload leaves none of them recorded as on the device: the
/// next call with the same plan uploads them again. Before, the failed plan stayed recorded
/// over bytes that never arrived, and the next new plan's tables went to the same place, so
/// the first plan's next call read the second's tables.
#[cfg(feature = "hooks")]
#[test]
fn tables_that_fail_to_upload_are_not_kept() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let img = Image::<Rgb8>::from_bytes(301, 233, &splitmix_bytes(82, 301 * 233 * 3)).unwrap();
    let f: Filter = "cv-cubic".parse().unwrap();
    let src = p.0.upload(&img.view()).unwrap();
    let mut out = cuimg_tests::poisoned::<Rgb8>(&p.0, 150, 116);
    p.0.fail_next_resize_tables_for_tests();
    let err = p.0.resize(&src, &mut out, f).unwrap_err();
    assert!(err.to_string().contains("made to fail"), "{err}");
    // Another plan of the same kind (its tables as long), placed next; then the first again.
    for (w, h) in [(151, 116), (150, 116)] {
        assert_eq!(p.resize(&img.view(), w, h, f), cpu::resize(&img.view(), w, h, f).unwrap(), "cv-cubic to {w}x{h}");
    }
}

/// Pillow's two passes by the tensor cores' integer products (the `_mma` kernels, Gray8 and
/// RGB8), its horizontal pass four taps at a time by dot products (the `_planes` kernels),
/// and neither, against the reference: rows whose bytes end at each
/// alignment (widths 4k to 4k + 3, so the last group's words may or may not run past the
/// row), inputs barely as wide as a column's groups, crops (views, read a byte a load),
/// single and in ragged batches, every resampling filter down and up.
#[test]
fn pillow_by_dot_products_matches_the_reference_on_and_off() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let s = gpu.stream().unwrap();
    let sizes = [(100, 37), (101, 40), (102, 41), (103, 9), (8, 8), (9, 5), (20, 11), (641, 479)];
    let outs = [(33, 13), (50, 20), (3, 2), (7, 30), (224, 224), (2, 1)];
    let filters = ["pil-box", "pil-bilinear", "pil-hamming", "pil-bicubic", "pil-lanczos"];
    // Under the sanitizers, two filters (the fewest and the most taps) and three sizes.
    let (outs, filters) =
        if cuimg_tests::sanitizing() { (&outs[..3], &filters[3..]) } else { (&outs[..], &filters[..]) };
    let rgb: Vec<Image<Rgb8>> =
        sizes.iter().enumerate().map(|(i, &(w, h))| cuimg_tests::random(w, h, 300 + i as u64)).collect();
    let gray: Vec<Image<Gray8>> =
        sizes.iter().enumerate().map(|(i, &(w, h))| cuimg_tests::random(w, h, 400 + i as u64)).collect();
    let crop = cuimg::Rect::new(3, 2, 90, 30);
    let dev_rgb = s.upload(&rgb[1].view()).unwrap();
    let dev_gray = s.upload(&gray[1].view()).unwrap();
    // The tensor cores' kernels (`_mma`), then the dot products' (`_planes`), then neither.
    for (mma, on) in [(true, true), (false, true), (false, false)] {
        cuimg::ops::resize::pillow_mma(Some(mma));
        cuimg::ops::resize::pillow_planes(on);
        let before = (cuimg::ops::resize::pillow_mma_launches(), cuimg::ops::resize::pillow_planes_launches());
        for &name in filters {
            let f: Filter = name.parse().unwrap();
            for &(w, h) in outs {
                let want: Vec<_> = rgb.iter().map(|i| cpu::resize(&i.view(), w, h, f).unwrap()).collect();
                let want_gray: Vec<_> = gray.iter().map(|i| cpu::resize(&i.view(), w, h, f).unwrap()).collect();
                for (i, img) in rgb.iter().enumerate() {
                    assert_eq!(
                        p.resize(&img.view(), w, h, f),
                        want[i],
                        "{name} RGB {i} to {w}x{h}, mma {mma}, planes {on}"
                    );
                    let g = p.resize(&gray[i].view(), w, h, f);
                    assert_eq!(g, want_gray[i], "{name} gray {i} to {w}x{h}, mma {mma}, planes {on}");
                }
                let views: Vec<_> = rgb.iter().map(|i| i.view()).collect();
                assert_eq!(p.batch(&views, w, h, f), want, "{name} RGB batch to {w}x{h}, mma {mma}, planes {on}");
                let views: Vec<_> = gray.iter().map(|i| i.view()).collect();
                assert_eq!(p.batch(&views, w, h, f), want_gray, "{name} gray batch to {w}x{h}, mma {mma}, planes {on}");
                // Crops of a device image: rows apart by more than their pixels.
                let mut out = s.upload(&p.poison::<Rgb8>(w, h).view()).unwrap();
                s.resize(&dev_rgb.roi(crop).unwrap(), &mut out, f).unwrap();
                let want_crop = cpu::resize(&rgb[1].view().roi(crop).unwrap(), w, h, f).unwrap();
                assert_eq!(s.download(&out).unwrap(), want_crop, "{name} RGB crop to {w}x{h}, mma {mma}, planes {on}");
                let mut out = s.upload(&p.poison::<Gray8>(w, h).view()).unwrap();
                s.resize(&dev_gray.roi(crop).unwrap(), &mut out, f).unwrap();
                let want_crop = cpu::resize(&gray[1].view().roi(crop).unwrap(), w, h, f).unwrap();
                assert_eq!(s.download(&out).unwrap(), want_crop, "{name} gray crop to {w}x{h}, mma {mma}, planes {on}");
            }
        }
        let ran = cuimg::ops::resize::pillow_mma_launches() - before.0;
        let planes = cuimg::ops::resize::pillow_planes_launches() - before.1;
        // (Only that the kernels asked for ran: the knobs are the process's, and the tests
        // beside this one launch too.)
        match (mma, on) {
            (true, _) => assert!(ran > 20, "the mma kernels ran {ran} times"),
            (false, true) => assert!(planes > 20, "the planes kernels ran {planes} times"),
            (false, false) => {}
        }
    }
    cuimg::ops::resize::pillow_mma(None);
    cuimg::ops::resize::pillow_planes(true);
}

/// Plans' axes, kept for the process and placed once a stream as blocks shared by every
/// size that has them (`axis.rs`, `cv.rs`, `Stream::with_blocks`): an axis that is one
/// image's width and its own height (a square to a square), one image's width and another's
/// height, widths shared by images of other heights; Pillow's in the tensor cores' kernels,
/// the dot products' and neither, OpenCV's in each of its kinds (the area's lists padded in
/// the tiled kernels and whole in the kernel of a pixel a thread); then batches of sizes
/// never seen together, more of them than the process keeps plans of (512), from few widths
/// and heights. Every output poisoned first and against the reference.
#[test]
fn axes_shared_by_sizes_and_roles_match_the_reference() {
    let Some(gpu) = cuimg_tests::gpu() else { return };
    let p = Poisoned::new(&gpu);
    let sizes = [(300, 300), (300, 200), (200, 300), (300, 211), (300, 250), (211, 300)];
    let rgb: Vec<Image<Rgb8>> =
        sizes.iter().enumerate().map(|(i, &(w, h))| cuimg_tests::random(w, h, 500 + i as u64)).collect();
    let gray: Vec<Image<Gray8>> =
        sizes.iter().enumerate().map(|(i, &(w, h))| cuimg_tests::random(w, h, 600 + i as u64)).collect();
    let sanitizing = cuimg_tests::sanitizing();
    let pillow = if sanitizing { &["pil-lanczos"][..] } else { &["pil-bilinear", "pil-bicubic", "pil-lanczos"][..] };
    let opencv =
        ["cv-linear", "cv-cubic", "cv-lanczos4", "cv-area", "cv-nearest", "cv-nearest-exact", "cv-linear-exact"];
    let opencv = if sanitizing { &opencv[3..5] } else { &opencv[..] };
    // Each filter to each size, alone, then together, then in the other order.
    let check = |name: &str, knobs: &str| {
        let f: Filter = name.parse().unwrap();
        for (w, h) in [(120, 120), (97, 120), (40, 40)] {
            let want: Vec<_> = rgb.iter().map(|i| cpu::resize(&i.view(), w, h, f).unwrap()).collect();
            let want_gray: Vec<_> = gray.iter().map(|i| cpu::resize(&i.view(), w, h, f).unwrap()).collect();
            for (i, img) in rgb.iter().enumerate() {
                assert_eq!(p.batch(&[img.view()], w, h, f), vec![want[i].clone()], "{name} RGB {i} to {w}x{h}{knobs}");
            }
            let views: Vec<_> = rgb.iter().map(|i| i.view()).collect();
            assert_eq!(p.batch(&views, w, h, f), want, "{name} RGB batch to {w}x{h}{knobs}");
            let back: Vec<_> = views.iter().rev().cloned().collect();
            let want_back: Vec<_> = want.iter().rev().cloned().collect();
            assert_eq!(p.batch(&back, w, h, f), want_back, "{name} RGB batch reversed to {w}x{h}{knobs}");
            let views: Vec<_> = gray.iter().map(|i| i.view()).collect();
            assert_eq!(p.batch(&views, w, h, f), want_gray, "{name} gray batch to {w}x{h}{knobs}");
        }
    };
    for (mma, on) in [(true, true), (false, true), (false, false)] {
        cuimg::ops::resize::pillow_mma(Some(mma));
        cuimg::ops::resize::pillow_planes(on);
        for &name in pillow {
            check(name, &format!(", mma {mma}, planes {on}"));
        }
    }
    cuimg::ops::resize::pillow_mma(None);
    cuimg::ops::resize::pillow_planes(true);
    for &name in opencv {
        check(name, "");
    }
    // Batches of sizes never seen together: 24 widths and 24 heights (576 sizes), 64 a
    // batch drawn from them (12 batches: 768 plans asked, past the 512 kept, so that later
    // batches plan sizes again from the kept axes).
    let big: Image<Rgb8> = cuimg_tests::random(160, 130, 700);
    let batches = if sanitizing { 2 } else { 12 };
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as u32
    };
    for name in ["pil-bicubic", "cv-linear", "cv-area"] {
        let f: Filter = name.parse().unwrap();
        for b in 0..batches {
            let sizes: Vec<(u32, u32)> = (0..64).map(|_| (136 + next(24), 106 + next(24))).collect();
            let views: Vec<_> =
                sizes.iter().map(|&(w, h)| big.view().roi(cuimg::Rect::new(0, 0, w, h)).unwrap()).collect();
            let want: Vec<_> = views.iter().map(|v| cpu::resize(v, 48, 40, f).unwrap()).collect();
            assert_eq!(p.batch(&views, 48, 40, f), want, "{name} fresh batch {b}");
        }
    }
}
