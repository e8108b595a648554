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
    // The 64-byte masks of a value walk's window, at a few offsets.
    for at in [0, 1, 31, 63] {
        if let Some(block) = data.get(at..).and_then(<[u8]>::first_chunk::<64>) {
            let (baseline, avx2, reference) = kernels::attention64(block);
            assert_eq!(baseline, reference, "baseline at {at}");
            assert_eq!(avx2.unwrap_or(reference), reference, "avx2 at {at}");
        }
    }
    // The structural pass tried for issue 16: AVX2 and the portable twin agree.
    if let Some(avx2) = kernels::stage_one_avx2(data) {
        assert_eq!(avx2, kernels::stage_one_portable(data));
    }
    // The tiers the string grammar searches through, from a few starting points.
    for pos in [0, 1, 15, 16, 17, data.len() / 2, data.len().saturating_sub(3)] {
        let (tiered, reference) = kernels::next_attention(data, pos);
        assert_eq!(tiered, reference, "from {pos}");
    }
});
