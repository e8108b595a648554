//! Every kernel against the byte-at-a-time reference.

use proptest::prelude::*;

use super::twins as kernels;

fn check_all(bytes: &[u8]) {
    let expected = kernels::scalar(bytes);
    assert_eq!(kernels::swar(bytes), expected, "swar on {bytes:?}");
    assert_eq!(kernels::sse2(bytes), expected, "sse2 on {bytes:?}");
    if let Some(found) = kernels::avx2(bytes) {
        assert_eq!(found, expected, "avx2 on {bytes:?}");
    }
    assert_eq!(kernels::selected(bytes), expected, "selected on {bytes:?}");
    if let Some(chunk) = bytes.first_chunk::<16>() {
        let (fast, portable) = kernels::attention16(chunk);
        assert_eq!(fast, portable, "attention16 on {chunk:?}");
        let first = if portable == 0 {
            16
        } else {
            portable.trailing_zeros() as usize
        };
        assert_eq!(first, expected.min(16), "attention16 vs scalar on {chunk:?}");
    }
    if let Some(block) = bytes.first_chunk::<64>() {
        let (baseline, avx2, reference) = kernels::attention64(block);
        assert_eq!(baseline, reference, "attention64 (baseline) on {block:?}");
        if let Some(avx2) = avx2 {
            assert_eq!(avx2, reference, "attention64 (AVX2) on {block:?}");
        }
        let first = if reference == 0 {
            64
        } else {
            reference.trailing_zeros() as usize
        };
        assert_eq!(first, expected.min(64), "attention64 vs scalar on {block:?}");
    }
}

#[test]
fn every_special_byte_at_every_position() {
    let specials = [b'"', b'\\', 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xff];
    // Under Miri (thousands of times slower) the lengths at the kernels' edges only.
    let lengths: Vec<usize> = if cfg!(miri) {
        vec![0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64]
    } else {
        (0..100).collect()
    };
    for len in lengths {
        let mut plain: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        check_all(&plain);
        for pos in 0..len {
            for &special in &specials {
                let saved = plain[pos];
                plain[pos] = special;
                check_all(&plain);
                plain[pos] = saved;
            }
        }
    }
}

#[test]
fn delete_and_space_are_plain() {
    assert_eq!(kernels::scalar(b" \x7f~"), 3);
    check_all(b" \x7f~ \x7f~ \x7f~ \x7f~ \x7f~ \x7f~ \x7f~ \x7f~ \x7f~ \x7f~ \x7f~");
}

// Not under Miri: proptest's case persistence reads and writes files, which Miri's isolation
// refuses; the exhaustive tests above cover the same kernels there.
proptest! {
    #[test]
    #[cfg_attr(miri, ignore)]
    fn kernels_agree_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_all(&bytes);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn kernels_agree_on_mostly_plain_bytes(
        len in 0usize..300,
        special_at in proptest::collection::vec((0usize..300, any::<u8>()), 0..3),
    ) {
        let mut bytes = vec![b'x'; len];
        for (pos, byte) in special_at {
            if pos < len {
                bytes[pos] = byte;
            }
        }
        check_all(&bytes);
    }
}
