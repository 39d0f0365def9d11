//! Any bytes given to the decoders and to the one JPEG header parse: a typed error or an
//! image, never a panic; the parse agrees with the decoders on what it reads.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = cuimg::jpeg::JpegFile::parse(data);
    if let Ok(file) = &parsed {
        // The parse's completeness is the walk's from the start.
        assert_eq!(file.header().complete, cuimg::jpeg::is_complete(data));
    }
    if let Ok(img) = cuimg::io::decode_rgb(data, std::path::Path::new("fuzz")) {
        assert_eq!(img.as_bytes().len(), img.width() as usize * img.height() as usize * 3);
        let _ = cuimg::cpu::histogram(&img.view());
        if let Ok(file) = &parsed {
            // A JPEG the decoder took is whole, and upright as its orientation says.
            let (w, h) = file.header().orientation.size(file.dimensions().0, file.dimensions().1);
            assert!(file.header().complete);
            assert_eq!(img.dimensions(), (w, h));
        }
    }
    let _ = cuimg::io::decode_luma(data, std::path::Path::new("fuzz"));
});
