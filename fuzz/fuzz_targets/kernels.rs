//! The SIMD string-scanning kernels agree with the byte-at-a-time reference.
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
});
