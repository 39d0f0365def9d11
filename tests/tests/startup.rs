//! Opening a GPU: the device's own SASS where a committed cubin runs on it, the PTX (JIT)
//! otherwise, with the same results either way. One test in its own binary, because it sets
//! an environment variable.

use cuimg::{Code, Gpu, GrayWeights, Rgb8, cpu};
use cuimg_tests::{assert_same, gpu, random};

#[test]
fn sass_when_known_and_ptx_as_the_fallback() {
    let Some(first) = gpu() else { return };
    let (major, minor) = first.compute_capability();
    println!("{}: sm_{major}{minor}, {} in {:?}", first.name(), first.startup().code, first.startup().total());
    // Every generation up to Blackwell has a committed cubin of its major version.
    if major <= 12 {
        assert!(matches!(first.startup().code, Code::Sass(sm) if sm / 10 == major as u32), "{}", first.startup().code);
    }
    let img = random::<Rgb8>(333, 257, 5);
    let want = cpu::grayscale(&img.view(), GrayWeights::Bt601).unwrap();
    assert_same(&first.grayscale(&img.view(), GrayWeights::Bt601).unwrap(), &want, "SASS");
    // SAFETY: this binary has this one test, so no other thread reads the environment.
    unsafe { std::env::set_var("CUIMG_FORCE_PTX", "1") };
    let jit = Gpu::new().unwrap();
    // SAFETY: as above.
    unsafe { std::env::remove_var("CUIMG_FORCE_PTX") };
    assert_eq!(jit.startup().code, Code::Ptx);
    println!("PTX JIT: {:?}", jit.startup().total());
    assert_same(&jit.grayscale(&img.view(), GrayWeights::Bt601).unwrap(), &want, "PTX");
}
