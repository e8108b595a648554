//! The soak's growth figure (`benches/common/trend.rs`, shared by the soak bench and the
//! report): a steady rise is measured as that rise, a swing around a level as no growth.

#[path = "../benches/common/trend.rs"]
mod trend;

use trend::fitted_growth_percent;

#[test]
fn a_line_grows_by_its_rise() {
    let line: Vec<u64> = (0..101).map(|x| 1000 + x).collect();
    assert!((fitted_growth_percent(&line).unwrap() - 10.0).abs() < 1e-9);
    let falling: Vec<u64> = (0..101).map(|x| 2000 - 2 * x).collect();
    assert!((fitted_growth_percent(&falling).unwrap() + 10.0).abs() < 1e-9);
}

#[test]
fn a_swing_around_a_level_is_no_growth() {
    // ±10%, in half-minute stretches of 30 samples, alternating.
    let level: Vec<u64> = (0..600)
        .map(|x| if (x / 30) % 2 == 0 { 900 } else { 1100 })
        .collect();
    let growth = fitted_growth_percent(&level).unwrap();
    // Under the 5% aim, though the phase (low first, high last) leans it: about 3% here.
    assert!(growth.abs() < 5.0, "{growth}");
}

#[test]
fn too_few_samples_have_no_trend() {
    assert_eq!(fitted_growth_percent(&[1, 2, 3]), None);
    assert_eq!(fitted_growth_percent(&[0; 20]), None);
}
