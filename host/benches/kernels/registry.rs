//! Every operation of the registry (`cuimg::registry::OPERATIONS`), with its default
//! parameters, on RGB8 and on Gray8 where it takes them: its stream form timed as the
//! hand-written cases are (rotating inputs and outputs past L2, device events, medians), all
//! cores (`par`) and the serial reference beside it, and the result checked against the
//! reference on the same input. An operation added to the registry is in this table with
//! no line here.

use cuimg::registry::{AnyDeviceImage, AnyImage, Args, DeviceOutput, OPERATIONS};
use cuimg::{Gray8, Image, Rgb8, Stream};

use crate::Row;
use crate::common::{sets_for, time_cpu, time_gpu};

/// What one size and kind of data runs through every registry operation.
pub struct Case<'a> {
    pub size: &'static str,
    pub data: &'static str,
    pub rgb: &'a Image<Rgb8>,
    pub gray: &'a Image<Gray8>,
    pub warm: usize,
    pub runs: usize,
    /// Serial and all-cores runs (none: the CPU columns stay empty).
    pub cpu_runs: Option<usize>,
}

pub fn rows(s: &Stream, c: &Case<'_>) -> Vec<Row> {
    let mut rows = Vec::new();
    let inputs = [AnyImage::from(c.rgb.clone()), AnyImage::from(c.gray.clone())];
    for op in OPERATIONS {
        let bound = (op.bind)(&Args::defaults(op)).expect("the defaults bind");
        for img in inputs.iter().filter(|i| op.formats.contains(&i.format())) {
            let (w, h) = img.dimensions();
            let p = bound.produces(img.format()).expect("a format the operation lists");
            let (ow, oh) = bound.size(w, h);
            let out_bytes = p.image.map_or(0, |f| ow as u64 * oh as u64 * f.channels() as u64)
                + p.tensor_shape(img.format(), (ow, oh)).map_or(0, |t| t.bytes().unwrap() as u64);
            let bytes = img.as_bytes().len() as u64 + out_bytes;
            let sets = sets_for(bytes);
            let ins: Vec<AnyDeviceImage> = (0..sets).map(|_| AnyDeviceImage::upload(s, &img.view()).unwrap()).collect();
            let mut outs: Vec<DeviceOutput> =
                (0..sets).map(|_| DeviceOutput::alloc(s, &*bound, img.format(), w, h).unwrap()).collect();
            let mut launch = |i: usize| bound.stream(s, &ins[i % sets].view(), outs[i % sets].target());
            let t = time_gpu(s, c.warm, c.runs, &mut launch);
            // One more launch's result against the reference: a fast wrong kernel fails here.
            let last = 0;
            launch(last).unwrap();
            let want = bound.cpu(&img.view()).unwrap();
            let what = format!("{} {} {} {}", op.name, img.format(), c.size, c.data);
            assert!(outs[last].download(s).unwrap() == want, "{what}: the GPU differs from the reference");
            let mut row = Row::gpu_only(
                leak(format!("{} {} (registry)", op.name, img.format())),
                c.size,
                (w * h) as f64 / 1e6,
                c.data,
                t,
                bytes,
            );
            if let Some(n) = c.cpu_runs {
                row.cpu_serial_ms = Some(time_cpu(n, || bound.cpu(&img.view()).unwrap()));
                row.cpu_rayon_ms = Some(time_cpu(n, || bound.par(&img.view()).unwrap()));
            }
            rows.push(row);
        }
    }
    rows
}

/// A row's name, kept for the run (the report's rows name `&'static str`s).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}
