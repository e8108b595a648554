//! Slot index + generation ⇄ request id.
//!
//! Numbers: `generation << slot_bits | slot`, kept below 2^53 (`slot_bits` is the fewest bits
//! that hold every slot index; the generation gets the other `53 - slot_bits` bits and wraps).
//! Strings: `r<generation>.<slot>` in canonical decimal. Decoding is exact: anything that is
//! not precisely what `encode` would write for some slot in range is rejected.

use crate::message::{Id, IdKind};

use super::config::IdFormat;

/// Ids stay at most 2^53 - 1, the largest integer every JSON parser keeps exact.
const ID_BITS: u32 = 53;

#[derive(Clone, Copy, Debug)]
pub(crate) struct IdCodec {
    format: IdFormat,
    slot_bits: u32,
    capacity: u32,
    gen_mask: u64,
}

impl IdCodec {
    /// `capacity` is at most 2^24 (the table allows 2^20).
    pub(crate) fn new(format: IdFormat, capacity: u32) -> IdCodec {
        let slot_bits = if capacity <= 1 {
            0
        } else {
            u32::BITS - (capacity - 1).leading_zeros()
        };
        IdCodec {
            format,
            slot_bits,
            capacity,
            gen_mask: (1u64 << (ID_BITS - slot_bits)) - 1,
        }
    }

    /// The generation after `gen` (wrapping within the bits an id has for it).
    pub(crate) fn next_gen(&self, gen: u64) -> u64 {
        gen.wrapping_add(1) & self.gen_mask
    }

    pub(crate) fn encode(&self, slot: u32, gen: u64) -> Id<'static> {
        match self.format {
            IdFormat::Number => Id::from(gen << self.slot_bits | u64::from(slot)),
            IdFormat::String => Id::string(format!("r{gen}.{slot}")),
        }
    }

    /// The slot and generation `id` names, if it is an id this codec could have issued.
    pub(crate) fn decode(&self, id: &Id<'_>) -> Option<(u32, u64)> {
        let (slot, gen) = match (self.format, id.kind()) {
            (IdFormat::Number, IdKind::Number) => {
                let n = id.as_u64()?;
                if n >> ID_BITS != 0 {
                    return None;
                }
                let slot = n & ((1u64 << self.slot_bits) - 1);
                (u32::try_from(slot).ok()?, n >> self.slot_bits)
            }
            (IdFormat::String, IdKind::String) => {
                let text = id.as_str()?;
                let (gen, slot) = text.strip_prefix('r')?.split_once('.')?;
                let gen = canonical_decimal(gen)?;
                (u32::try_from(canonical_decimal(slot)?).ok()?, gen)
            }
            _ => return None,
        };
        (slot < self.capacity && gen <= self.gen_mask).then_some((slot, gen))
    }
}

/// The value of `text` when it is a decimal number written the way `format!` writes it (no
/// sign, no leading zero, at most 19 digits so it cannot overflow).
fn canonical_decimal(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let valid = !bytes.is_empty()
        && bytes.len() <= 19
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes[0] != b'0' || bytes.len() == 1);
    if !valid {
        return None;
    }
    Some(bytes.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

#[cfg(all(test, not(rpcwire_loom)))]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_stay_below_2_pow_53() {
        let codec = IdCodec::new(IdFormat::Number, 1000);
        assert_eq!(codec.slot_bits, 10);
        let max_gen = codec.gen_mask;
        for (slot, gen) in [(0, 0), (999, 1), (5, max_gen)] {
            let id = codec.encode(slot, gen);
            assert!(id.as_u64().unwrap() < 1 << 53);
            assert_eq!(codec.decode(&id), Some((slot, gen)));
        }
        assert_eq!(codec.next_gen(max_gen), 0);
        assert_eq!(
            codec.decode(&Id::from(1000u64)),
            None,
            "slot 1000 is out of range"
        );
        assert_eq!(codec.decode(&Id::from(1u64 << 53)), None);
        assert_eq!(codec.decode(&Id::number("1.0").unwrap()), None);
        assert_eq!(codec.decode(&Id::number("-1").unwrap()), None);
        assert_eq!(codec.decode(&Id::from("r1.1")), None);
        assert_eq!(codec.decode(&Id::null()), None);
    }

    #[test]
    fn small_capacities() {
        let one = IdCodec::new(IdFormat::Number, 1);
        assert_eq!(one.decode(&one.encode(0, 7)), Some((0, 7)));
        let zero = IdCodec::new(IdFormat::Number, 0);
        assert_eq!(zero.decode(&Id::from(0u64)), None);
        let max = IdCodec::new(IdFormat::Number, 1 << 24);
        assert_eq!(max.slot_bits, 24);
        assert_eq!(
            max.decode(&max.encode((1 << 24) - 1, 3)),
            Some(((1 << 24) - 1, 3))
        );
    }

    #[test]
    fn strings_round_trip_exactly() {
        let codec = IdCodec::new(IdFormat::String, 16);
        let id = codec.encode(5, 12);
        assert_eq!(id.as_str().as_deref(), Some("r12.5"));
        assert_eq!(codec.decode(&id), Some((5, 12)));
        assert_eq!(codec.decode(&Id::string("r0.0")), Some((0, 0)));
        for bad in [
            "r12.16",
            "r012.5",
            "r12.05",
            "r+1.5",
            "r1.",
            "r.1",
            "r1",
            "x1.1",
            "r1.1.1",
            "",
            "r-1.1",
            "r99999999999999999999.1",
            "r9007199254740991.1",
        ] {
            assert_eq!(codec.decode(&Id::string(bad)), None, "{bad}");
        }
        assert_eq!(codec.decode(&Id::from(5u64)), None);
    }
}
