//! The SIMD string-scanning kernels, and the tiered search built on them, agree with the
//! byte-at-a-time reference.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcwire::json::kernels::twins as kernels;

fuzz_target!(|data: &[u8]| {
    let expected = kernels::scalar(data);
    assert_eq!(kernels::swar(data), expected);
    assert_eq!(kernels::sse2(data), expected);
    if let Some(found) = kernels::avx2(data) {
        assert_eq!(found, expected);
    }
    assert_eq!(kernels::selected(data), expected);
    // The tiers the string grammar searches through, from a few starting points.
    for pos in [0, 1, 15, 16, 17, data.len() / 2, data.len().saturating_sub(3)] {
        let (tiered, reference) = kernels::next_attention(data, pos);
        assert_eq!(tiered, reference, "from {pos}");
    }
});
