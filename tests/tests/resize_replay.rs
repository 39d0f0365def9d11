//! Batch calls seen before, replayed (`host/src/ops/resize/replay.rs`): the same sizes into
//! the same buffers queue the launches recorded from the call before, without planning
//! again. Each replay must write what the call would (new pixels each call, outputs
//! poisoned before it), only into its own buffers; calls whose launches read memory of
//! their own (Pillow's passes one launch each) must not replay; a change of kernel choice,
//! or of the stream's arena of tables, must not replay the old launches.
//!
//! The tests of this file run one at a time: they count the process's replays.

use std::sync::Mutex;

use cuimg::ops::resize::{pillow_mma, pillow_mma_launches, resize_replays};
use cuimg::{DeviceBatch, Filter, Gray8, Image, Pixel, ResizeLayout, Rgb8, Sizing, Stream, cpu};
use cuimg_tests::splitmix_bytes;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A stream of its own for a test, which runs alone while the guard lives (`None`: no GPU).
fn stream() -> Option<(std::sync::MutexGuard<'static, ()>, Stream)> {
    let gpu = cuimg_tests::gpu()?;
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Some((one, gpu.stream().unwrap()))
}

/// Random images of `sizes`, from `seed`.
fn images<P: Pixel>(sizes: &[(u32, u32)], seed: u64) -> Vec<Image<P>> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &(w, h))| {
            Image::from_bytes(w, h, &splitmix_bytes(seed + i as u64, (w * h) as usize * P::CHANNELS)).unwrap()
        })
        .collect()
}

/// Overwrites `dst` with poison (bytes from `seed`).
fn poison<P: Pixel>(s: &Stream, dst: &mut DeviceBatch<P>, seed: u64) {
    let poison = images::<P>(&dst.sizes(), seed);
    let views: Vec<_> = poison.iter().map(|p| p.view()).collect();
    s.upload_batch_into(&views, dst).unwrap();
}

/// Uploads `imgs` into `src` (the same buffer each round).
fn upload<P: Pixel>(s: &Stream, imgs: &[Image<P>], src: &mut DeviceBatch<P>) {
    let views: Vec<_> = imgs.iter().map(|p| p.view()).collect();
    s.upload_batch_into(&views, src).unwrap();
}

/// The reference's bytes of `imgs` resized by `f` to `outs`, image by image.
fn resized<P: Pixel>(imgs: &[Image<P>], outs: &[(u32, u32)], f: Filter) -> Vec<Image<P>> {
    imgs.iter().zip(outs).map(|(i, &(w, h))| cpu::resize(&i.view(), w, h, f).unwrap()).collect()
}

/// `rounds` calls of `call` on one batch buffer and one output buffer, new pixels and new
/// poison before each, every output against `want` of that round's pixels; the replays the
/// calls made.
fn rounds<P: Pixel>(
    s: &Stream,
    sizes: &[(u32, u32)],
    outs: &[(u32, u32)],
    rounds: u64,
    call: impl Fn(&DeviceBatch<P>, &mut DeviceBatch<P>) -> cuimg::Result<()>,
    want: impl Fn(&[Image<P>]) -> Vec<Image<P>>,
    what: &str,
) -> u64 {
    let mut src = s.alloc_batch::<P>(sizes).unwrap();
    let mut dst = s.alloc_batch::<P>(outs).unwrap();
    let replays = replays_each(s, (&mut src, &mut dst), 0..rounds, call, want, what);
    replays.iter().sum()
}

/// [`rounds`] into the buffers given, round numbers `rounds`: each call's replays.
fn replays_each<P: Pixel>(
    s: &Stream,
    (src, dst): (&mut DeviceBatch<P>, &mut DeviceBatch<P>),
    rounds: std::ops::Range<u64>,
    call: impl Fn(&DeviceBatch<P>, &mut DeviceBatch<P>) -> cuimg::Result<()>,
    want: impl Fn(&[Image<P>]) -> Vec<Image<P>>,
    what: &str,
) -> Vec<u64> {
    let sizes = src.sizes();
    rounds
        .map(|round| {
            let imgs = images::<P>(&sizes, 1000 * round + 7);
            upload(s, &imgs, src);
            poison(s, dst, 5000 + round);
            let before = resize_replays();
            call(src, dst).unwrap();
            let replays = resize_replays() - before;
            let got = s.download_batch(dst).unwrap();
            for (i, (g, w)) in got.iter().zip(&want(&imgs)).enumerate() {
                cuimg_tests::assert_same(g, w, &format!("{what}, round {round}, image {i}"));
            }
            replays
        })
        .collect()
}

/// Every filter, RGB8 and Gray8, a ragged batch to sizes of its own, called five times
/// into the same buffers: each call writes the reference's bytes of its own pixels, and
/// the third call on replays (every filter's plans here are one launch's).
#[test]
fn repeated_batches_replay_what_each_call_would_write() {
    let Some((_one, s)) = stream() else { return };
    let sizes = [(100, 37), (64, 48), (33, 71), (201, 150), (8, 8)];
    let outs = [(50, 20), (20, 60), (50, 20), (64, 64), (3, 2)];
    for (name, f) in Filter::ALL {
        let want = |imgs: &[Image<Rgb8>]| resized(imgs, &outs, f);
        let replays = rounds::<Rgb8>(&s, &sizes, &outs, 5, |a, b| s.resize_batch(a, b, f), want, name);
        assert!(replays >= 3, "{name} RGB8: {replays} of 5 calls replayed");
        let want = |imgs: &[Image<Gray8>]| resized(imgs, &outs, f);
        let replays = rounds::<Gray8>(&s, &sizes, &outs, 5, |a, b| s.resize_batch(a, b, f), want, name);
        assert!(replays >= 3, "{name} Gray8: {replays} of 5 calls replayed");
    }
}

/// Letterboxes and crops (layouts: paddings, colors, source boxes) replayed.
#[test]
fn repeated_layouts_replay_their_paddings_and_boxes() {
    let Some((_one, s)) = stream() else { return };
    let sizes = [(64, 48), (37, 91), (200, 120), (5, 3), (120, 120)];
    for name in ["cv-linear", "cv-area", "pil-bilinear", "pil-lanczos"] {
        let f: Filter = name.parse().unwrap();
        let layouts: Vec<ResizeLayout> = sizes
            .iter()
            .enumerate()
            .map(|(i, &(w, h))| {
                let sizing = match i % 3 {
                    0 => Sizing::Fit(40, 40, Some([i as u8 * 40, 7, 200, 0])),
                    1 => Sizing::Fill(33, 20),
                    _ => Sizing::Fit(64, 30, Some([114, 114, 114, 0])),
                };
                sizing.layout(w, h, f).unwrap()
            })
            .collect();
        let outs: Vec<(u32, u32)> = layouts.iter().map(|l| l.size()).collect();
        let want = |imgs: &[Image<Rgb8>]| -> Vec<Image<Rgb8>> {
            imgs.iter().zip(&layouts).map(|(i, l)| cpu::resize_layout(&i.view(), f, l).unwrap()).collect()
        };
        let call = |a: &DeviceBatch<Rgb8>, b: &mut DeviceBatch<Rgb8>| s.resize_batch_layouts(a, b, f, &layouts);
        let replays = rounds::<Rgb8>(&s, &sizes, &outs, 4, call, want, name);
        assert!(replays >= 2, "{name}: {replays} of 4 calls replayed");
    }
}

/// Pillow's plans that take a launch a pass (each pass into device images of the call's
/// own: Lanczos to 3x2, whose output rows read too many source rows for a tile, and a
/// vertical pass alone) are never replayed, and still write the reference's bytes every
/// call.
#[test]
fn batches_of_launches_a_pass_are_not_replayed() {
    let Some((_one, s)) = stream() else { return };
    let sizes = [(901, 677), (640, 480)];
    for (name, outs) in [("pil-lanczos", [(3, 2), (2, 3)]), ("pil-bilinear", [(901, 100), (640, 50)])] {
        let f: Filter = name.parse().unwrap();
        let want = |imgs: &[Image<Rgb8>]| resized(imgs, &outs, f);
        let replays = rounds::<Rgb8>(&s, &sizes, &outs, 4, |a, b| s.resize_batch(a, b, f), want, name);
        assert_eq!(replays, 0, "{name} to {outs:?}: launches a pass replayed");
    }
}

/// Two output buffers of the same sizes, used in turn (a double-buffered loader): each
/// call writes its own buffer only, replayed once both are recorded.
#[test]
fn alternating_buffers_each_replay_into_their_own() {
    let Some((_one, s)) = stream() else { return };
    let f: Filter = "pil-bicubic".parse().unwrap();
    let sizes = [(100, 37), (64, 48), (201, 150)];
    let outs = [(50, 20), (20, 60), (64, 64)];
    let mut src = s.alloc_batch::<Rgb8>(&sizes).unwrap();
    let mut dst = [s.alloc_batch::<Rgb8>(&outs).unwrap(), s.alloc_batch::<Rgb8>(&outs).unwrap()];
    let before = resize_replays();
    for round in 0..8u64 {
        let imgs = images::<Rgb8>(&sizes, 300 * round);
        upload(&s, &imgs, &mut src);
        let [a, b] = &mut dst;
        let (into, other) = if round % 2 == 0 { (a, b) } else { (b, a) };
        poison(&s, into, 77 + round);
        poison(&s, other, 99 + round);
        let untouched = s.download_batch(other).unwrap();
        s.resize_batch(&src, into, f).unwrap();
        assert_eq!(s.download_batch(into).unwrap(), resized(&imgs, &outs, f), "round {round}");
        assert!(s.download_batch(other).unwrap() == untouched, "round {round}: the other buffer was written");
    }
    let replays = resize_replays() - before;
    assert!(replays >= 4, "{replays} of 8 calls replayed");
}

/// A change of the kernels' choice between the same calls: the calls after it launch the
/// kernels chosen now, not the recorded ones (the `_mma` kernels counted), and all write
/// the reference's bytes.
#[test]
fn a_new_choice_of_kernels_is_not_replayed_from_the_old() {
    let Some((_one, s)) = stream() else { return };
    let f: Filter = "pil-lanczos".parse().unwrap();
    let sizes = [(640, 480), (600, 500)];
    let outs = [(224, 224), (224, 224)];
    let want = |imgs: &[Image<Rgb8>]| resized(imgs, &outs, f);
    let mut src = s.alloc_batch::<Rgb8>(&sizes).unwrap();
    let mut dst = s.alloc_batch::<Rgb8>(&outs).unwrap();
    for (round, mma) in [true, true, true, false, false, false, true].into_iter().enumerate() {
        pillow_mma(Some(mma));
        let imgs = images::<Rgb8>(&sizes, 40 * round as u64);
        upload(&s, &imgs, &mut src);
        poison(&s, &mut dst, round as u64);
        let launches = pillow_mma_launches();
        s.resize_batch(&src, &mut dst, f).unwrap();
        let ran = pillow_mma_launches() - launches;
        assert_eq!(s.download_batch(&dst).unwrap(), want(&imgs), "round {round}, mma {mma}");
        assert_eq!(ran > 0, mma, "round {round}: the mma kernels ran {ran} times, asked {mma}");
    }
    pillow_mma(None);
}

/// A batch recorded, then the stream's arena of tables replaced (a batch of new sizes whose
/// tables do not fit it), then the first batch again: it writes the reference's bytes
/// (its launches planned again, into the new arena), and replays from then on.
#[test]
fn a_new_arena_of_tables_is_not_read_by_old_launches() {
    let Some((_one, s)) = stream() else { return };
    let f: Filter = "pil-lanczos".parse().unwrap();
    let sizes = [(640, 480), (333, 211)];
    let outs = [(224, 224), (100, 70)];
    let want = |imgs: &[Image<Rgb8>]| resized(imgs, &outs, f);
    let call = |a: &DeviceBatch<Rgb8>, b: &mut DeviceBatch<Rgb8>| s.resize_batch(a, b, f);
    let (mut src, mut dst) = (s.alloc_batch::<Rgb8>(&sizes).unwrap(), s.alloc_batch::<Rgb8>(&outs).unwrap());
    let before = replays_each(&s, (&mut src, &mut dst), 0..3, call, want, "before");
    assert_eq!(before, [0, 0, 1], "replays before");
    // Lanczos from widths of 8000 to 100: 480 taps a column, about 190 KB of weights a
    // width; twelve widths are more than the first arena's 1 MiB.
    let wide: Vec<(u32, u32)> = (0..12).map(|i| (8000 + i, 8)).collect();
    let big = s.upload_batch(&images::<Rgb8>(&wide, 9).iter().map(|i| i.view()).collect::<Vec<_>>()).unwrap();
    let mut small = s.alloc_batch::<Rgb8>(&vec![(100, 4); wide.len()]).unwrap();
    s.resize_batch(&big, &mut small, f).unwrap();
    // The recording read the old arena: planned (and recorded) again, then replayed.
    let after = replays_each(&s, (&mut src, &mut dst), 3..7, call, want, "after");
    assert_eq!(after, [0, 1, 1, 1], "replays after the new arena");
}
