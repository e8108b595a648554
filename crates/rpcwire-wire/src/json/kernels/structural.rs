//! An experiment for issue 16, kept so that the report can measure it: the first stage of a
//! two-stage parser (simdjson's "stage 1") over a whole input. The parser does not use it.
//!
//! Each 64-byte block is classified into bitmasks (quote, backslash, operator `{}[]:,`,
//! whitespace, control byte, non-ASCII); escaped quotes are found from the runs of
//! backslashes, the bytes inside strings by a prefix XOR of the unescaped quotes (carried
//! across blocks), and the structural positions — operators and the starts of strings and
//! scalars outside strings — are counted. A two-stage parser would then walk those positions
//! (stage 2). The question the report asks of it: how long does this first stage alone take,
//! beside rpcwire's whole single-pass parse of the same input?
//!
//! Classification with AVX2 (`vpshufb` table lookups, as simdjson does) and the prefix XOR
//! with a carry-less multiply when the CPU has both; the portable twin classifies one byte at
//! a time and computes the prefix XOR by shifts. Both share the bit algebra and must agree
//! (tests, and the kernels fuzz target).

/// What the first stage finds in an input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageOne {
    /// Structural positions: operators, and the starts of strings and scalars, outside strings.
    pub structurals: u64,
    /// A control byte (below `0x20`) inside a string.
    pub control_in_string: bool,
    /// The input ends inside a string.
    pub ends_in_string: bool,
    /// A byte at or above `0x80` (a stage 1 would validate UTF-8 there; not measured).
    pub non_ascii: bool,
}

/// The classes of the 64 bytes of one block, a bit per byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    op: u64,
    whitespace: u64,
    control: u64,
    non_ascii: u64,
}

/// What carries from one block to the next.
#[derive(Clone, Copy, Debug, Default)]
struct Carry {
    /// The next block's first byte is escaped.
    escaped: u64,
    /// All ones when the block ended inside a string.
    in_string: u64,
    /// The block's last byte was a scalar byte other than a quote.
    scalar: u64,
}

/// `true` for `{`, `}`, `[`, `]`, `:` and `,` — and for 0x0C and 0x1A, which share the
/// classification's table entries and are errors outside strings anyway.
#[inline(always)]
fn is_op(byte: u8) -> bool {
    matches!(byte | 0x20, 0x7b | 0x7d | 0x2c | 0x3a)
}

#[inline(always)]
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// One byte at a time: the portable classification.
fn masks_portable(block: &[u8; 64]) -> Masks {
    let mut masks = Masks::default();
    for (i, &byte) in block.iter().enumerate() {
        let bit = 1u64 << i;
        let set = |mask: &mut u64, on: bool| *mask |= if on { bit } else { 0 };
        set(&mut masks.quote, byte == b'"');
        set(&mut masks.backslash, byte == b'\\');
        set(&mut masks.op, is_op(byte));
        set(&mut masks.whitespace, is_whitespace(byte));
        set(&mut masks.control, byte < 0x20);
        set(&mut masks.non_ascii, byte >= 0x80);
    }
    masks
}

/// The prefix XOR by shifts: bit `i` is the XOR of bits `0..=i`.
#[inline(always)]
fn prefix_xor_portable(mut bits: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        bits ^= bits << shift;
    }
    bits
}

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// The bytes escaped by a backslash (simdjson's branchless odd-run rule), updating the carry.
#[inline(always)]
fn escaped(backslash: u64, carry: &mut Carry) -> u64 {
    if backslash == 0 {
        return std::mem::take(&mut carry.escaped);
    }
    let backslash = backslash & !carry.escaped;
    let follows_escape = (backslash << 1) | carry.escaped;
    let odd_starts = backslash & !EVEN_BITS & !follows_escape;
    let (sequences, overflow) = odd_starts.overflowing_add(backslash);
    carry.escaped = u64::from(overflow);
    let invert = sequences << 1;
    (EVEN_BITS ^ invert) & follows_escape
}

/// The bit algebra of one block: its structural positions, and errors into `found`.
#[inline(always)]
fn block_structurals(
    masks: Masks,
    carry: &mut Carry,
    found: &mut StageOne,
    prefix_xor: impl Fn(u64) -> u64,
) -> u64 {
    let quote = masks.quote & !escaped(masks.backslash, carry);
    let in_string = prefix_xor(quote) ^ carry.in_string;
    carry.in_string = ((in_string as i64) >> 63) as u64;
    // The strings' contents and closing quotes (an opening quote is structural).
    let string_tail = in_string ^ quote;
    let scalar = !(masks.op | masks.whitespace);
    let nonquote_scalar = scalar & !quote;
    let follows_scalar = (nonquote_scalar << 1) | carry.scalar;
    carry.scalar = nonquote_scalar >> 63;
    let starts = scalar & !follows_scalar;
    found.control_in_string |= masks.control & in_string & !quote != 0;
    found.non_ascii |= masks.non_ascii != 0;
    (masks.op | starts) & !string_tail
}

/// Runs the first stage over `input` with `classify` and `prefix_xor`; the last partial
/// block is padded with spaces.
#[inline(always)]
fn stage_one_with(
    input: &[u8],
    classify: impl Fn(&[u8; 64]) -> Masks,
    prefix_xor: impl Fn(u64) -> u64 + Copy,
) -> StageOne {
    let mut found = StageOne::default();
    let mut carry = Carry::default();
    let mut blocks = input.chunks_exact(64);
    for block in &mut blocks {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[b' '; 64]);
        let structurals = block_structurals(classify(block), &mut carry, &mut found, prefix_xor);
        found.structurals += u64::from(structurals.count_ones());
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let mut last = [b' '; 64];
        last[..rest.len()].copy_from_slice(rest);
        let structurals = block_structurals(classify(&last), &mut carry, &mut found, prefix_xor);
        found.structurals += u64::from(structurals.count_ones());
    }
    found.ends_in_string = carry.in_string != 0;
    found
}

/// The portable twin.
pub(crate) fn stage_one_portable(input: &[u8]) -> StageOne {
    stage_one_with(input, masks_portable, prefix_xor_portable)
}

/// AVX2 and PCLMULQDQ when this CPU has both; `None` otherwise.
pub(crate) fn stage_one_avx2(input: &[u8]) -> Option<StageOne> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: both features were just detected.
            return Some(unsafe { x86::stage_one(input) });
        }
    }
    let _ = input;
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_shuffle_epi8, _mm_clmulepi64_si128,
        _mm_cvtsi128_si64, _mm_set1_epi8, _mm_set_epi64x,
    };

    use super::{stage_one_with, Masks, StageOne};

    /// Two 32-bit movemasks as one 64-bit mask.
    #[inline(always)]
    fn join(low: i32, high: i32) -> u64 {
        u64::from(low as u32) | (u64::from(high as u32) << 32)
    }

    #[target_feature(enable = "avx2")]
    fn masks(block: &[u8; 64]) -> Masks {
        let [low, high] = [&block[..32], &block[32..]];
        // SAFETY: each half is 32 readable bytes, `_mm256_loadu_si256` has no alignment
        // requirement, and this function is compiled for (and only called with) AVX2.
        unsafe {
            let halves = [
                _mm256_loadu_si256(low.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(high.as_ptr().cast::<__m256i>()),
            ];
            // Whitespace: the table holds each whitespace byte at its low nibble (a byte
            // with the high bit set looks up 0, which matches no such byte).
            let ws_table = _mm256_setr_epi8(
                b' ' as i8,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                b'\t' as i8,
                b'\n' as i8,
                0,
                0,
                b'\r' as i8,
                0,
                0,
                b' ' as i8,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                b'\t' as i8,
                b'\n' as i8,
                0,
                0,
                b'\r' as i8,
                0,
                0,
            );
            // Operators, looked up by `byte | 0x20`: `:` 0x3a, `[{` 0x7b, `,` 0x2c, `]}` 0x7d.
            let op_table = _mm256_setr_epi8(
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3a, 0x7b, 0x2c, 0x7d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0x3a, 0x7b, 0x2c, 0x7d, 0, 0,
            );
            let each = |v: __m256i| {
                let lowered = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
                [
                    _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8))),
                    _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8))),
                    _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(op_table, lowered), lowered)),
                    _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(ws_table, v), v)),
                    // Signed: 0x20 > byte for 0x00..=0x1f and for 0x80..=0xff.
                    _mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v)),
                    _mm256_movemask_epi8(v),
                ]
            };
            let [l, h] = [each(halves[0]), each(halves[1])];
            let non_ascii = join(l[5], h[5]);
            Masks {
                quote: join(l[0], h[0]),
                backslash: join(l[1], h[1]),
                op: join(l[2], h[2]),
                whitespace: join(l[3], h[3]),
                control: join(l[4], h[4]) & !non_ascii,
                non_ascii,
            }
        }
    }

    /// Bit `i` is the XOR of bits `0..=i`: a carry-less multiply by all ones.
    #[target_feature(enable = "pclmulqdq")]
    fn prefix_xor(bits: u64) -> u64 {
        let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, bits as i64), _mm_set1_epi8(-1), 0);
        _mm_cvtsi128_si64(product) as u64
    }

    /// # Safety
    ///
    /// The CPU must support AVX2 and PCLMULQDQ.
    #[target_feature(enable = "avx2,pclmulqdq")]
    pub(super) unsafe fn stage_one(input: &[u8]) -> StageOne {
        stage_one_with(input, |block| masks(block), |bits| prefix_xor(bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classification's twins agree on every byte value at every position of a block.
    #[test]
    fn avx2_agrees_with_the_portable_twin() {
        // Under Miri (thousands of times slower) the bytes the classes turn on, and their
        // neighbours.
        let bytes: Vec<u8> = if cfg!(miri) {
            b"\"\\{}[]:, \t\n\r\x00\x0c\x1a\x1f\x20\x7f\x80\xff!;Z".to_vec()
        } else {
            (0..=255).collect()
        };
        let mut block = [b'a'; 64];
        for position in 0..64 {
            for &byte in &bytes {
                block[position] = byte;
                let portable = stage_one_portable(&block);
                if let Some(avx2) = stage_one_avx2(&block) {
                    assert_eq!(avx2, portable, "byte {byte:#x} at {position}");
                }
            }
            block[position] = b'a';
        }
    }

    // Not under Miri (proptest's file persistence); the tests above cover the same code there.
    proptest::proptest! {
        /// Across blocks (carries of escapes, strings and scalars), on inputs made of the
        /// bytes the algebra cares about.
        #[test]
        #[cfg_attr(miri, ignore)]
        fn twins_agree_across_blocks(picks in proptest::collection::vec(0usize..14, 0..400)) {
            const ALPHABET: &[u8; 14] = b"\"\\{}[]:, \ta1\x01\x80";
            let input: Vec<u8> = picks.iter().map(|&i| ALPHABET[i]).collect();
            let portable = stage_one_portable(&input);
            if let Some(avx2) = stage_one_avx2(&input) {
                proptest::prop_assert_eq!(avx2, portable);
            }
        }
    }

    #[test]
    fn counts_the_structural_positions_of_json() {
        // `{` `"a"` `:` `[` `1` `,` `"b\""` `,` `true` `]` `}`
        let text = br#"{"a": [1, "b\"", true]}"#;
        let found = stage_one_portable(text);
        assert_eq!(found.structurals, 11);
        assert!(!found.control_in_string && !found.ends_in_string && !found.non_ascii);
        // An escaped backslash before a quote: the quote closes the string.
        assert_eq!(stage_one_portable(br#"["\\",1]"#).structurals, 5);
        assert!(stage_one_portable(b"[\"a\x01\"]").control_in_string);
        assert!(stage_one_portable(b"[\"abc").ends_in_string);
        // Across a block edge: a string spanning blocks, backslashes at the edge.
        let mut long = b"[\"".to_vec();
        long.extend(std::iter::repeat_n(b'x', 61));
        long.extend_from_slice(b"\\\\\",2]");
        let found = stage_one_portable(&long);
        assert_eq!(found.structurals, 5, "{found:?}");
        assert_eq!(stage_one_avx2(&long).unwrap_or(found), found);
    }
}
