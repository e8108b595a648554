//! The soak's report: `perf-reports/soak.json` (one object), `perf-reports/soak.md` (a
//! table of the same), and a summary on stdout.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::environment;
use crate::ledger::{Counts, WINDOW};
use crate::servers::Outcome;
use crate::traffic::MAX_MESSAGE;

/// The aim on memory: the median of the last quarter of the samples after the warm-up at
/// most this many KiB above the median of the second quarter (memory levels off).
pub const MAX_QUARTER_RISE_KIB: i64 = 1024;

/// What a server may add to its warm base (see [`RssTrack::warm_base_kib`]) at its peak, KiB,
/// and why: each connection may hold at once its read buffer grown to a message over the
/// limit (2 × 64 KiB + slack, as `BytesMut` doubles), its write buffer and the answers in
/// flight (at most [`WINDOW`] of up to 60 KB each, ~1.9 MiB), and the allocator keeps freed
/// pages for a while (mimalloc: up to a 4 MiB segment per size class in use).
///
/// [`RssTrack::warm_base_kib`]: crate::memory::RssTrack::warm_base_kib
pub fn peak_allowance_kib(connections: u64) -> (u64, String) {
    let per_connection = 2 * 64 + 64 + 64 + (WINDOW as u64 * 60_000).div_ceil(1024);
    let allocator = 4 * 1024;
    let allowance = connections * per_connection + allocator;
    (
        allowance,
        format!(
            "{connections} connection(s) × {per_connection} KiB (read buffer 2 × 64 KiB, write buffer, \
             {WINDOW} answers of up to 60 KB in flight) + {allocator} KiB the allocator keeps"
        ),
    )
}

/// The whole report.
#[derive(Serialize)]
pub struct Report {
    /// When it ran (UTC, ISO 8601).
    pub date: String,
    /// `git rev-parse --short HEAD`.
    pub git_head: String,
    /// How long the traffic ran, s.
    pub seconds: u64,
    /// The warm-up (10% of the run, at least 5 s) after which `rss_start_kib` is taken, s.
    pub warmup_seconds: u64,
    /// Answers due at once per connection, at most.
    pub window: u32,
    /// The servers' size limit (`--max-frame`, `--max-body`), bytes.
    pub max_message_bytes: usize,
    /// The machine.
    pub machine: String,
    /// One entry per server.
    pub servers: Vec<ServerReport>,
}

/// Whether a server met the soak's aims.
#[derive(Serialize)]
pub struct Aims {
    /// The last quarter's median RSS at most [`MAX_QUARTER_RISE_KIB`] above the second's.
    pub levels_off: bool,
    /// The peak within the stated bound.
    pub peak_within_bound: bool,
    /// Every answer due came.
    pub no_unanswered: bool,
    /// Both.
    pub met: bool,
}

/// One server's line.
#[derive(Serialize)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// The command line it ran with.
    pub command: String,
    /// Its connections.
    pub connections: String,
    /// What was sent and answered.
    #[serde(flatten)]
    pub counts: Counts,
    /// The same by protocol (http_server: http and websocket).
    pub by_protocol: Vec<ProtocolCounts>,
    /// Resident memory after the warm-up, KiB.
    pub rss_start_kib: Option<u64>,
    /// The largest resident memory sampled during the run, KiB.
    pub rss_peak_kib: u64,
    /// Resident memory when the traffic stopped, KiB.
    pub rss_end_kib: Option<u64>,
    /// The kernel's peak resident memory (VmHWM) when the traffic stopped, KiB.
    pub vm_hwm_kib: Option<u64>,
    /// `(end - start) / start`, percent, from two single samples (for information: what is
    /// in flight at that second moves it by several MB).
    pub growth_percent: Option<f64>,
    /// The same from the medians of the first and the last tenth of the samples after the
    /// warm-up (at least 3 each), percent: less moved by what is in flight at one second, but
    /// still by the ±15% swing of half a minute against the next.
    pub median_growth_percent: Option<f64>,
    /// The rise of the least-squares line through all samples after the warm-up, percent of
    /// where it starts: where memory goes, not how it swings. The aim is on this figure.
    pub fitted_growth_percent: Option<f64>,
    /// The median of the last quarter of the samples after the warm-up minus that of the
    /// second quarter, KiB.
    pub quarter_rise_kib: Option<i64>,
    /// The peak's bound, KiB: the warm base plus the allowance.
    pub peak_bound_kib: Option<u64>,
    /// How the bound is made up.
    pub peak_bound_reason: String,
    /// Resident memory once a second, KiB.
    pub rss_samples_kib: Vec<u64>,
    /// How the process ended.
    pub exit: String,
    /// Whether the aims are met.
    pub aims: Aims,
    /// What went wrong, in words (the first few of each connection).
    pub notes: Vec<String>,
}

/// One protocol's counts on a server.
#[derive(Serialize)]
pub struct ProtocolCounts {
    /// "stdio", "http" or "websocket".
    pub protocol: &'static str,
    /// Its counts.
    #[serde(flatten)]
    pub counts: Counts,
}

impl ServerReport {
    /// The line of `outcome`.
    fn new(outcome: Outcome) -> ServerReport {
        let growth_percent = outcome.rss.growth_percent().map(round2);
        let median_growth_percent = outcome.rss.median_growth_percent().map(round2);
        let fitted_growth_percent = outcome.rss.fitted_growth_percent().map(round2);
        let quarter_rise_kib = outcome.rss.quarter_rise_kib();
        let levels_off = quarter_rise_kib.is_some_and(|rise| rise <= MAX_QUARTER_RISE_KIB);
        let connections: u64 = outcome
            .connections
            .split('+')
            .filter_map(|part| part.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        let (allowance, peak_bound_reason) = peak_allowance_kib(connections.max(1));
        let peak_bound_kib = outcome.rss.warm_base_kib().map(|base| base + allowance);
        let peak_ok = peak_bound_kib.is_some_and(|bound| outcome.rss.peak <= bound);
        let answered = outcome.counts.unanswered == 0;
        ServerReport {
            name: outcome.name,
            command: outcome.command,
            connections: outcome.connections,
            aims: Aims {
                levels_off,
                peak_within_bound: peak_ok,
                no_unanswered: answered,
                met: levels_off && peak_ok && answered,
            },
            counts: outcome.counts,
            by_protocol: outcome
                .by_protocol
                .into_iter()
                .map(|(protocol, counts)| ProtocolCounts { protocol, counts })
                .collect(),
            rss_start_kib: outcome.rss.after_warmup,
            rss_peak_kib: outcome.rss.peak,
            rss_end_kib: outcome.rss.last,
            vm_hwm_kib: outcome.rss.high_water_mark,
            growth_percent,
            median_growth_percent,
            fitted_growth_percent,
            quarter_rise_kib,
            peak_bound_kib,
            peak_bound_reason,
            rss_samples_kib: outcome.rss.samples,
            exit: outcome.exit,
            notes: outcome.notes,
        }
    }
}

impl Report {
    /// The report of a run of `seconds` (warm-up `warmup_seconds`) that came to `outcomes`.
    pub fn new(seconds: u64, warmup_seconds: u64, outcomes: Vec<Outcome>) -> Report {
        Report {
            date: environment::now_utc(),
            git_head: environment::git_head().unwrap_or_else(|| "unknown".to_owned()),
            seconds,
            warmup_seconds,
            window: WINDOW,
            max_message_bytes: MAX_MESSAGE,
            machine: environment::machine(),
            servers: outcomes.into_iter().map(ServerReport::new).collect(),
        }
    }

    /// Writes `soak.json` and `soak.md` into `directory`; the paths written.
    pub fn write(&self, directory: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(directory)?;
        let json_path = directory.join("soak.json");
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&json_path, json + "\n")?;
        let markdown_path = directory.join("soak.md");
        std::fs::write(&markdown_path, self.markdown())?;
        Ok(vec![json_path, markdown_path])
    }

    /// The markdown page.
    pub fn markdown(&self) -> String {
        let mut page = format!(
            "# Soak: the example servers under mixed traffic\n\n\
             `cargo bench --bench soak --features http -- --seconds {}` on {}, {} (git {}).\n\n\
             Each server is its own process, started as a user starts it, with a {} KiB limit, on \
             mimalloc built without transparent huge pages (the `no_thp` feature in Cargo.toml): \
             with them, which mimalloc asks the kernel for in its `madvise` mode, resident memory \
             moved in 2 MiB steps and was two to three times as large for the same traffic \
             (`perf-reports/soak-thp.md`, the run before this choice). Every \
             connection sends, for {} s, requests (every example method, `echo` up to 60 KB, unknown \
             methods, bad params), notifications, batches, invalid JSON, JSON that is not a request, \
             truncated messages and messages over the limit, with at most {} answers due at once. \
             Every request with an id must get exactly one answer with its id and the expected \
             result; unreadable messages get error answers with id `null` (over HTTP a message over \
             the limit gets 413, over WebSocket a close with 1009 and a new connection). \
             RSS is sampled once a second; \"start\" is after a warm-up of {} s (10% of the run, at \
             least 5 s), \"end\" when the traffic stops; \"growth\" compares those two single samples (for \
             information: what is in flight at one second moves it by several MB, either way); \
             \"growth of medians\" compares the medians of the first and the last tenth of the \
             samples after the warm-up (at least 3 each); \"fitted growth\" is the rise of the \
             least-squares line through all samples after the warm-up, in percent of where it \
             starts (half-minute medians swing by ±15% without going anywhere; the line says \
             where memory goes; for information). \"Q4 − Q2\" is the median of the last quarter of \
             the samples after the warm-up minus the median of the second quarter: whether memory \
             levels off. The peak's bound is the median of the warm-up's last quarter (connections \
             open, traffic flowing) plus, per connection, what it may hold at once (a read buffer \
             grown to a message over the limit, a write buffer, the answers in flight) and 4 MiB \
             the allocator may keep. Aims: Q4 − Q2 ≤ {MAX_QUARTER_RISE_KIB} KiB, the peak within \
             its bound, and no unanswered request.\n\n",
            self.seconds,
            self.machine,
            self.date,
            self.git_head,
            MAX_MESSAGE / 1024,
            self.seconds,
            WINDOW,
            self.warmup_seconds,
        );
        page.push_str(
            "| server | connections | messages | answers due | answers | error answers | unanswered | \
             other problems | reconnects | RSS start / peak / end (KiB) | growth | growth of medians | \
             fitted growth | Q4 − Q2 (KiB) | peak bound (KiB) | aims met |\n",
        );
        page.push_str(
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
        );
        for server in &self.servers {
            page.push_str(&table_row(server));
        }
        page.push_str(
            "\nOther problems: answers not due (unknown or repeated ids), wrong results or \
                       statuses, output that is not a JSON-RPC answer, broken connections.\n",
        );
        page.push_str(&self.details_markdown());
        page
    }

    /// Messages by kind, error codes, exits and notes, per server.
    fn details_markdown(&self) -> String {
        let mut details = String::from("\n## Details\n");
        for server in &self.servers {
            details.push_str(&format!("\n### {}\n\n`{}`\n\n", server.name, server.command));
            let kinds: Vec<String> = server
                .counts
                .messages_by_kind
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            let codes: Vec<String> = server
                .counts
                .error_codes
                .iter()
                .map(|(code, n)| format!("{code}: {n}"))
                .collect();
            details.push_str(&format!("- messages by kind: {}\n", kinds.join(", ")));
            details.push_str(&format!("- error answers by code: {}\n", codes.join(", ")));
            details.push_str(&format!(
                "- peak RSS (VmHWM): {}\n",
                optional(server.vm_hwm_kib.map(|kib| format!("{kib} KiB")))
            ));
            details.push_str(&format!(
                "- peak bound: {} KiB = warm base + {}\n",
                optional(server.peak_bound_kib),
                server.peak_bound_reason
            ));
            details.push_str(&format!("- process: {}\n", server.exit));
            for note in &server.notes {
                details.push_str(&format!("- {note}\n"));
            }
        }
        details
    }

    /// The summary printed at the end.
    pub fn summary(&self) -> String {
        let mut summary = format!(
            "soak: {} s, warm-up {} s, git {}\n",
            self.seconds, self.warmup_seconds, self.git_head
        );
        for server in &self.servers {
            let c = &server.counts;
            summary.push_str(&format!(
                "{}: {} messages, {} answers due, {} answers ({} errors), {} unanswered, {} other problems, \
                 {} reconnects; RSS {} / {} / {} KiB (start/peak/end), growth {} (medians {}, fitted {}), Q4 − Q2 {} KiB, peak bound {} KiB; aims {}\n",
                server.name,
                c.messages_sent,
                c.requests,
                c.answers,
                c.error_answers,
                c.unanswered,
                c.other_problems(),
                c.reconnects,
                optional(server.rss_start_kib),
                server.rss_peak_kib,
                optional(server.rss_end_kib),
                percent(server.growth_percent),
                percent(server.median_growth_percent),
                percent(server.fitted_growth_percent),
                optional(server.quarter_rise_kib),
                optional(server.peak_bound_kib),
                if server.aims.met { "met" } else { "NOT met" },
            ));
            for note in &server.notes {
                summary.push_str(&format!("    {note}\n"));
            }
        }
        summary
    }
}

/// One server's row of the markdown table.
fn table_row(server: &ServerReport) -> String {
    let c = &server.counts;
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {} | {} | {} | {} | {} | {} | {} |\n",
        server.name,
        server.connections,
        c.messages_sent,
        c.requests,
        c.answers,
        c.error_answers,
        c.unanswered,
        c.other_problems(),
        c.reconnects,
        optional(server.rss_start_kib),
        server.rss_peak_kib,
        optional(server.rss_end_kib),
        percent(server.growth_percent),
        percent(server.median_growth_percent),
        percent(server.fitted_growth_percent),
        optional(server.quarter_rise_kib.map(|rise| format!("{rise:+}"))),
        optional(server.peak_bound_kib),
        if server.aims.met { "yes" } else { "**no**" },
    )
}

/// `value` rounded to two decimals.
fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A signed percentage, or "n/a".
fn percent(value: Option<f64>) -> String {
    optional(value.map(|g| format!("{g:+.2}%")))
}

/// A value, or "n/a".
fn optional<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |v| v.to_string())
}
