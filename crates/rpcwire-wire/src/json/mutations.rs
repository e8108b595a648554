//! Test support for the parser's fast paths and the value walk's two compilations: every
//! truncation, deletion and a set of replacements of every byte of some texts, each checked
//! by the caller (a fast path agrees with the general path whenever it answers; the baseline
//! walk agrees with the one picked for this CPU).

/// Bytes put in place of each byte in turn.
const REPLACEMENTS: &[u8] = b" \n\"\\}]{[,:0-.eEx\x01\x80\xc3";

/// Calls `agrees` on every mutation of every text and asserts it holds; returns how many
/// replacements were checked.
pub(crate) fn check_mutations(texts: &[&str], agrees: impl Fn(&[u8]) -> bool) -> usize {
    let mut checked = 0;
    for text in texts {
        let input = text.as_bytes();
        for cut in 0..input.len() {
            assert!(agrees(&input[..cut]), "prefix {cut} of {text}");
            let mut deleted = input.to_vec();
            deleted.remove(cut);
            assert!(agrees(&deleted), "{text} without byte {cut}");
            for &byte in REPLACEMENTS {
                let mut replaced = input.to_vec();
                replaced[cut] = byte;
                assert!(agrees(&replaced), "{text} with byte {cut} = {byte:#x}");
                checked += 1;
            }
        }
    }
    checked
}
