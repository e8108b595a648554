//! Which block a call's answer is about, read from its method and params: what the
//! [`FinalityCache`](super::FinalityCache) needs to know whether the answer can still change.

use serde_json::value::RawValue;

use super::head::hex_number;

/// What a call's answer is about, as far as its finality goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum About {
    /// The chain itself (`eth_chainId`): it never changes.
    Chain,
    /// The block of that number (named by number, `earliest`, `{"blockNumber":…}`, or the
    /// upper end of a range of them).
    Block(u64),
    /// The head of the chain: `latest`, `safe`, `finalized`, or no block named
    /// (`eth_blockNumber`, `eth_gasPrice`).
    Head,
    /// A block named by its hash, or a transaction: final when the block the answer names in
    /// this member (of the answer, or of its first element) is.
    Answer(&'static str),
}

/// What the answer to `method` with `params` (their JSON text) is about; `None` when it is
/// not to be kept at all: a method that writes or is not known here, `pending`, a block named
/// only by its hash where the answer does not say its number, params not as expected.
pub(crate) fn about(method: &str, params: Option<&str>) -> Option<About> {
    let at = |index: usize, required: bool| block_at(params, index, required);
    match method {
        "eth_chainId" | "net_version" => Some(About::Chain),
        "eth_blockNumber" | "eth_gasPrice" | "eth_maxPriorityFeePerGas" | "eth_blobBaseFee" | "eth_baseFee" => {
            Some(About::Head)
        }
        "eth_getBlockByNumber"
        | "eth_getBlockTransactionCountByNumber"
        | "eth_getUncleCountByBlockNumber"
        | "eth_getTransactionByBlockNumberAndIndex"
        | "eth_getUncleByBlockNumberAndIndex"
        | "eth_getBlockReceipts"
        // What a final block holds, traced or raw, is final too.
        | "debug_getRawBlock"
        | "debug_getRawHeader"
        | "debug_getRawReceipts"
        | "debug_traceBlockByNumber"
        | "trace_block" => at(0, true),
        // State at a block, and calls run on it (their overrides are in the params, the key).
        "eth_getBalance"
        | "eth_getCode"
        | "eth_getTransactionCount"
        | "eth_call"
        | "eth_estimateGas"
        | "eth_createAccessList"
        | "eth_simulateV1"
        | "eth_getStorageValues" => at(1, false),
        "eth_feeHistory" => at(1, true),
        "eth_getStorageAt" | "eth_getProof" => at(2, false),
        "eth_getBlockByHash" => Some(About::Answer("number")),
        "eth_getTransactionByHash"
        | "eth_getTransactionReceipt"
        | "eth_getTransactionByBlockHashAndIndex" => Some(About::Answer("blockNumber")),
        "eth_getLogs" => logs(params?),
        _ => None,
    }
}

/// The params as a list of JSON values (`None`: absent means empty; by name, or not JSON,
/// is refused).
fn positional(params: Option<&str>) -> Option<Vec<&RawValue>> {
    match params {
        None => Some(Vec::new()),
        Some(text) => serde_json::from_str(text).ok(),
    }
}

/// The block named by the param at `index` (absent: the head, unless `required`).
fn block_at(params: Option<&str>, index: usize, required: bool) -> Option<About> {
    let params = positional(params)?;
    match params.get(index) {
        Some(block) => block_param(block.get()),
        None if required => None,
        None => Some(About::Head),
    }
}

/// A block parameter: a tag, a number, a block hash (whose answers name their block), or an
/// EIP-1898 object naming a number (one naming a hash is not kept: its answers, a balance or
/// a code, do not say the block's number).
fn block_param(json: &str) -> Option<About> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Param<'a> {
        Text(&'a str),
        Object {
            #[serde(rename = "blockNumber")]
            number: &'a str,
        },
    }
    match serde_json::from_str::<Param<'_>>(json).ok()? {
        Param::Text("latest" | "safe" | "finalized") => Some(About::Head),
        Param::Text("earliest") => Some(About::Block(0)),
        Param::Text(hash) if hash.len() == 66 && hash.starts_with("0x") => Some(About::Answer("blockNumber")),
        Param::Text(number) | Param::Object { number } => hex_number(number).map(About::Block),
    }
}

/// An `eth_getLogs` filter: about the upper end of its range when both ends are numbers (or
/// `earliest`), the head when either is a head tag or missing, the logs' own block when it
/// names a block hash.
fn logs(params: &str) -> Option<About> {
    #[derive(serde::Deserialize)]
    struct Filter<'a> {
        #[serde(rename = "fromBlock", borrow)]
        from: Option<&'a RawValue>,
        #[serde(rename = "toBlock", borrow)]
        to: Option<&'a RawValue>,
        #[serde(rename = "blockHash", borrow)]
        hash: Option<&'a RawValue>,
    }
    let [filter]: [Filter<'_>; 1] = serde_json::from_str(params).ok()?;
    if filter.hash.is_some() {
        return Some(About::Answer("blockNumber"));
    }
    let end = |end: Option<&RawValue>| match end {
        Some(block) => block_param(block.get()),
        None => Some(About::Head),
    };
    match (end(filter.from)?, end(filter.to)?) {
        (About::Block(from), About::Block(to)) if from <= to => Some(About::Block(to)),
        (About::Block(_) | About::Head, About::Head) | (About::Head, About::Block(_)) => Some(About::Head),
        _ => None,
    }
}

/// The block number an answer names in `member` (in it, or in its first element when it is
/// a list).
pub(crate) fn answer_block(result: &str, member: &str) -> Option<u64> {
    // Only the member is looked at: a block with its transactions is not built as a tree.
    let object = match result.trim_start().as_bytes().first()? {
        b'[' => serde_json::from_str::<Vec<&RawValue>>(result)
            .ok()?
            .first()?
            .get(),
        _ => result,
    };
    let members: std::collections::HashMap<&str, &RawValue> = serde_json::from_str(object).ok()?;
    hex_number(serde_json::from_str::<&str>(members.get(member)?.get()).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_about_the_block_their_params_name() {
        let cases: &[(&str, Option<&str>, Option<About>)] = &[
            ("eth_chainId", None, Some(About::Chain)),
            ("eth_blockNumber", None, Some(About::Head)),
            (
                "eth_getBlockByNumber",
                Some(r#"["0x10",false]"#),
                Some(About::Block(16)),
            ),
            (
                "eth_getBlockByNumber",
                Some(r#"["latest",false]"#),
                Some(About::Head),
            ),
            (
                "eth_getBlockByNumber",
                Some(r#"["finalized",false]"#),
                Some(About::Head),
            ),
            ("eth_getBlockByNumber", Some(r#"["pending",false]"#), None),
            (
                "eth_getBlockByNumber",
                Some(r#"["earliest",true]"#),
                Some(About::Block(0)),
            ),
            ("eth_getBlockByNumber", None, None),
            ("eth_getBlockByNumber", Some(r#"{"block":"0x1"}"#), None),
            ("eth_getBalance", Some(r#"["0xab","0x2"]"#), Some(About::Block(2))),
            ("eth_getBalance", Some(r#"["0xab"]"#), Some(About::Head)),
            (
                "eth_call",
                Some(r#"[{"to":"0xab"},{"blockNumber":"0x3"}]"#),
                Some(About::Block(3)),
            ),
            ("eth_call", Some(r#"[{"to":"0xab"},{"blockHash":"0x3"}]"#), None),
            (
                "eth_getStorageAt",
                Some(r#"["0xab","0x0","0x4"]"#),
                Some(About::Block(4)),
            ),
            (
                "eth_feeHistory",
                Some(r#"["0x4","latest",[]]"#),
                Some(About::Head),
            ),
            ("eth_feeHistory", Some(r#"["0x4"]"#), None),
            (
                "eth_getBlockByHash",
                Some(r#"["0xab",false]"#),
                Some(About::Answer("number")),
            ),
            (
                "eth_getTransactionReceipt",
                Some(r#"["0xab"]"#),
                Some(About::Answer("blockNumber")),
            ),
            (
                "eth_getBlockReceipts",
                Some(r#"["0x0000000000000000000000000000000000000000000000000000000000000001"]"#),
                Some(About::Answer("blockNumber")),
            ),
            ("eth_sendRawTransaction", Some(r#"["0x01"]"#), None),
            (
                "eth_simulateV1",
                Some(r#"[{"blockStateCalls":[]},"0x1"]"#),
                Some(About::Block(1)),
            ),
            ("eth_estimateGas", Some(r#"[{"to":"0xab"}]"#), Some(About::Head)),
            (
                "debug_traceBlockByNumber",
                Some(r#"["0x1",{"tracer":"callTracer"}]"#),
                Some(About::Block(1)),
            ),
            ("debug_traceTransaction", Some(r#"["0xab"]"#), None),
            ("txpool_content", None, None),
            ("eth_getBalance", Some(r#"["0xab","0x1ffffffffffffffff"]"#), None),
        ];
        for (method, params, expected) in cases {
            assert_eq!(about(method, *params), *expected, "{method} {params:?}");
        }
    }

    #[test]
    fn a_logs_filter_is_about_its_upper_end_or_the_head() {
        let filter = |text: &str| about("eth_getLogs", Some(text));
        assert_eq!(
            filter(r#"[{"fromBlock":"0x1","toBlock":"0x9"}]"#),
            Some(About::Block(9))
        );
        assert_eq!(
            filter(r#"[{"fromBlock":"earliest","toBlock":"0x9"}]"#),
            Some(About::Block(9))
        );
        assert_eq!(filter(r#"[{"fromBlock":"0x9","toBlock":"0x1"}]"#), None);
        assert_eq!(filter(r#"[{"fromBlock":"0x1"}]"#), Some(About::Head));
        assert_eq!(
            filter(r#"[{"fromBlock":"latest","toBlock":"0x9"}]"#),
            Some(About::Head)
        );
        assert_eq!(filter(r#"[{"toBlock":"pending"}]"#), None);
        assert_eq!(
            filter(r#"[{"blockHash":"0xab"}]"#),
            Some(About::Answer("blockNumber"))
        );
        assert_eq!(filter(r#"[]"#), None);
        assert_eq!(about("eth_getLogs", None), None);
    }

    #[test]
    fn answers_name_their_block_in_a_member() {
        assert_eq!(
            answer_block(r#"{"number":"0x5","hash":"0xab"}"#, "number"),
            Some(5)
        );
        assert_eq!(
            answer_block(r#"[{"blockNumber":"0x6"},{"blockNumber":"0x7"}]"#, "blockNumber"),
            Some(6)
        );
        assert_eq!(answer_block("[]", "blockNumber"), None);
        assert_eq!(answer_block("null", "blockNumber"), None);
        assert_eq!(answer_block(r#"{"blockNumber":null}"#, "blockNumber"), None);
    }
}
