//! The workloads of issue 3, built in code so that every parser sees the same bytes.
//!
//! - W1: the exact 116-byte `eth_getBalance` request.
//! - W2: a ~1 KB LSP `textDocument/completion` request: string id, nested named params, an
//!   array of small objects, `\n`, `\"` and `\u00e9` escapes, floats, booleans.
//! - W3: a ~64 KB response: string id, an Ethereum block with full transactions (hex strings).
//! - W4: a batch of 100 W1-like requests with varying ids, methods and params.
//! - W5: the exact 75-byte error response.
//! - W6 (issue 16): the W1 request in the four layouts real clients write — canonical,
//!   id first (go-ethereum's and erigon's fixtures), ethers.js order (method, params, id,
//!   jsonrpc), Python's `json.dumps` spacing — each on its own (`W6-canonical`, …) and the
//!   four as one stream (`W6`: ns/msg is their mean).
//! - W7 (issue 16): a ~4 KB `eth_call` request with state overrides, pretty-printed with
//!   two-space indentation (what curl users paste).
//! - ETH: every `>>` (request) and `<<` (response) line of
//!   `../shared/corpus/ethereum-execution-apis/**/*.io`, in path order, as a stream.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a peer should parse a message as. Peers that have one type per direction
/// (jsonrpsee-types) use it the way a server (requests) or a client (responses) would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Request,
    Response,
    RequestBatch,
    ResponseBatch,
}

#[derive(Debug)]
pub struct Message {
    pub bytes: Vec<u8>,
    pub kind: Kind,
}

#[derive(Debug)]
pub struct Workload {
    pub name: &'static str,
    pub about: String,
    pub messages: Vec<Message>,
}

impl Workload {
    fn single(name: &'static str, about: &str, bytes: Vec<u8>, kind: Kind) -> Workload {
        Workload {
            name,
            about: about.to_owned(),
            messages: vec![Message { bytes, kind }],
        }
    }

    /// Bytes of all messages together (one pass over the workload).
    pub fn total_bytes(&self) -> usize {
        self.messages.iter().map(|m| m.bytes.len()).sum()
    }

    /// Bytes of one message: the exact size for one-message workloads, the rounded mean for
    /// streams (W6, ETH).
    pub fn bytes_per_msg(&self) -> usize {
        (self.total_bytes() + self.messages.len() / 2) / self.messages.len()
    }
}

pub const W1: &str = r#"{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#;
pub const W5: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

pub const NAMES: [&str; 12] = [
    "W1",
    "W2",
    "W3",
    "W4",
    "W5",
    "W6",
    "W6-canonical",
    "W6-id-first",
    "W6-ethers",
    "W6-python",
    "W7",
    "ETH",
];

/// The W1 request in W6's layouts: (workload name, what it is, bytes).
pub const W6_LAYOUTS: [(&str, &str, &str); 4] = [
    ("W6-canonical", "spec order, compact (W1)", W1),
    (
        "W6-id-first",
        "id, jsonrpc, method, params (go-ethereum, erigon fixtures)",
        r#"{"id":42,"jsonrpc":"2.0","method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"]}"#,
    ),
    (
        "W6-ethers",
        "method, params, id, jsonrpc (ethers.js, eRPC docs)",
        r#"{"method":"eth_getBalance","params":["0x407d73d8a49eeb85d32cf465507dd71d507100c1","latest"],"id":42,"jsonrpc":"2.0"}"#,
    ),
    (
        "W6-python",
        "spec order, `\", \"` and `\": \"` separators (Python json.dumps)",
        r#"{"jsonrpc": "2.0", "id": 42, "method": "eth_getBalance", "params": ["0x407d73d8a49eeb85d32cf465507dd71d507100c1", "latest"]}"#,
    ),
];

/// The corpus directory, relative to the crate root.
pub fn eth_corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/ethereum-execution-apis")
}

/// Builds the named workload; `None` (with a message on stderr) when ETH's corpus is absent.
pub fn build(name: &str) -> Option<Workload> {
    Some(match name {
        "W1" => w1(),
        "W2" => w2(),
        "W3" => w3(),
        "W4" => w4(),
        "W5" => w5(),
        "W6" => w6(),
        "W7" => w7(),
        "ETH" => return eth(),
        layout if layout.starts_with("W6-") => w6_layout(layout),
        other => panic!("unknown workload {other}; known: {NAMES:?}"),
    })
}

/// All workloads (ETH only when its corpus is present).
pub fn all() -> Vec<Workload> {
    NAMES.iter().filter_map(|name| build(name)).collect()
}

pub fn w1() -> Workload {
    assert_eq!(W1.len(), 116, "W1 is the issue's exact 116-byte request");
    Workload::single(
        "W1",
        "116 B eth_getBalance request (the issue's exact bytes)",
        W1.as_bytes().to_vec(),
        Kind::Request,
    )
}

pub fn w2() -> Workload {
    let text = concat!(
        r#"{"jsonrpc":"2.0","id":"lsp-req-7f3a9c21","method":"textDocument/completion","params":{"#,
        r#""textDocument":{"uri":"file:///home/dev/projects/caf\u00e9-app/src/main.rs","version":42},"#,
        r#""position":{"line":128,"character":17},"#,
        r#""context":{"triggerKind":2,"triggerCharacter":"."},"#,
        r#""capabilities":{"snippetSupport":true,"commitCharactersSupport":false,"deprecatedSupport":true,"#,
        r#""preselectSupport":true,"resolveSupport":{"properties":["documentation","detail","additionalTextEdits"]}},"#,
        r#""prefix":"fn main() {\n    let s = \"caf\u00e9\";\n    s.","#,
        r#""scores":{"relevance":0.875,"recency":-1.25e-3,"frequency":3.0e2},"#,
        r#""items":["#,
        r#"{"label":"len","kind":2,"score":0.91,"preselect":true,"detail":"fn len(&self) -> usize"},"#,
        r#"{"label":"is_empty","kind":2,"score":0.83,"preselect":false,"detail":"fn is_empty(&self) -> bool"},"#,
        r#"{"label":"chars","kind":2,"score":0.77,"preselect":false,"detail":"fn chars(&self) -> Chars<'_>"},"#,
        r#"{"label":"r\u00e9sum\u00e9","kind":6,"score":0.125,"preselect":false,"detail":"let \"r\u00e9sum\u00e9\": &str"}"#,
        r#"],"#,
        r#""limit":50,"caseSensitive":false,"filterText":null}}"#,
    );
    assert!(
        (950..=1100).contains(&text.len()),
        "W2 should be ~1 KB, is {} B",
        text.len()
    );
    Workload::single(
        "W2",
        &format!(
            "{} B LSP textDocument/completion request (escapes, floats, booleans, nesting)",
            text.len()
        ),
        text.as_bytes().to_vec(),
        Kind::Request,
    )
}

/// A small deterministic generator (xorshift64*) for hex strings.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// `0x` followed by `digits` lowercase hex digits.
    fn hex(&mut self, digits: usize) -> String {
        let mut s = String::with_capacity(digits + 2);
        s.push_str("0x");
        while s.len() < digits + 2 {
            let _ = write!(s, "{:016x}", self.next());
        }
        s.truncate(digits + 2);
        s
    }

    /// A hex quantity without leading zeros, below 16^digits.
    fn quantity(&mut self, digits: u32) -> String {
        format!("{:#x}", self.next() % 16u64.pow(digits))
    }
}

fn transaction(rng: &mut Rng, block_hash: &str, block_number: &str, index: usize) -> String {
    // An EIP-1559 transaction as eth_getBlockByNumber(…, true) returns it; the input is
    // an ERC-20 call of varying length.
    let input_words = 2 + (rng.next() % 8) as usize;
    let input = format!("0xa9059cbb{}", &rng.hex(64 * input_words)[2..]);
    format!(
        concat!(
            r#"{{"blockHash":"{}","blockNumber":"{}","from":"{}","gas":"{}","gasPrice":"{}","#,
            r#""maxFeePerGas":"{}","maxPriorityFeePerGas":"{}","hash":"{}","input":"{}","nonce":"{}","#,
            r#""to":"{}","transactionIndex":"{:#x}","value":"{}","type":"0x2","accessList":[],"#,
            r#""chainId":"0x1","v":"0x1","r":"{}","s":"{}","yParity":"0x1"}}"#
        ),
        block_hash,
        block_number,
        rng.hex(40),
        rng.quantity(5),
        rng.quantity(9),
        rng.quantity(9),
        rng.quantity(8),
        rng.hex(64),
        input,
        rng.quantity(4),
        rng.hex(40),
        index,
        rng.quantity(15),
        rng.hex(64),
        rng.hex(64),
    )
}

pub fn w3() -> Workload {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let block_hash = rng.hex(64);
    let number = "0x12a05f2";
    let head = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":"blk-19532274","result":{{"baseFeePerGas":"{}","difficulty":"0x0","#,
            r#""extraData":"0x6265617665726275696c642e6f7267","gasLimit":"0x1c9c380","gasUsed":"{}","#,
            r#""hash":"{}","logsBloom":"{}","miner":"{}","mixHash":"{}","nonce":"0x0000000000000000","#,
            r#""number":"{}","parentHash":"{}","receiptsRoot":"{}","sha3Uncles":"{}","size":"{}","#,
            r#""stateRoot":"{}","timestamp":"{}","totalDifficulty":"0xc70d815d562d3cfa955","#,
            r#""withdrawalsRoot":"{}","uncles":[],"withdrawals":[],"transactions":["#
        ),
        rng.quantity(9),
        rng.quantity(7),
        block_hash,
        rng.hex(512),
        rng.hex(40),
        rng.hex(64),
        number,
        rng.hex(64),
        rng.hex(64),
        rng.hex(64),
        rng.quantity(5),
        rng.hex(64),
        rng.quantity(8),
        rng.hex(64),
    );
    let tail = "]}}";
    const TARGET: usize = 64 * 1024;
    let mut text = head;
    let mut index = 0;
    loop {
        let tx = transaction(&mut rng, &block_hash, number, index);
        let separator = usize::from(index > 0);
        if text.len() + separator + tx.len() + tail.len() > TARGET {
            break;
        }
        if index > 0 {
            text.push(',');
        }
        text.push_str(&tx);
        index += 1;
    }
    text.push_str(tail);
    assert!(
        text.len() > 60 * 1024 && text.len() <= TARGET,
        "W3 is {} B",
        text.len()
    );
    Workload::single(
        "W3",
        &format!(
            "{} B eth_getBlockByNumber response, {index} full transactions, string id",
            text.len()
        ),
        text.into_bytes(),
        Kind::Response,
    )
}

pub fn w4() -> Workload {
    const METHODS: [&str; 4] = [
        "eth_getBalance",
        "eth_getTransactionCount",
        "eth_getCode",
        "eth_getBlockByNumber",
    ];
    const TAGS: [&str; 4] = ["latest", "pending", "0x10d4f", "safe"];
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let mut text = String::from("[");
    for i in 0..100usize {
        if i > 0 {
            text.push(',');
        }
        let method = METHODS[i % METHODS.len()];
        let id = 1 + i * 7919 % 100_003;
        if method == "eth_getBlockByNumber" {
            let _ = write!(
                text,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":["{}",false]}}"#,
                rng.quantity(7)
            );
        } else {
            let _ = write!(
                text,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":["{}","{}"]}}"#,
                rng.hex(40),
                TAGS[i / METHODS.len() % TAGS.len()]
            );
        }
    }
    text.push(']');
    Workload::single(
        "W4",
        &format!(
            "{} B batch of 100 W1-like requests (4 methods, varying ids); one msg = the whole batch",
            text.len()
        ),
        text.into_bytes(),
        Kind::RequestBatch,
    )
}

pub fn w5() -> Workload {
    assert_eq!(W5.len(), 75, "W5 is the issue's exact 75-byte error response");
    Workload::single(
        "W5",
        "75 B error response, null id (the issue's exact bytes)",
        W5.as_bytes().to_vec(),
        Kind::Response,
    )
}

pub fn w6() -> Workload {
    Workload {
        name: "W6",
        about: "the W1 request in 4 layouts as a stream (canonical, id first, ethers.js order, \
                Python spacing); ns/msg is their mean"
            .to_owned(),
        messages: W6_LAYOUTS
            .iter()
            .map(|(_, _, text)| Message {
                bytes: text.as_bytes().to_vec(),
                kind: Kind::Request,
            })
            .collect(),
    }
}

fn w6_layout(name: &str) -> Workload {
    let (name, about, text) = W6_LAYOUTS
        .iter()
        .find(|(layout, _, _)| *layout == name)
        .unwrap_or_else(|| panic!("unknown workload {name}; known: {NAMES:?}"));
    Workload::single(
        name,
        &format!("{} B W1 request, {about}", text.len()),
        text.as_bytes().to_vec(),
        Kind::Request,
    )
}

/// `compact` JSON (no whitespace) pretty-printed as `JSON.stringify(value, null, 2)` and
/// Python's `json.dumps(value, indent=2)` write it: one member or element per line, two
/// spaces per level, `": "` after keys, empty containers kept as `[]`/`{}`.
fn pretty(compact: &str) -> String {
    // Bytes are pushed one by one as chars below.
    assert!(compact.is_ascii(), "pretty() takes ASCII input");
    let bytes = compact.as_bytes();
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(2 * depth));
    };
    for (i, &b) in bytes.iter().enumerate() {
        let c = b as char;
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push('"');
            }
            b'{' | b'[' => {
                out.push(c);
                if matches!(bytes.get(i + 1), Some(b'}' | b']')) {
                    continue;
                }
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                if !matches!(bytes[i - 1], b'{' | b'[') {
                    depth -= 1;
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => out.push_str(": "),
            _ => out.push(c),
        }
    }
    out
}

pub fn w7() -> Workload {
    let mut rng = Rng(0x2f6b_3c1d_8e45_a907);
    let call = format!(
        r#"{{"from":"{}","to":"{}","gas":"{}","maxFeePerGas":"{}","value":"0x0","data":"0x095ea7b3{}"}}"#,
        rng.hex(40),
        rng.hex(40),
        rng.quantity(6),
        rng.quantity(9),
        &rng.hex(128)[2..],
    );
    // State overrides: accounts with a balance, a nonce and slots, until the pretty text
    // is just under 4 KiB.
    const TARGET: usize = 4096;
    let mut accounts: Vec<String> = Vec::new();
    let text = |accounts: &[String]| {
        pretty(&format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{call},"latest",{{{}}}]}}"#,
            accounts.join(",")
        ))
    };
    loop {
        let slots: Vec<String> = (0..1 + rng.next() % 3)
            .map(|_| format!(r#""{}":"{}""#, rng.hex(64), rng.hex(64)))
            .collect();
        let account = format!(
            r#""{}":{{"balance":"{}","nonce":"{}","stateDiff":{{{}}}}}"#,
            rng.hex(40),
            rng.quantity(12),
            rng.quantity(2),
            slots.join(",")
        );
        accounts.push(account);
        if text(&accounts).len() > TARGET {
            accounts.pop();
            break;
        }
    }
    let text = text(&accounts);
    assert!(text.len() > 3 * 1024, "W7 is {} B", text.len());
    Workload::single(
        "W7",
        &format!(
            "{} B eth_call request with {} state overrides, pretty-printed (2-space indent)",
            text.len(),
            accounts.len()
        ),
        text.into_bytes(),
        Kind::Request,
    )
}

fn io_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            io_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "io") {
            out.push(path);
        }
    }
    Ok(())
}

/// The ETH stream, or `None` with a printed explanation when the corpus is missing.
pub fn eth() -> Option<Workload> {
    let dir = eth_corpus_dir();
    let mut files = Vec::new();
    if let Err(e) = io_files(&dir, &mut files) {
        eprintln!(
            "SKIPPING workload ETH: cannot read the corpus at {} ({e})",
            dir.display()
        );
        return None;
    }
    files.sort();
    let mut messages = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for line in text.lines() {
            let (request, body) = if let Some(body) = line.strip_prefix(">>") {
                (true, body)
            } else if let Some(body) = line.strip_prefix("<<") {
                (false, body)
            } else {
                continue;
            };
            let body = body.trim();
            let kind = match (request, body.starts_with('[')) {
                (true, false) => Kind::Request,
                (true, true) => Kind::RequestBatch,
                (false, false) => Kind::Response,
                (false, true) => Kind::ResponseBatch,
            };
            messages.push(Message {
                bytes: body.as_bytes().to_vec(),
                kind,
            });
        }
    }
    if messages.is_empty() {
        eprintln!(
            "SKIPPING workload ETH: no `>>`/`<<` lines in {} .io files under {}",
            files.len(),
            dir.display()
        );
        return None;
    }
    let requests = messages
        .iter()
        .filter(|m| matches!(m.kind, Kind::Request | Kind::RequestBatch))
        .count();
    let total: usize = messages.iter().map(|m| m.bytes.len()).sum();
    Some(Workload {
        name: "ETH",
        about: format!(
            "ethereum-execution-apis corpus as a stream: {} files, {} messages ({requests} requests, {} responses), {total} B",
            files.len(),
            messages.len(),
            messages.len() - requests,
        ),
        messages,
    })
}
