//! Memory of one GPU context used on a stream of another: `Error::WrongContext` from every
//! call that takes device memory, before anything is queued, and both contexts still work.
//! One GPU is enough: the second context comes from a test-only hook
//! (`Gpu::with_own_context_for_tests`, feature `hooks`), where this needed two GPUs before.

use cuimg::{EqualizeMode, Error, Gray8, GrayWeights, Lut, Rgb8, cpu};
use cuimg_tests::{assert_same, gpu, random};

fn wrong<T>(what: &str, r: Result<T, Error>, failures: &mut Vec<String>) {
    match r {
        Err(Error::WrongContext(msg)) => eprintln!("  {what}: {msg}"),
        Err(e) => failures.push(format!("{what}: another error: {e:?}")),
        Ok(_) => failures.push(format!("{what}: accepted memory of another context")),
    }
}

#[test]
fn memory_of_another_context_is_a_typed_error() {
    let Some(a) = gpu() else { return };
    let b = cuimg::Gpu::with_own_context_for_tests(0).expect("a second context");
    let (sa, sb) = (a.stream().unwrap(), b.stream().unwrap());
    let rgb = random::<Rgb8>(33, 17, 1);
    let img_a = sa.upload(&rgb.view()).unwrap();
    let mut gray_a = sa.alloc::<Gray8>(33, 17).unwrap();
    let mut rgb_a = sa.alloc::<Rgb8>(33, 17).unwrap();
    let img_b = sb.upload(&rgb.view()).unwrap();
    let mut gray_b = sb.alloc::<Gray8>(33, 17).unwrap();
    let mut bins_a = sa.alloc_histogram(3).unwrap();
    let luts_a = sa.upload_lut::<Rgb8>(&Lut::invert()).unwrap();
    let batch_a = sa.upload_batch(&[rgb.view()]).unwrap();
    let mut gray_batch_b = sb.alloc_batch::<Gray8>(&[(33, 17)]).unwrap();
    let buf_a = sa.upload_slice(&[1u32, 2, 3]).unwrap();
    let idx_b = sb.upload_slice(&[0u32, 2]).unwrap();
    let mut out_b = sb.alloc_slice::<u32>(2).unwrap();
    let mut buf_b = sb.alloc_slice::<u32>(3).unwrap();
    let mut pinned_a = a.alloc_pinned::<Rgb8>(33, 17).unwrap();

    eprintln!("memory of context A on a stream of context B:");
    let mut failures = Vec::new();
    let f = &mut failures;
    wrong("download", sb.download(&img_a), f);
    wrong("upload_into", sb.upload_into(&rgb.view(), &mut rgb_a), f);
    wrong("grayscale source", sb.grayscale(&img_a, &mut gray_b, GrayWeights::Bt601), f);
    wrong("grayscale destination", sb.grayscale(&img_b, &mut gray_a, GrayWeights::Bt601), f);
    wrong("equalize_color", sb.equalize_color(&img_a, &mut rgb_a, EqualizeMode::Luma), f);
    wrong("histogram source", sb.histogram(&img_a, &mut sb.alloc_histogram(3).unwrap()), f);
    wrong("histogram bins", sb.histogram(&img_b, &mut bins_a), f);
    wrong("download_histogram", sb.download_histogram(&bins_a), f);
    wrong("apply_lut tables", sb.apply_lut(&img_b, &mut sb.alloc::<Rgb8>(33, 17).unwrap(), &luts_a), f);
    wrong("grayscale_batch", sb.grayscale_batch(&batch_a, &mut gray_batch_b, GrayWeights::Bt601), f);
    wrong("download_batch", sb.download_batch(&batch_a), f);
    wrong("gather source", sb.gather(&buf_a, &idx_b, &mut out_b).map(|_| ()), f);
    wrong("copy_slice", sb.copy_slice(&buf_a, &mut buf_b), f);
    wrong("download_slice", sb.download_slice(&buf_a), f);
    wrong("upload_pinned", sb.upload_pinned(&pinned_a), f);
    wrong("download_pinned", sb.download_pinned(&img_b, &mut pinned_a), f);
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Both contexts still compute, bit-exact.
    let want = cpu::grayscale(&rgb.view(), GrayWeights::Bt601).unwrap();
    sa.grayscale(&img_a, &mut gray_a, GrayWeights::Bt601).unwrap();
    sb.grayscale(&img_b, &mut gray_b, GrayWeights::Bt601).unwrap();
    assert_same(&sa.download(&gray_a).unwrap(), &want, "context A");
    assert_same(&sb.download(&gray_b).unwrap(), &want, "context B");
}
