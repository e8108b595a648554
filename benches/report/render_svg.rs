//! Output: the SVG charts (speed-up per workload, latency percentiles).

use crate::common::peers;
use std::fmt::Write as _;

use crate::{measure::*, render_text::*};

pub(crate) const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

pub(crate) fn svg_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Bars of "rpcwire is N× faster than this peer" per workload, on a log2 axis around 1×.
pub(crate) fn speedup_svg(results: &[WorkloadResult]) -> String {
    let peers: Vec<&str> = parser_names(results)
        .into_iter()
        .filter(|p| !peers::is_rpcwire(p))
        .collect();
    let values: Vec<f64> = results
        .iter()
        .flat_map(|w| peers.iter().map(|p| w.get(p).ns_per_msg / w.rpcwire().ns_per_msg))
        .collect();
    let lo = values.iter().copied().fold(0.5f64, f64::min).log2().floor();
    let hi = values.iter().copied().fold(4.0f64, f64::max).log2().ceil();
    let (width, height) = (960.0, 440.0);
    let (left, right, top, bottom) = (60.0, 200.0, 40.0, 50.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let y = |v: f64| top + plot_h * (hi - v.log2()) / (hi - lo);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">rpcwire parse speed-up over each peer (peer ns/msg ÷ rpcwire ns/msg, log scale)</text>"#,
        left + plot_w / 2.0
    );
    let mut e = lo;
    while e <= hi {
        let v = 2f64.powf(e);
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}×</text>"##,
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            if v < 1.0 {
                format!("{v}")
            } else {
                format!("{v:.0}")
            }
        );
        e += 1.0;
    }
    let groups = results.len() as f64;
    let group_w = plot_w / groups;
    let bar_w = (group_w * 0.8) / peers.len() as f64;
    for (gi, w) in results.iter().enumerate() {
        let gx = left + group_w * gi as f64 + group_w * 0.1;
        for (pi, p) in peers.iter().enumerate() {
            let v = w.get(p).ns_per_msg / w.rpcwire().ns_per_msg;
            let x = gx + bar_w * pi as f64;
            let (y0, y1) = (y(1.0), y(v));
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} {:.2}×</title></rect>"#,
                y0.min(y1),
                bar_w * 0.9,
                (y0 - y1).abs().max(1.0),
                PALETTE[pi % PALETTE.len()],
                w.name,
                svg_escape(p),
                v
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="9">{v:.1}</text>"#,
                x + bar_w * 0.45,
                if v >= 1.0 { y1 - 3.0 } else { y1 + 10.0 }
            );
        }
        // With many workloads, every other label one line lower, so that long names do not
        // run into each other.
        let (size, drop) = if groups > 8.0 {
            (11, 12.0 * (gi % 2) as f64)
        } else {
            (13, 0.0)
        };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{size}">{}</text>"#,
            left + group_w * (gi as f64 + 0.5),
            top + plot_h + 18.0 + drop,
            w.name
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        left + plot_w,
        y(1.0),
        y(1.0)
    );
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#c00" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" fill="#c00" font-size="11">target 3×</text>"##,
        left + plot_w,
        y(3.0),
        y(3.0),
        left + 4.0,
        y(3.0) - 4.0
    );
    for (pi, p) in peers.iter().enumerate() {
        let ly = top + 30.0 + 20.0 * pi as f64;
        let lx = left + plot_w + 20.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}">{}</text>"#,
            ly - 10.0,
            PALETTE[pi % PALETTE.len()],
            lx + 18.0,
            ly,
            svg_escape(p)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">above 1×: rpcwire is faster; below: the peer is faster</text>"#,
        left + plot_w / 2.0,
        height - 8.0
    );
    s.push_str("</svg>\n");
    s
}

/// p50 / p99 / p99.9 of rpcwire and of the fastest peer per workload, log10 ns axis.
pub(crate) fn latency_svg(results: &[WorkloadResult]) -> String {
    let series: Vec<(&WorkloadResult, [&Measured; 2])> =
        results.iter().map(|w| (w, [w.rpcwire(), w.fastest()])).collect();
    let all: Vec<f64> = series
        .iter()
        .flat_map(|(_, ms)| ms.iter().filter_map(|m| m.latency.as_ref()))
        .flat_map(|l| [l.p50_ns, l.p99_ns, l.p999_ns])
        .map(|v| v.max(1) as f64)
        .collect();
    let lo = all
        .iter()
        .copied()
        .fold(1e9f64, f64::min)
        .log10()
        .floor()
        .min(2.0);
    let hi = all.iter().copied().fold(1.0f64, f64::max).log10().ceil().max(3.0);
    let (width, height) = (960.0, 440.0);
    let (left, right, top, bottom) = (70.0, 210.0, 40.0, 60.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let y = |v: f64| top + plot_h * (hi - v.max(1.0).log10()) / (hi - lo);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">Latency per message: rpcwire vs the fastest peer (ns, log scale)</text>"#,
        left + plot_w / 2.0
    );
    let mut e = lo;
    while e <= hi {
        let v = 10f64.powf(e);
        let label = if v >= 1e6 {
            format!("{:.0} ms", v / 1e6)
        } else if v >= 1e3 {
            format!("{:.0} µs", v / 1e3)
        } else {
            format!("{v:.0} ns")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            left + plot_w,
            y(v),
            y(v),
            left - 6.0,
            y(v) + 4.0
        );
        e += 1.0;
    }
    let shades = [
        ["#9ecae1", "#4292c6", "#08519c"],
        ["#fdd0a2", "#fd8d3c", "#d94801"],
    ];
    let group_w = plot_w / series.len() as f64;
    let bar_w = group_w * 0.8 / 6.0;
    for (gi, (w, ms)) in series.iter().enumerate() {
        let gx = left + group_w * gi as f64 + group_w * 0.1;
        for (si, m) in ms.iter().enumerate() {
            let Some(l) = &m.latency else { continue };
            for (qi, (q, v)) in [("p50", l.p50_ns), ("p99", l.p99_ns), ("p99.9", l.p999_ns)]
                .into_iter()
                .enumerate()
            {
                let x = gx + bar_w * (si * 3 + qi) as f64;
                let yy = y(v as f64);
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{yy:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {} {q}: {v} ns</title></rect>"#,
                    bar_w * 0.9,
                    (top + plot_h - yy).max(1.0),
                    shades[si][qi],
                    w.name,
                    svg_escape(m.parser)
                );
            }
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">vs {}</text>"#,
            left + group_w * (gi as f64 + 0.5),
            top + plot_h + 18.0,
            w.name,
            left + group_w * (gi as f64 + 0.5),
            top + plot_h + 32.0,
            svg_escape(w.fastest_peer)
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#c00" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" fill="#c00">1 µs (W2 p99.9 target)</text>"##,
        left + plot_w,
        y(1000.0),
        y(1000.0),
        left + plot_w + 6.0,
        y(1000.0) + 4.0
    );
    let legend = [
        ("rpcwire p50", shades[0][0]),
        ("rpcwire p99", shades[0][1]),
        ("rpcwire p99.9", shades[0][2]),
        ("fastest peer p50", shades[1][0]),
        ("fastest peer p99", shades[1][1]),
        ("fastest peer p99.9", shades[1][2]),
    ];
    for (i, (label, color)) in legend.iter().enumerate() {
        let ly = top + 40.0 + 20.0 * i as f64;
        let lx = left + plot_w + 20.0;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="12" fill="{color}"/><text x="{}" y="{:.1}">{label}</text>"#,
            ly - 10.0,
            lx + 18.0,
            ly
        );
    }
    s.push_str("</svg>\n");
    s
}
