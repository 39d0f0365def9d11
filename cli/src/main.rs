//! `cuimg`: folders of images through the GPU (every GPU of the machine, or the one named),
//! or all CPU cores, files to files.
//!
//! ```text
//! cuimg gray photos/ -o out/                 # every PNG/JPEG of photos/ to gray PNG/JPEG in out/
//! cuimg equalize 'shots/*.jpg' -o out/ --quality 90 --gpu all --report --plot stages.svg
//! cuimg lut a.png b.png -o out/ --table gamma:2.2
//! cuimg histogram photos/ -o hist/ --format json
//! ```
//!
//! Reading and decoding run on all cores, the GPU work on the overlapped pipeline
//! (`cuimg::Pipeline`), encoding and writing on all cores again, all at the same time and
//! with bounded memory. A file that cannot be read, decoded or written is reported with its
//! path and the others go on; the exit code is 1 when any failed. Outputs are written through
//! a temporary file and a rename, and never over an input.

mod inputs;
mod report;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use cuimg::io::{Encode, Format};
use cuimg::{DeviceImage, EqualizeMode, GpuPool, Gray8, GrayWeights, Image, Lut, Pipeline, Pixel, Rgb8, Stream, cpu};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use report::{Stage, Stages};

#[derive(Parser)]
#[command(name = "cuimg", version, about = "GPU image processing, files to files", long_about = None)]
struct Cli {
    #[command(subcommand)]
    op: Op,
}

#[derive(Subcommand)]
enum Op {
    /// RGB to gray (BT.601, as OpenCV's cvtColor).
    Gray(Common),
    /// Gray written back into red, green and blue.
    Bw(Common),
    /// Histogram equalization on luma (colors keep their hue), as OpenCV's equalizeHist.
    Equalize(Common),
    /// A lookup table on every channel: invert, gamma:G or threshold:T.
    Lut {
        #[command(flatten)]
        common: Common,
        /// invert | gamma:<G> | threshold:<T>
        #[arg(long, default_value = "invert")]
        table: String,
    },
    /// The 256-bin histogram of each image's red, green and blue, as CSV or JSON files.
    Histogram(Common),
}

#[derive(Args, Clone)]
struct Common {
    /// Image files, folders (their PNG and JPEG files) and glob patterns.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The folder to write into (made if missing).
    #[arg(short, long)]
    out: PathBuf,
    /// Output format: png or jpg (images; default: the input's), csv or json (histogram).
    #[arg(long)]
    format: Option<String>,
    /// JPEG quality, 1 to 100.
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u8).range(1..=100))]
    quality: u8,
    /// The GPU to use (an index) or "all".
    #[arg(long, default_value = "all")]
    gpu: String,
    /// Use the CPU (all cores) even when a GPU is there.
    #[arg(long)]
    cpu: bool,
    /// Print the time of each stage (read, decode, upload, kernel, download, encode, write).
    #[arg(long)]
    report: bool,
    /// Draw the stage times to an SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// Everything one run shares between its threads.
struct Run {
    stages: Stages,
    progress: ProgressBar,
    failures: Mutex<Vec<inputs::Problem>>,
    done: AtomicUsize,
}

impl Run {
    fn fail(&self, path: &Path, why: impl std::fmt::Display) {
        self.progress.suspend(|| eprintln!("error: {}: {why}", path.display()));
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).push((path.to_path_buf(), why.to_string()));
        self.progress.inc(1);
    }

    fn ok(&self) {
        self.done.fetch_add(1, Relaxed);
        self.progress.inc(1);
    }
}

fn main() {
    let cli = Cli::parse();
    let (op, common) = match &cli.op {
        Op::Gray(c) | Op::Bw(c) | Op::Equalize(c) | Op::Histogram(c) => (&cli.op, c),
        Op::Lut { common, .. } => (&cli.op, common),
    };
    std::process::exit(match run(op, common) {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    });
}

/// The run; `Ok(failures)`, or `Err` when nothing could start.
fn run(op: &Op, c: &Common) -> Result<usize, String> {
    let lut = match op {
        Op::Lut { table, .. } => Some(parse_lut(table)?),
        _ => None,
    };
    let histogram = matches!(op, Op::Histogram(_));
    let ext = match (c.format.as_deref(), histogram) {
        (None, true) => Some("csv"),
        (Some(f @ ("csv" | "json")), true) => Some(f),
        (Some(f @ ("png" | "jpg" | "jpeg")), false) => Some(f),
        (None, false) => None,
        (Some(f), _) => return Err(format!("--format {f} does not fit this command")),
    };
    std::fs::create_dir_all(&c.out).map_err(|e| format!("cannot create the output folder {}: {e}", c.out.display()))?;
    let probe = c.out.join(format!(".cuimg-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write into the output folder {}: {e}", c.out.display()))?;
    let _ = std::fs::remove_file(&probe);

    let (files, missing) = inputs::expand(&c.inputs);
    let (jobs, clashes) = inputs::outputs(&files, &c.out, ext);
    let progress = ProgressBar::new((jobs.len() + clashes.len()) as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} images, {per_sec}, {eta} left").expect("a valid template"),
    );
    let run = Run { stages: Stages::default(), progress, failures: Mutex::new(Vec::new()), done: AtomicUsize::new(0) };
    for (path, why) in missing.iter().chain(&clashes) {
        run.fail(path, why);
    }
    let start = Instant::now();
    let gpus = if c.cpu { None } else { open_gpus(&c.gpu)? };
    let device = gpus.as_ref().map_or_else(
        || format!("CPU, {} threads", rayon::current_num_threads()),
        |p| format!("{} x {}", p.len(), p.gpus()[0].name()),
    );
    let jpeg = |path: &Path| Format::from_path(path, c.quality).unwrap_or(Format::Png);
    // JPEG in, on a GPU with nvJPEG: decoded (and, for JPEG out, encoded) on the GPU.
    let all_jpeg =
        !jobs.is_empty() && jobs.iter().all(|(i, _)| matches!(Format::from_path(i, 0), Some(Format::Jpeg { .. })));
    let codecs = match (&gpus, all_jpeg && !histogram) {
        (Some(pool), true) => match pool.gpus().iter().map(cuimg::jpeg::Jpeg::new).collect::<cuimg::Result<Vec<_>>>() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("JPEG through the CPU: {e}");
                None
            }
        },
        _ => None,
    };
    let opened = start.elapsed();
    let device = match &codecs {
        Some(c) if c[0].hardware() => format!("{device}, nvJPEG (hardware decoder)"),
        Some(_) => format!("{device}, nvJPEG"),
        None => device,
    };
    match (op, &gpus, &codecs) {
        (Op::Gray(_), Some(pool), Some(codecs)) => {
            jpeg_on_gpu::<Gray8>(&jobs, pool, codecs, &jpeg, &run, |s, a, b| s.grayscale(a, b, GrayWeights::Bt601))
        }
        (Op::Bw(_), Some(pool), Some(codecs)) => {
            jpeg_on_gpu::<Rgb8>(&jobs, pool, codecs, &jpeg, &run, |s, a, b| s.black_and_white(a, b, GrayWeights::Bt601))
        }
        (Op::Equalize(_), Some(pool), Some(codecs)) => {
            jpeg_on_gpu::<Rgb8>(&jobs, pool, codecs, &jpeg, &run, |s, a, b| s.equalize_color(a, b, EqualizeMode::Luma))
        }
        (Op::Lut { .. }, Some(pool), Some(codecs)) => {
            let lut = lut.expect("parsed above");
            jpeg_on_gpu::<Rgb8>(&jobs, pool, codecs, &jpeg, &run, move |s, a, b| {
                s.apply_lut(a, b, &s.upload_lut::<Rgb8>(&lut)?)
            })
        }
        _ => {}
    }
    if codecs.is_none() {
        match (op, &gpus) {
            (Op::Histogram(_), _) => histograms(&jobs, gpus.as_ref(), ext == Some("json"), &run),
            (Op::Gray(_), Some(pool)) => {
                on_gpu::<Gray8>(&jobs, pool, &jpeg, &run, |s, a, b| s.grayscale(a, b, GrayWeights::Bt601))
            }
            (Op::Bw(_), Some(pool)) => {
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, |s, a, b| s.black_and_white(a, b, GrayWeights::Bt601))
            }
            (Op::Equalize(_), Some(pool)) => {
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, |s, a, b| s.equalize_color(a, b, EqualizeMode::Luma))
            }
            (Op::Lut { .. }, Some(pool)) => {
                let lut = lut.expect("parsed above");
                on_gpu::<Rgb8>(&jobs, pool, &jpeg, &run, move |s, a, b| {
                    // One upload of 768 bytes per image: small against the image's own.
                    s.apply_lut(a, b, &s.upload_lut::<Rgb8>(&lut)?)
                })
            }
            (Op::Gray(_), None) => {
                on_cpu::<Gray8>(&jobs, &jpeg, &run, |i| cpu::grayscale(&i.view(), GrayWeights::Bt601))
            }
            (Op::Bw(_), None) => {
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, |i| cpu::black_and_white(&i.view(), GrayWeights::Bt601))
            }
            (Op::Equalize(_), None) => {
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, |i| cpu::equalize_color(&i.view(), EqualizeMode::Luma))
            }
            (Op::Lut { .. }, None) => {
                let lut = lut.expect("parsed above");
                on_cpu::<Rgb8>(&jobs, &jpeg, &run, move |i| cpu::apply_lut(&i.view(), &lut))
            }
        }
    }
    run.progress.finish_and_clear();
    let wall = start.elapsed();
    let failures = run.failures.into_inner().unwrap_or_else(|e| e.into_inner());
    let done = run.done.load(Relaxed);
    eprintln!(
        "{done} images written, {} failed, in {:.2} s ({:.1} images/s) on {device}; {:.0} ms of it opening the GPU and codecs",
        failures.len(),
        wall.as_secs_f64(),
        done as f64 / wall.as_secs_f64().max(1e-9),
        opened.as_secs_f64() * 1e3
    );
    if c.report {
        eprintln!("{}", run.stages.table(done, wall));
    }
    if let Some(svg) = &c.plot {
        run.stages.plot(svg, &device).map_err(|e| format!("cannot draw {}: {e}", svg.display()))?;
    }
    Ok(failures.len())
}

fn parse_lut(table: &str) -> Result<Lut, String> {
    let (name, arg) = table.split_once(':').unwrap_or((table, ""));
    let number = |what: &str| arg.parse::<f64>().map_err(|_| format!("--table {name}:{arg}: {what} must be a number"));
    match name {
        "invert" => Ok(Lut::invert()),
        "gamma" => {
            let g = number("the gamma")?;
            if g.is_finite() && g > 0.0 {
                Ok(Lut::gamma(g))
            } else {
                Err(format!("--table gamma:{arg}: must be above 0"))
            }
        }
        "threshold" => {
            let t = number("the threshold")?;
            if (0.0..=255.0).contains(&t) {
                Ok(Lut::threshold(t as u8))
            } else {
                Err(format!("--table threshold:{arg}: 0 to 255"))
            }
        }
        _ => Err(format!("--table {table}: use invert, gamma:<G> or threshold:<T>")),
    }
}

fn open_gpus(which: &str) -> Result<Option<GpuPool>, String> {
    let pool = match which {
        "all" => GpuPool::all(),
        n => GpuPool::with_devices(&[n.parse().map_err(|_| format!("--gpu {n}: an index or \"all\""))?]),
    };
    match pool {
        Ok(pool) => Ok(Some(pool)),
        Err(e) if e.is_no_gpu() && which == "all" => {
            eprintln!("no GPU ({e}); using the CPU on all cores");
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Reads and decodes one input, timed. A source with more than 8 bits per channel is
/// reduced to 8 (cuimg's images are 8-bit) and the user is told, file by file.
fn load(path: &Path, run: &Run) -> cuimg::Result<Image<Rgb8>> {
    let stages = &run.stages;
    let bytes = stages.time(Stage::Read, || {
        std::fs::read(path).map_err(|e| cuimg::Error::Decode { path: path.into(), source: e.into() })
    })?;
    stages.time(Stage::Decode, || {
        if let Some(bits @ 9..) = cuimg::io::bits_per_channel(&bytes) {
            run.progress.suspend(|| {
                eprintln!(
                    "warning: {}: {bits} bits per channel, reduced to 8 (cuimg works on 8-bit images)",
                    path.display()
                )
            });
        }
        cuimg::io::decode_rgb(&bytes, path)
    })
}

/// Encodes and writes one result, timed.
fn save<Q: Pixel + Encode>(img: &Image<Q>, out: &Path, format: Format, run: &Run) {
    match run.stages.time(Stage::Encode, || cuimg::io::encode(img, format)) {
        Err(e) => run.fail(out, e),
        Ok(bytes) => match run.stages.time(Stage::Write, || inputs::write_atomically(out, &bytes)) {
            Err(e) => run.fail(out, format!("cannot write: {e}")),
            Ok(()) => run.ok(),
        },
    }
}

/// The CPU path: every image read, processed and written on a core of its own.
fn on_cpu<Q: Pixel + Encode>(
    jobs: &[inputs::Job],
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Image<Rgb8>) -> cuimg::Result<Image<Q>> + Sync,
) {
    jobs.par_iter().for_each(|(input, out)| match load(input, run) {
        Err(e) => run.fail(input, e),
        Ok(img) => match run.stages.time(Stage::Kernel, || op(&img)) {
            Err(e) => run.fail(input, e),
            Ok(result) => save(&result, out, format(out), run),
        },
    });
}

/// The GPU path: decoding on all cores feeds the pipeline, whose results are encoded and
/// written on all cores, with bounded queues between the stages.
fn on_gpu<Q: Pixel + Encode>(
    jobs: &[inputs::Job],
    pool: &GpuPool,
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync,
) {
    let (decoded_tx, decoded_rx) = std::sync::mpsc::sync_channel::<(usize, Image<Rgb8>)>(32);
    let (result_tx, result_rx) = std::sync::mpsc::sync_channel::<(usize, Image<Q>)>(32);
    let result_rx = Mutex::new(result_rx);
    // Pipeline index -> job index: the pipeline numbers the images it gets in arrival order.
    let order = Mutex::new(Vec::with_capacity(jobs.len()));
    std::thread::scope(|scope| {
        scope.spawn(move || {
            jobs.par_iter().enumerate().for_each_with(decoded_tx, |tx, (i, (input, _))| match load(input, run) {
                Ok(img) => {
                    let _ = tx.send((i, img));
                }
                Err(e) => run.fail(input, e),
            });
        });
        let writers = std::thread::available_parallelism().map_or(4, |n| n.get()).div_ceil(2);
        for _ in 0..writers {
            let result_rx = &result_rx;
            scope.spawn(move || {
                loop {
                    let next = result_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((i, img)) = next else { break };
                    let out = &jobs[i].1;
                    save(&img, out, format(out), run);
                }
            });
        }
        let images = decoded_rx.into_iter().map(|(i, img)| {
            order.lock().unwrap_or_else(|e| e.into_inner()).push(i);
            img
        });
        let report = Pipeline::on(pool).run(images, op, |k, result| {
            let i = order.lock().unwrap_or_else(|e| e.into_inner())[k];
            match result {
                Ok(img) => {
                    let _ = result_tx.send((i, img));
                }
                Err(e) => run.fail(&jobs[i].0, e),
            }
        });
        drop(result_tx);
        match report {
            Ok(r) => {
                run.stages.add(Stage::Upload, r.upload);
                run.stages.add(Stage::Kernel, r.kernel);
                run.stages.add(Stage::Download, r.download);
                run.stages.add(Stage::Staging, r.host_in + r.host_out);
            }
            Err(e) => {
                run.progress.suspend(|| eprintln!("error: the GPU pipeline could not start: {e}"));
            }
        }
    });
}

/// Histograms of every image, as CSV (`bin,red,green,blue`) or JSON files.
fn histograms(jobs: &[inputs::Job], pool: Option<&GpuPool>, json: bool, run: &Run) {
    jobs.par_iter().enumerate().for_each(|(k, (input, out))| {
        let img = match load(input, run) {
            Ok(img) => img,
            Err(e) => return run.fail(input, e),
        };
        let hist = run.stages.time(Stage::Kernel, || match pool {
            Some(p) => p.gpus()[k % p.len()].histogram(&img.view()),
            None => cpu::histogram(&img.view()),
        });
        let hist = match hist {
            Ok(h) => h,
            Err(e) => return run.fail(input, e),
        };
        let text = run.stages.time(Stage::Encode, || {
            if json {
                let channel = |c: usize| hist.channel(c).to_vec();
                serde_json::json!({"file": input.display().to_string(), "width": img.width(), "height": img.height(),
                    "red": channel(0), "green": channel(1), "blue": channel(2)})
                .to_string()
            } else {
                let mut csv = String::from("bin,red,green,blue\n");
                for b in 0..256 {
                    csv.push_str(&format!(
                        "{b},{},{},{}\n",
                        hist.channel(0)[b],
                        hist.channel(1)[b],
                        hist.channel(2)[b]
                    ));
                }
                csv
            }
        });
        match run.stages.time(Stage::Write, || inputs::write_atomically(out, text.as_bytes())) {
            Ok(()) => run.ok(),
            Err(e) => run.fail(out, format!("cannot write: {e}")),
        }
    });
}

/// Formats nvJPEG encodes from device images.
trait GpuJpeg: Pixel + Encode {
    fn encode_on_gpu(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        img: &DeviceImage<Self>,
        quality: u8,
    ) -> cuimg::Result<Vec<u8>>;
}

impl GpuJpeg for Gray8 {
    fn encode_on_gpu(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        img: &DeviceImage<Self>,
        quality: u8,
    ) -> cuimg::Result<Vec<u8>> {
        jpeg.encode_gray(s, img, quality)
    }
}

impl GpuJpeg for Rgb8 {
    fn encode_on_gpu(
        jpeg: &cuimg::jpeg::Jpeg,
        s: &Stream,
        img: &DeviceImage<Self>,
        quality: u8,
    ) -> cuimg::Result<Vec<u8>> {
        jpeg.encode_rgb(s, img, quality)
    }
}

/// JPEG files on the GPU: each worker (several per GPU, each with its own stream and
/// nvJPEG codec state) reads a handful of files, decodes them together on the GPU (the
/// hardware decoder where there is one), runs the operation, and encodes JPEG outputs on the
/// GPU too (other formats are downloaded and encoded on the CPU), then writes.
fn jpeg_on_gpu<Q: GpuJpeg>(
    jobs: &[inputs::Job],
    pool: &GpuPool,
    codecs: &[std::sync::Arc<cuimg::jpeg::Jpeg>],
    format: &(dyn Fn(&Path) -> Format + Sync),
    run: &Run,
    op: impl Fn(&Stream, &DeviceImage<Rgb8>, &mut DeviceImage<Q>) -> cuimg::Result<()> + Sync,
) {
    // Files per decoder call, and workers per GPU: the decoder wants large batches; two
    // workers keep one batch decoding while the other's results are encoded. The hardware
    // decoder alone tops out near 545 12-megapixel images/s on an H100; CUIMG_CUDA_DECODERS
    // adds workers decoding on the SMs beside it, which measured slower (2 or 4 of them:
    // 171 and 188 images/s against 214 to 256 without; docs/BENCHMARKS.md), so none by
    // default.
    const BATCH: usize = 32;
    let next = AtomicUsize::new(0);
    let cuda_decoders: usize = std::env::var("CUIMG_CUDA_DECODERS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let workers_per_gpu = 2 + cuda_decoders;
    std::thread::scope(|scope| {
        for (gpu, codec) in pool.gpus().iter().zip(codecs) {
            for w in 0..workers_per_gpu {
                let (next, op) = (&next, &op);
                scope.spawn(move || {
                    // One codec per worker: nvJPEG states serialize the calls that share them.
                    let own =
                        if w < 2 { cuimg::jpeg::Jpeg::new(gpu) } else { cuimg::jpeg::Jpeg::without_hardware(gpu) };
                    let jpeg = own.unwrap_or_else(|_| codec.clone());
                    let s = match gpu.stream() {
                        Ok(s) => s,
                        Err(e) => return run.progress.suspend(|| eprintln!("error: a GPU stream: {e}")),
                    };
                    loop {
                        let start = next.fetch_add(BATCH, Relaxed);
                        if start >= jobs.len() {
                            break;
                        }
                        let chunk = &jobs[start..(start + BATCH).min(jobs.len())];
                        let files: Vec<Option<Vec<u8>>> = chunk
                            .iter()
                            .map(|(input, _)| match run.stages.time(Stage::Read, || std::fs::read(input)) {
                                Ok(b) => Some(b),
                                Err(e) => {
                                    run.fail(input, format!("cannot read: {e}"));
                                    None
                                }
                            })
                            .collect();
                        let readable: Vec<usize> = (0..chunk.len()).filter(|&i| files[i].is_some()).collect();
                        let bytes: Vec<&[u8]> =
                            readable.iter().map(|&i| files[i].as_deref().expect("readable")).collect();
                        let decoded = run.stages.time(Stage::Decode, || {
                            let r = jpeg.decode_batch_rgb(&s, &bytes);
                            let _ = s.synchronize();
                            r
                        });
                        let decoded = match decoded {
                            Ok(d) => d,
                            Err(e) => {
                                for &i in &readable {
                                    run.fail(&chunk[i].0, &e);
                                }
                                continue;
                            }
                        };
                        for ((&i, img), raw) in readable.iter().zip(decoded).zip(&bytes) {
                            let (input, out) = &chunk[i];
                            // What nvJPEG refuses (progressive files on the hardware decoder,
                            // CMYK) goes through the CPU decoder, which also names the problem
                            // of a file neither can read.
                            let img = img.or_else(|_| {
                                let cpu = run.stages.time(Stage::Decode, || cuimg::io::decode_rgb(raw, input))?;
                                s.upload(&cpu.view())
                            });
                            let result = img.and_then(|src| {
                                let mut dst = s.alloc::<Q>(src.width(), src.height())?;
                                run.stages.time(Stage::Kernel, || op(&s, &src, &mut dst))?;
                                Ok(dst)
                            });
                            let dst = match result {
                                Ok(d) => d,
                                Err(e) => {
                                    run.fail(input, e);
                                    continue;
                                }
                            };
                            match format(out) {
                                Format::Jpeg { quality } => {
                                    match run.stages.time(Stage::Encode, || Q::encode_on_gpu(&jpeg, &s, &dst, quality))
                                    {
                                        Err(e) => run.fail(out, e),
                                        Ok(bytes) => match run
                                            .stages
                                            .time(Stage::Write, || inputs::write_atomically(out, &bytes))
                                        {
                                            Err(e) => run.fail(out, format!("cannot write: {e}")),
                                            Ok(()) => run.ok(),
                                        },
                                    }
                                }
                                png => match run.stages.time(Stage::Download, || s.download(&dst)) {
                                    Err(e) => run.fail(out, e),
                                    Ok(img) => save(&img, out, png, run),
                                },
                            }
                        }
                    }
                });
            }
        }
    });
}
