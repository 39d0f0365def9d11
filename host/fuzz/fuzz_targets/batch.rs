//! The batch descriptors (each image's offset and size in the batch's one allocation, the
//! copy runs, the launch chunks) for any list of sizes: `Ok` with a layout the kernels can
//! trust (every image 256-byte aligned, inside the allocation, none overlapping; the runs
//! exactly the images' bytes; the chunks every image once, within the launch limit), or a
//! typed error; never a panic or an overflowed size.
#![no_main]

use cuimg::runtime::describe_batch;
use cuimg::{Error, Gray8, Pixel, Rgb8, Rgba8};
use libfuzzer_sys::fuzz_target;

fn check<P: Pixel>(sizes: &[(u32, u32)]) {
    match describe_batch::<P>(sizes) {
        Ok((entries, total, runs, chunks)) => {
            assert_eq!(entries.len(), sizes.len());
            assert!(total <= isize::MAX as usize);
            let mut end = 0usize;
            let mut covered = Vec::new();
            for (&(offset, w, h), &(sw, sh)) in entries.iter().zip(sizes) {
                assert_eq!((w, h), (sw, sh));
                assert_eq!(offset % 256, 0, "every image 256-byte aligned");
                assert!(offset >= end, "images overlap");
                let bytes = w as usize * h as usize * P::CHANNELS;
                end = offset + bytes;
                assert!(end <= total, "an image ends past the allocation");
                covered.push(offset..end);
            }
            // The runs are the images' bytes, adjacent ones merged, in order.
            let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
            for r in covered {
                match merged.last_mut() {
                    Some(last) if last.end == r.start => last.end = r.end,
                    _ => merged.push(r),
                }
            }
            assert_eq!(runs, merged);
            let mut next = 0usize;
            for (start, count) in chunks {
                assert_eq!(start, next, "chunks in order, none skipped");
                assert!(count >= 1 && count <= cuimg_abi::MAX_BATCH_LAUNCH, "a chunk within gridDim.z");
                next += count as usize;
            }
            assert_eq!(next, sizes.len(), "every image in one chunk");
        }
        Err(Error::EmptyBatch) => assert!(sizes.is_empty()),
        Err(Error::EmptyImage { width, height }) => {
            assert!(width == 0 || height == 0);
            assert!(sizes.contains(&(width, height)));
        }
        Err(Error::TooLarge { .. }) => {}
        Err(e) => panic!("unexpected error for a batch: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    // Pairs of (width, height): small ones mostly, with the top bits reaching the huge ones
    // that overflow a byte count.
    let sizes: Vec<(u32, u32)> = data
        .chunks_exact(8)
        .map(|c| {
            let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let h = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
            let shrink = |v: u32| if v >> 31 == 1 { v } else { v % 5000 };
            (shrink(w), shrink(h))
        })
        .collect();
    check::<Gray8>(&sizes);
    check::<Rgb8>(&sizes);
    check::<Rgba8>(&sizes);
});
