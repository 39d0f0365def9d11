//! Any bytes given to the decoders: a typed error or an image, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(img) = cuimg::io::decode_rgb(data, std::path::Path::new("fuzz")) {
        assert_eq!(img.as_bytes().len(), img.width() as usize * img.height() as usize * 3);
        let _ = cuimg::cpu::histogram(&img.view());
    }
});
