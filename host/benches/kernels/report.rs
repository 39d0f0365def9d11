//! The benchmark's results as a table, markdown for docs/BENCHMARKS.md and two charts, and
//! the charts again from a results file (`--replot`).

use plotters::prelude::*;

use super::*;

pub(super) fn print_table(rows: &[Row], copy: f64) {
    println!(
        "\n{:<20} {:>6} {:>9} {:>10} {:>8} {:>7} {:>9} {:>11} {:>11}",
        "op", "size", "data", "GPU ms", "GB/s", "of copy", "of same", "CPU serial", "CPU rayon"
    );
    for r in rows {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        println!(
            "{:<20} {:>6} {:>9} {:>10.4} {:>8.0} {:>7.2} {:>9.2} {:>11} {:>11}",
            r.op,
            r.size,
            r.data,
            r.gpu_ms,
            r.gbps(),
            r.gbps() / copy,
            r.gbps() / r.same_size_copy_gbps,
            f(r.cpu_serial_ms),
            f(r.cpu_rayon_ms)
        );
    }
}

pub(super) fn markdown(gpu: &Gpu, rows: &[Row], copy: f64, e2e: &BTreeMap<&str, f64>) -> String {
    let mut m = format!(
        "Device: {} (compute capability {}.{}, {} SMs). Copy bandwidth (1 GiB device-to-device, read + write): **{copy:.0} GB/s**. CPU baselines: {} rayon threads.\n\n",
        gpu.name(),
        gpu.compute_capability().0,
        gpu.compute_capability().1,
        gpu.multiprocessors(),
        rayon::current_num_threads()
    );
    m += "| op | size | data | GPU median ms | GPU min ms | bytes moved | GB/s | fraction of copy | same-size copy GB/s | fraction of same-size copy | CPU serial ms | CPU rayon ms | image crate ms | speed-up vs serial |\n";
    m += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        m += &format!(
            "| {} | {} | {} | {:.4} | {:.4} | {} | {:.0} | {:.2} | {:.0} | {:.2} | {} | {} | {} | {} |\n",
            r.op,
            r.size,
            r.data,
            r.gpu_ms,
            r.gpu_min_ms,
            r.bytes,
            r.gbps(),
            r.gbps() / copy,
            r.same_size_copy_gbps,
            r.gbps() / r.same_size_copy_gbps,
            f(r.cpu_serial_ms),
            f(r.cpu_rayon_ms),
            f(r.image_crate_ms),
            r.cpu_serial_ms.map_or("-".into(), |c| format!("{:.0}x", c / r.gpu_ms))
        );
    }
    m += "\nEnd to end, one 3840x2160 RGB PNG to a gray PNG (ms):\n\n| stage | ms |\n|---|---:|\n";
    for (k, v) in e2e {
        m += &format!("| {k} | {v:.3} |\n");
    }
    m
}

fn color(op: &str) -> RGBColor {
    match op {
        "grayscale RGB8" => RGBColor(31, 119, 180),
        "grayscale RGBA8" => RGBColor(174, 199, 232),
        "histogram" => RGBColor(255, 127, 14),
        "equalize" => RGBColor(44, 160, 44),
        "LUT apply" => RGBColor(214, 39, 40),
        "gather f32 identity" => RGBColor(148, 103, 189),
        "grayscale+histogram fused" => RGBColor(23, 190, 207),
        "grayscale then histogram" => RGBColor(158, 218, 229),
        _ => RGBColor(140, 86, 75),
    }
}

fn ops(rows: &[Row]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for r in rows {
        if !v.contains(&r.op) {
            v.push(r.op);
        }
    }
    v
}

/// Time against image size, log-log: GPU (solid) and CPU serial / rayon (dashed), random data.
pub(super) fn chart_time(rows: &[Row], path: &std::path::Path) {
    let root = SVGBackend::new(path, (1100, 700)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let random: Vec<&Row> = rows.iter().filter(|r| r.data == "random").collect();
    let ymin = random.iter().map(|r| r.gpu_ms).fold(f64::MAX, f64::min) * 0.5;
    let ymax = random.iter().filter_map(|r| r.cpu_serial_ms).fold(1.0, f64::max) * 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Time against image size (random data): GPU solid, CPU serial dashed, CPU rayon dotted",
            ("sans-serif", 20),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((1.5f64..40.0).log_scale(), (ymin..ymax).log_scale())
        .unwrap();
    chart.configure_mesh().x_desc("megapixels").y_desc("milliseconds (log)").draw().unwrap();
    for op in ops(rows) {
        let c = color(op);
        let pts = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            random.iter().filter(|r| r.op == op).filter_map(|r| f(r).map(|v| (r.megapixels, v))).collect()
        };
        let gpu = pts(&|r| Some(r.gpu_ms));
        chart
            .draw_series(LineSeries::new(gpu.clone(), c.stroke_width(3)))
            .unwrap()
            .label(op)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(gpu.iter().map(|&p| Circle::new(p, 4, c.filled()))).unwrap();
        chart.draw_series(DashedLineSeries::new(pts(&|r| r.cpu_serial_ms), 8, 5, c.stroke_width(2))).unwrap();
        chart.draw_series(DashedLineSeries::new(pts(&|r| r.cpu_rayon_ms), 2, 4, c.stroke_width(2))).unwrap();
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .unwrap();
    root.present().unwrap();
}

/// The targets at 8K, as fractions of the copy bandwidth: (op, data kind or any).
const TARGETS: [(&str, &str, f64); 5] = [
    ("grayscale RGB8", "", 0.90),
    ("histogram", "random", 0.55),
    ("histogram", "constant", 0.50),
    ("LUT apply", "", 0.85),
    ("gather f32 identity", "", 0.80),
];

/// Fraction of the copy bandwidth per op at the largest size, one bar per data kind, with
/// the targets as black marks.
pub(super) fn chart_fraction(rows: &[Row], copy: f64, path: &std::path::Path) {
    let root = SVGBackend::new(path, (1200, 620)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let largest = rows.iter().map(|r| r.megapixels).fold(0.0, f64::max);
    let big: Vec<&Row> = rows.iter().filter(|r| r.megapixels == largest).collect();
    let names = ops(rows);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Fraction of copy bandwidth ({copy:.0} GB/s) at {} ({largest:.0} MP); bars: random, photo, constant; black: target", big[0].size),
            ("sans-serif", 20),
        )
        .margin(20)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..names.len() as f64, -0.12f64..1.1)
        .unwrap();
    chart.configure_mesh().disable_x_mesh().disable_x_axis().y_desc("effective GB/s / copy GB/s").draw().unwrap();
    for (i, op) in names.iter().enumerate() {
        let label = Text::new(op.to_string(), (i as f64 + 0.08, -0.05), ("sans-serif", 15).into_font());
        chart.draw_series(std::iter::once(label)).unwrap();
        for (j, data) in ["random", "photo", "constant"].iter().enumerate() {
            let x0 = i as f64 + 0.1 + j as f64 * 0.27;
            if let Some(r) = big.iter().find(|r| r.op == *op && r.data == *data) {
                let c = color(op).mix([1.0, 0.7, 0.45][j]);
                chart
                    .draw_series(std::iter::once(Rectangle::new([(x0, 0.0), (x0 + 0.25, r.gbps() / copy)], c.filled())))
                    .unwrap();
            }
            for (_, _, t) in TARGETS.iter().filter(|(o, d, _)| o == op && (d.is_empty() || d == data)) {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x0 - 0.01, *t), (x0 + 0.26, *t)],
                        BLACK.stroke_width(3),
                    )))
                    .unwrap();
            }
        }
    }
    root.present().unwrap();
}

/// `--replot FILE`: redraws the charts from a `bench.json` (no GPU needed).
pub(super) fn replot(json_path: &std::path::Path, out: &std::path::Path) {
    let text = std::fs::read_to_string(json_path).unwrap_or_else(|e| panic!("{}: {e}", json_path.display()));
    let v: Value = serde_json::from_str(&text).expect("bench.json");
    let leak = |s: &Value| -> &'static str { Box::leak(s.as_str().unwrap_or("").to_string().into_boxed_str()) };
    let rows: Vec<Row> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| Row {
            op: leak(&r["op"]),
            size: leak(&r["size"]),
            megapixels: r["megapixels"].as_f64().unwrap_or(0.0),
            data: leak(&r["data"]),
            gpu_ms: r["gpu_median_ms"].as_f64().unwrap_or(0.0),
            gpu_min_ms: r["gpu_min_ms"].as_f64().unwrap_or(0.0),
            bytes: r["bytes"].as_u64().unwrap_or(0),
            cpu_serial_ms: r["cpu_serial_ms"].as_f64(),
            cpu_rayon_ms: r["cpu_rayon_ms"].as_f64(),
            image_crate_ms: r["image_crate_ms"].as_f64(),
            same_size_copy_gbps: r["same_size_copy_gbps"].as_f64().unwrap_or(0.0),
        })
        .collect();
    let copy = v["copy_gbps"].as_f64().expect("copy_gbps");
    chart_time(&rows, &out.join("time_vs_size.svg"));
    chart_fraction(&rows, copy, &out.join("fraction_of_copy.svg"));
    println!("redrew {}/time_vs_size.svg and fraction_of_copy.svg from {}", out.display(), json_path.display());
}
