//! A server process's resident memory, read from `/proc/PID/status` once a second: what it
//! was after the warm-up, its peak, its last value, and the growth between the two.

/// One field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`); `None` once the process is
/// gone.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The resident memory samples of one process.
#[derive(Clone, Debug, Default)]
pub struct RssTrack {
    /// The first sample at or after the warm-up, KiB.
    pub after_warmup: Option<u64>,
    /// How many samples were taken before the warm-up ended.
    pub warmup_samples: usize,
    /// The largest sample of the whole run (warm-up included), KiB.
    pub peak: u64,
    /// The last sample, KiB.
    pub last: Option<u64>,
    /// Every sample, KiB, one a second.
    pub samples: Vec<u64>,
    /// The kernel's peak resident memory (VmHWM) at the last sample, KiB.
    pub high_water_mark: Option<u64>,
}

impl RssTrack {
    /// Samples `pid`'s resident memory; `warmed_up` says whether the warm-up is over.
    /// `false` if the process is gone.
    pub fn sample(&mut self, pid: u32, warmed_up: bool) -> bool {
        let Some(rss) = status_kib(pid, "VmRSS") else {
            return false;
        };
        if !warmed_up {
            self.warmup_samples += 1;
        } else if self.after_warmup.is_none() {
            self.after_warmup = Some(rss);
        }
        self.peak = self.peak.max(rss);
        self.last = Some(rss);
        self.samples.push(rss);
        self.high_water_mark = status_kib(pid, "VmHWM").or(self.high_water_mark);
        true
    }

    /// Growth from after the warm-up to the last sample, in percent.
    pub fn growth_percent(&self) -> Option<f64> {
        let (start, end) = (self.after_warmup?, self.last?);
        (start > 0).then(|| (end as f64 - start as f64) / start as f64 * 100.0)
    }

    /// A steadier growth figure than [`growth_percent`](RssTrack::growth_percent), whose two
    /// single samples move with whatever is in flight at that second: the median of the last
    /// tenth of the samples after the warm-up against the median of the first tenth (at
    /// least 3 samples each), in percent.
    pub fn median_growth_percent(&self) -> Option<f64> {
        let after = self.samples.get(self.warmup_samples..)?;
        let tenth = (after.len() / 10).max(3);
        if after.len() < 2 * tenth {
            return None;
        }
        let (first, last) = (median(&after[..tenth]), median(&after[after.len() - tenth..]));
        (first > 0).then(|| (last as f64 - first as f64) / first as f64 * 100.0)
    }
}

impl RssTrack {
    /// Whether memory levels off: the median of the last quarter of the samples after the
    /// warm-up minus the median of the second quarter, KiB (negative when it fell). The aim
    /// is on this figure: at most [`MAX_QUARTER_RISE_KIB`](crate::report::MAX_QUARTER_RISE_KIB).
    pub fn quarter_rise_kib(&self) -> Option<i64> {
        let after = self.samples.get(self.warmup_samples..)?;
        let quarter = after.len() / 4;
        if quarter < 3 {
            return None;
        }
        let second = median(&after[quarter..2 * quarter]);
        let last = median(&after[after.len() - quarter..]);
        Some(last as i64 - second as i64)
    }

    /// The median of the warm-up's last quarter of samples, KiB: the process with its
    /// connections open and traffic flowing, before the measured run — what the peak
    /// bound is counted from.
    pub fn warm_base_kib(&self) -> Option<u64> {
        let warm = self.samples.get(..self.warmup_samples)?;
        let quarter = (warm.len() / 4).max(1);
        (warm.len() >= quarter).then(|| median(&warm[warm.len() - quarter..]))
    }

    /// The trend of the samples after the warm-up: the rise of their least-squares line, in
    /// percent of where it starts (see `benches/common/trend.rs`). The aim is on this figure.
    pub fn fitted_growth_percent(&self) -> Option<f64> {
        crate::trend::fitted_growth_percent(self.samples.get(self.warmup_samples..)?)
    }
}

/// The median of `samples` (not empty).
fn median(samples: &[u64]) -> u64 {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted[sorted.len() / 2]
}
