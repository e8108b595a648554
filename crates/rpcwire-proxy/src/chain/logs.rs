//! `eth_getLogs` over a wide range of blocks, split into ranges an upstream accepts, and the
//! logs of each put together again in order.

use serde_json::{Map, Value};

/// The params of each `eth_getLogs` call a filter (`params`: `[filter]`) is split into, in
/// order, when its range (`fromBlock` to `toBlock`, both numbers) spans more than
/// `max_blocks` blocks; `None` when it does not, or names its ends otherwise (a tag, a block
/// hash), or would take more than `max_chunks` calls: it then goes on as it came.
pub(crate) fn split(params: &str, max_blocks: u64, max_chunks: usize) -> Option<Vec<String>> {
    let [filter]: [Map<String, Value>; 1] = serde_json::from_str(params).ok()?;
    if filter.contains_key("blockHash") || max_blocks == 0 {
        return None;
    }
    let end = |name: &str| super::head::hex_number(filter.get(name)?.as_str()?);
    let (from, to) = (end("fromBlock")?, end("toBlock")?);
    let span = to.checked_sub(from)?.checked_add(1)?;
    if span <= max_blocks || span.div_ceil(max_blocks) > max_chunks as u64 {
        return None;
    }
    let mut chunks = Vec::new();
    let mut start = from;
    loop {
        let end = start.saturating_add(max_blocks - 1).min(to);
        let mut part = filter.clone();
        part.insert("fromBlock".to_owned(), Value::String(format!("{start:#x}")));
        part.insert("toBlock".to_owned(), Value::String(format!("{end:#x}")));
        chunks.push(serde_json::to_string(&[part]).ok()?);
        if end == to {
            return Some(chunks);
        }
        start = end + 1;
    }
}

/// The logs of the chunks' results (each a JSON array, in order) as one array; `None` when
/// one is not an array.
pub(crate) fn join<'a>(results: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut joined = String::from("[");
    for result in results {
        let inner = result.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
        if inner.is_empty() {
            continue;
        }
        if joined.len() > 1 {
            joined.push(',');
        }
        joined.push_str(inner);
    }
    joined.push(']');
    Some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(chunk: &str) -> (String, String, String) {
        let [filter]: [Map<String, Value>; 1] = serde_json::from_str(chunk).unwrap();
        let text = |name: &str| filter[name].as_str().unwrap().to_owned();
        (text("fromBlock"), text("toBlock"), text("address"))
    }

    #[test]
    fn a_wide_range_is_split_into_ranges_that_cover_it_once_in_order() {
        let chunks = split(r#"[{"address":"0xab","fromBlock":"0x1","toBlock":"0xa"}]"#, 4, 10).unwrap();
        let got: Vec<_> = chunks.iter().map(|chunk| ends(chunk)).collect();
        let want = [("0x1", "0x4"), ("0x5", "0x8"), ("0x9", "0xa")];
        assert_eq!(got.len(), want.len());
        for ((from, to, address), (want_from, want_to)) in got.iter().zip(want) {
            assert_eq!(
                (from.as_str(), to.as_str(), address.as_str()),
                (want_from, want_to, "0xab")
            );
        }
        let last = split(
            r#"[{"fromBlock":"0xfffffffffffffffe","toBlock":"0xffffffffffffffff"}]"#,
            1,
            10,
        );
        assert_eq!(last.unwrap().len(), 2);
    }

    #[test]
    fn ranges_within_the_limit_tags_hashes_and_too_many_chunks_go_on_as_they_came() {
        for params in [
            r#"[{"fromBlock":"0x1","toBlock":"0x4"}]"#,
            r#"[{"fromBlock":"0x1","toBlock":"latest"}]"#,
            r#"[{"fromBlock":"0x1"}]"#,
            r#"[{"fromBlock":"0x9","toBlock":"0x1"}]"#,
            r#"[{"blockHash":"0xab","fromBlock":"0x1","toBlock":"0x100"}]"#,
            r#"[{"fromBlock":"0x1","toBlock":"0x100"}]"#,
            r#"[{"fromBlock":"0x1","toBlock":"0x9"},{}]"#,
            r#"{"fromBlock":"0x1","toBlock":"0x9"}"#,
            r#"[{"fromBlock":"0x0","toBlock":"0xffffffffffffffff"}]"#,
        ] {
            assert_eq!(split(params, 4, 10), None, "{params}");
        }
        assert_eq!(split(r#"[{"fromBlock":"0x1","toBlock":"0x9"}]"#, 0, 10), None);
    }

    #[test]
    fn the_chunks_logs_are_joined_in_order() {
        assert_eq!(
            join([r#"[{"a":1}]"#, "[]", r#" [ {"b":2},{"c":3} ] "#]).unwrap(),
            r#"[{"a":1},{"b":2},{"c":3}]"#
        );
        assert_eq!(join(["[]", "[]"]).unwrap(), "[]");
        assert_eq!(join(["[]", "null"]), None);
    }
}
