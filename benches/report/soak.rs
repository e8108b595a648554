//! The soak section: read from `perf-reports/soak.json`, which `cargo bench --bench soak
//! --features http` writes (every example server for 10 minutes under mixed valid, invalid,
//! oversized and truncated traffic, RSS sampled once a second). The report shows the latest
//! soak run as it was, with its date and git head: the soak is too long to run inside the
//! report itself.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The part of `soak.json` the report shows.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct Soak {
    pub(crate) date: String,
    pub(crate) git_head: String,
    pub(crate) seconds: u64,
    pub(crate) warmup_seconds: u64,
    pub(crate) servers: Vec<SoakServer>,
}

/// One server's line of the soak.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct SoakServer {
    pub(crate) name: String,
    pub(crate) connections: String,
    pub(crate) messages_sent: u64,
    pub(crate) requests: u64,
    pub(crate) answers: u64,
    pub(crate) error_answers: u64,
    pub(crate) unanswered: u64,
    pub(crate) rss_start_kib: Option<u64>,
    pub(crate) rss_peak_kib: u64,
    pub(crate) rss_end_kib: Option<u64>,
    pub(crate) median_growth_percent: Option<f64>,
    /// RSS once a second, KiB (the trend is computed from them, so that a soak.json written
    /// before the soak bench recorded it still has one).
    #[serde(default)]
    pub(crate) rss_samples_kib: Vec<u64>,
    /// The median of the last quarter of the samples after the warm-up minus that of the
    /// second quarter, KiB (absent from soak.json files written before it was recorded).
    #[serde(default)]
    pub(crate) quarter_rise_kib: Option<i64>,
    /// The peak's bound the soak stated, KiB.
    #[serde(default)]
    pub(crate) peak_bound_kib: Option<u64>,
}

impl SoakServer {
    /// The rise of the least-squares line through the samples after the warm-up, percent.
    fn fitted_growth_percent(&self, warmup_seconds: u64) -> Option<f64> {
        let after = self.rss_samples_kib.get(warmup_seconds as usize..)?;
        crate::common::trend::fitted_growth_percent(after)
    }

    /// The same rise over the second half of the run only: whether memory still goes up once
    /// it has had half the run to reach its working set (for information; the aim is on
    /// [`fitted_growth_percent`](SoakServer::fitted_growth_percent)).
    fn second_half_growth_percent(&self) -> Option<f64> {
        let samples = &self.rss_samples_kib;
        crate::common::trend::fitted_growth_percent(samples.get(samples.len() / 2..)?)
    }
}

impl Soak {
    /// The latest soak run, if there is one that reads.
    pub(crate) fn load(reports: &Path) -> Option<Soak> {
        let text = std::fs::read_to_string(reports.join("soak.json")).ok()?;
        match serde_json::from_str(&text) {
            Ok(soak) => Some(soak),
            Err(error) => {
                println!("soak.json does not read ({error}); the soak section is left out");
                None
            }
        }
    }

    /// The markdown table.
    pub(crate) fn table(&self) -> String {
        let mut s = String::from(
            "| server | connections | messages | requests | answers | error answers | unanswered | RSS after warm-up | peak | end | growth (medians) | growth (fitted) | growth (fitted, second half) |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        );
        let mib =
            |kib: Option<u64>| kib.map_or("–".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
        for server in &self.servers {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                server.name,
                server.connections,
                server.messages_sent,
                server.requests,
                server.answers,
                server.error_answers,
                server.unanswered,
                mib(server.rss_start_kib),
                mib(Some(server.rss_peak_kib)),
                mib(server.rss_end_kib),
                server
                    .median_growth_percent
                    .map_or("–".to_owned(), |g| format!("{g:+.1}%")),
                server
                    .fitted_growth_percent(self.warmup_seconds)
                    .map_or("–".to_owned(), |g| format!("{g:+.1}%")),
                server
                    .second_half_growth_percent()
                    .map_or("–".to_owned(), |g| format!("{g:+.1}%")),
            ));
        }
        s
    }

    /// The aims on memory, per server (issue 27): the median RSS of the run's last quarter at
    /// most 1 MiB above that of its second quarter (memory levels off), the peak within the
    /// bound the soak states (see perf-reports/soak.md), and no request left unanswered.
    pub(crate) fn targets(&self) -> Vec<crate::targets::Target> {
        self.servers
            .iter()
            .map(|server| {
                let fitted = server.fitted_growth_percent(self.warmup_seconds);
                let levels_off = server.quarter_rise_kib.is_some_and(|rise| rise <= 1024);
                let peak_ok = server.peak_bound_kib.is_some_and(|bound| server.rss_peak_kib <= bound);
                crate::targets::Target {
                    target: format!(
                        "soak ({} s, {}): {}: last quarter's median RSS ≤ 1 MiB above the second's, peak within its stated bound, no request unanswered",
                        self.seconds, self.date, server.name
                    ),
                    measured: format!(
                        "Q4 − Q2 {} KiB, peak {} KiB against {} KiB; fitted growth {} (medians {}; second half alone {}), {} of {} requests unanswered",
                        server.quarter_rise_kib.map_or("unknown".to_owned(), |rise| format!("{rise:+}")),
                        server.rss_peak_kib,
                        server.peak_bound_kib.map_or("unknown".to_owned(), |bound| bound.to_string()),
                        fitted.map_or("unknown".to_owned(), |g| format!("{g:+.1}%")),
                        server
                            .median_growth_percent
                            .map_or("unknown".to_owned(), |g| format!("{g:+.1}%")),
                        server
                            .second_half_growth_percent()
                            .map_or("unknown".to_owned(), |g| format!("{g:+.1}%")),
                        server.unanswered,
                        server.requests
                    ),
                    met: Some(server.unanswered == 0 && levels_off && peak_ok),
                }
            })
            .collect()
    }
}
