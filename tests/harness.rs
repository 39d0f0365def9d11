//! Shared test support: the GPU (or a visible skip), seeded images, the photos, poisoned
//! outputs and OpenCV's golden digests.
//!
//! Without a driver every GPU test prints `SKIP: no CUDA driver` and passes; with
//! `CUIMG_REQUIRE_GPU=1` (the GPU bundle sets it) a missing GPU is a failure instead, so a
//! GPU run can never pass by skipping.

use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

use cuimg::{DeviceImage, DeviceViewMut, Gpu, Image, Pixel, Rect, Stream};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The GPU, or `None` after printing why the test skips.
pub fn gpu() -> Option<Gpu> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    match GPU.get_or_init(open) {
        Ok(gpu) => Some(gpu.clone()),
        Err(why) => skip(why),
    }
}

/// A GPU opened for the caller alone (not the one [`gpu`] shares with the other tests of the
/// binary), or `None` (skip): for tests that break or exhaust it.
pub fn open_gpu() -> Option<Gpu> {
    match open() {
        Ok(gpu) => Some(gpu),
        Err(why) => skip(&why),
    }
}

fn open() -> Result<Gpu, String> {
    match Gpu::new() {
        Ok(gpu) => Ok(gpu),
        Err(e) if e.is_no_gpu() => Err(e.to_string()),
        Err(e) => panic!("the GPU is there but could not be used: {e}"),
    }
}

fn skip<T>(why: &str) -> Option<T> {
    if std::env::var("CUIMG_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("CUIMG_REQUIRE_GPU=1 but there is no usable GPU: {why}");
    }
    static SAID: OnceLock<()> = OnceLock::new();
    SAID.get_or_init(|| {
        // Straight to stderr: libtest captures print!/eprint!, and this must be seen.
        // `why` reads "no CUDA driver: ..." (or "no CUDA device: ...").
        let _ = writeln!(std::io::stderr(), "SKIP: {why} (GPU tests in this binary pass without running)");
    });
    None
}

/// Aborts the process (with `what` on stderr) unless dropped within `limit`: a test that
/// would hang fails instead, and CI and the sanitizer runs go on.
pub struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    pub fn new(limit: std::time::Duration, what: &'static str) -> Watchdog {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                let _ = writeln!(std::io::stderr(), "watchdog: {what} did not finish in {limit:?}: hung");
                std::process::abort();
            }
        });
        Watchdog(Some(tx))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// True under compute-sanitizer (`CUIMG_SANITIZE=1`, set by `gpu-bundle/run.sh sanitize`):
/// tests that loop many times take fewer rounds there, as every kernel runs 10 to 100
/// times slower.
pub fn sanitizing() -> bool {
    std::env::var("CUIMG_SANITIZE").is_ok_and(|v| v == "1")
}

/// A new stream on the GPU, or `None` (skip).
pub fn stream() -> Option<Stream> {
    gpu().map(|g| g.stream().expect("a stream"))
}

/// Sizes that catch edge cases: single pixels, single rows and columns, primes (no vector
/// alignment), sizes around the 16-pixel vector width, and a 4K frame.
pub const SIZES: &[(u32, u32)] = &[
    (1, 1),
    (1, 17),
    (17, 1),
    (15, 1),
    (16, 1),
    (2, 2),
    (7, 3),
    (31, 29),
    (64, 48),
    (127, 131),
    (333, 257),
    (1021, 769),
    (3840, 2160),
];

/// Deterministic random pixels.
pub fn random<P: Pixel>(width: u32, height: u32, seed: u64) -> Image<P> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut img = Image::<P>::new(width, height);
    rng.fill(img.as_bytes_mut());
    img
}

/// Random pixels squeezed into a few values (a realistic, peaky histogram).
pub fn skewed<P: Pixel>(width: u32, height: u32, seed: u64) -> Image<P> {
    let mut img = random::<P>(width, height, seed);
    for b in img.as_bytes_mut() {
        *b = *b % 37 + 100;
    }
    img
}

/// The same bytes as the golden generator (tests/golden/make_goldens.py) makes.
pub fn splitmix_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        s = s.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        out.extend_from_slice(&z.to_le_bytes());
    }
    out.truncate(n);
    out
}

/// FNV-1a 64, the digest the goldens hold.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF29CE484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001B3))
}

/// OpenCV's digest for a case of tests/golden/opencv.txt.
pub fn golden(case: &str) -> u64 {
    golden_in(include_str!("golden/opencv.txt"), case)
}

/// OpenCV's digest for a CLAHE case of tests/golden/opencv-clahe.txt.
pub fn clahe_golden(case: &str) -> u64 {
    golden_in(include_str!("golden/opencv-clahe.txt"), case)
}

fn golden_in(text: &str, case: &str) -> u64 {
    let line =
        text.lines().find(|l| l.split(' ').next() == Some(case)).unwrap_or_else(|| panic!("no golden case {case}"));
    u64::from_str_radix(line.split(' ').nth(1).expect("digest"), 16).expect("hex digest")
}

/// The test photos' folder: `CUIMG_IMAGES` (the GPU bundle sets it to its copy), else the
/// repository's own `tests/data/photos` (CC0; its LICENSES.md says where each is from).
pub fn images_dir() -> PathBuf {
    let dir = std::env::var_os("CUIMG_IMAGES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/photos"));
    assert!(
        dir.join("coffee.png").is_file(),
        "the test photos are missing: expected coffee.png, chelsea.png and camera.png in {} \
         (the repository's tests/data/photos, or the folder CUIMG_IMAGES names)",
        dir.display()
    );
    dir
}

/// The color photos, by name.
pub fn color_photos() -> Vec<(&'static str, Image<cuimg::Rgb8>)> {
    let dir = images_dir();
    ["chelsea", "coffee"]
        .into_iter()
        .map(|n| (n, cuimg::io::load_rgb(dir.join(format!("{n}.png"))).expect("photo decodes")))
        .collect()
}

/// The gray photo.
pub fn gray_photo() -> Image<cuimg::Gray8> {
    cuimg::io::load_gray(images_dir().join("camera.png")).expect("photo decodes")
}

/// A photo tiled to `width` x `height`.
pub fn tiled<P: Pixel>(photo: &Image<P>, width: u32, height: u32) -> Image<P> {
    Image::from_fn(width, height, |x, y| photo.get(x % photo.width(), y % photo.height()))
}

/// A device image full of a byte pattern no kernel produces by accident: outputs are written
/// over it, so an unwritten pixel shows up as a mismatch instead of a lucky zero.
pub fn poisoned<P: Pixel>(stream: &Stream, width: u32, height: u32) -> DeviceImage<P> {
    let mut img = Image::<P>::new(width, height);
    for (i, b) in img.as_bytes_mut().iter_mut().enumerate() {
        *b = 0xA5 ^ (i as u8).wrapping_mul(31);
    }
    stream.upload(&img.view()).expect("upload poison")
}

/// Runs `write` into region `at` of a poisoned destination of `size`, then checks that the
/// region holds `want` and that every byte around it is as it was.
#[track_caller]
pub fn assert_writes_only_region<Q: Pixel>(
    s: &Stream,
    size: (u32, u32),
    at: Rect,
    want: &Image<Q>,
    write: impl FnOnce(&mut DeviceViewMut<'_, Q>) -> cuimg::Result<()>,
    what: &str,
) {
    let mut dst = poisoned::<Q>(s, size.0, size.1);
    let before = s.download(&dst).unwrap();
    write(&mut dst.roi_mut(at).unwrap()).unwrap();
    let got = s.download(&dst).unwrap();
    assert_same(&got.roi(at).unwrap().to_image(), want, what);
    let mut expected = before;
    expected.view_mut().roi(at).unwrap().copy_from(&want.view()).unwrap();
    assert_same(&got, &expected, &format!("{what}: bytes outside the destination region changed"));
}

/// Asserts two images are equal, naming the first differing pixel instead of dumping both.
#[track_caller]
pub fn assert_same<P: Pixel>(got: &Image<P>, want: &Image<P>, what: &str) {
    assert_eq!(got.dimensions(), want.dimensions(), "{what}: dimensions");
    if got != want {
        let (w, _) = got.dimensions();
        let i = got.pixels().iter().zip(want.pixels()).position(|(a, b)| a != b).expect("a difference");
        let (x, y) = (i as u32 % w, i as u32 / w);
        let n = got.pixels().iter().zip(want.pixels()).filter(|(a, b)| a != b).count();
        panic!(
            "{what}: {n} pixels differ; first at ({x}, {y}): got {:?}, want {:?}",
            got.pixels()[i],
            want.pixels()[i]
        );
    }
}

/// `r` is a typed refusal of bad input (a parameter, an empty image or batch, a length),
/// not a success or another kind of error.
pub fn assert_refused(r: cuimg::Result<impl std::fmt::Debug>, what: &str) {
    use cuimg::Error;
    match r {
        Err(
            Error::InvalidParameter { .. } | Error::EmptyImage { .. } | Error::EmptyBatch | Error::WrongLength { .. },
        ) => {}
        other => panic!("{what}: expected a typed refusal, got {other:?}"),
    }
}

/// A device tensor of `shape` whose every byte is 0xA5 (a NaN in f32, a value in halves),
/// so that an element a launch does not write shows.
pub fn poisoned_tensor(stream: &Stream, shape: cuimg::TensorShape) -> cuimg::DeviceTensor {
    let t = cuimg::Tensor::from_bytes(shape, vec![0xA5; shape.bytes().unwrap()]).unwrap();
    stream.upload_tensor(&t).unwrap()
}

/// For the resize tests: `Stream::resize` and `Stream::resize_batch` on a stream of their
/// own, each output poisoned first (random bytes uploaded where the resize writes), so that
/// a pixel no kernel writes fails the comparison: a fresh allocation may hold an earlier call's same bytes (initcheck
/// flagged such a download once, session 12).
pub struct Poisoned(pub Stream, std::cell::Cell<u64>);

impl Poisoned {
    pub fn new(gpu: &Gpu) -> Poisoned {
        Poisoned(gpu.stream().unwrap(), std::cell::Cell::new(1000))
    }

    pub fn poison<P: Pixel>(&self, w: u32, h: u32) -> Image<P> {
        self.1.set(self.1.get() + 1);
        Image::from_bytes(w, h, &splitmix_bytes(self.1.get(), (w * h) as usize * P::CHANNELS)).unwrap()
    }

    pub fn resize<P: Pixel>(&self, img: &cuimg::ImageView<'_, P>, w: u32, h: u32, f: cuimg::Filter) -> Image<P> {
        let s = &self.0;
        let src = s.upload(img).unwrap();
        let mut dst = s.upload(&self.poison::<P>(w, h).view()).unwrap();
        s.resize(&src, &mut dst, f).unwrap();
        s.download(&dst).unwrap()
    }

    pub fn batch<P: Pixel>(&self, imgs: &[cuimg::ImageView<'_, P>], w: u32, h: u32, f: cuimg::Filter) -> Vec<Image<P>> {
        let s = &self.0;
        let src = s.upload_batch(imgs).unwrap();
        let poison: Vec<Image<P>> = imgs.iter().map(|_| self.poison(w, h)).collect();
        let views: Vec<_> = poison.iter().map(|p| p.view()).collect();
        let mut dst = s.upload_batch(&views).unwrap();
        s.resize_batch(&src, &mut dst, f).unwrap();
        s.download_batch(&dst).unwrap()
    }
}
