//! Growth of a sampled quantity over a run, as the trend of all its samples: the least-squares
//! line through them, its rise from the first to the last sample in percent of where it
//! starts. Shared by the soak bench (its verdict) and the report (the soak section).
//!
//! Resident memory moves by ±15% from one half minute to the next under the soak's mixed
//! traffic without going anywhere; comparing two stretches of samples measures that swing,
//! the line through all of them measures where memory goes.

/// The fitted growth of `samples` (equally spaced) in percent; `None` for fewer than 10
/// samples or a line that starts at or below zero.
pub fn fitted_growth_percent(samples: &[u64]) -> Option<f64> {
    if samples.len() < 10 {
        return None;
    }
    let n = samples.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = samples.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (x, &y) in samples.iter().enumerate() {
        let dx = x as f64 - mean_x;
        sxy += dx * (y as f64 - mean_y);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let start = mean_y - slope * mean_x;
    (start > 0.0).then(|| 100.0 * slope * (n - 1.0) / start)
}
