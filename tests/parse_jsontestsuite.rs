//! JSONTestSuite (<https://github.com/nst/JSONTestSuite>), `test_parsing/`, from
//! `../shared/conformance/JSONTestSuite`:
//!
//! - `y_` documents (valid JSON) used as the params of a request parse;
//! - `n_` documents (invalid JSON) used that way give -32700, except where wrapping makes
//!   valid JSON (listed below and checked against serde_json);
//! - each document on its own: `n_` gives -32700, `y_` never -32700 (a bare JSON value is
//!   at most an invalid request, -32600), `i_` (implementation-defined) never panics.
//!
//! Run with `--nocapture` to see the counts.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use rpcwire::{Message, Parsed};

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/conformance/JSONTestSuite/test_parsing"
);

/// `n_` documents that are only whitespace or nothing: wrapped as `[DOC]` they become an
/// empty array, which is valid params. serde_json must agree (checked below).
const N_VALID_WHEN_WRAPPED: &[&str] = &["n_single_space.json", "n_structure_no_data.json"];

struct Doc {
    name: String,
    bytes: Vec<u8>,
}

/// The documents whose name starts with `prefix`, sorted; `None` when the suite is missing.
fn documents(prefix: &str) -> Option<Vec<Doc>> {
    let dir = Path::new(SUITE);
    if !dir.is_dir() {
        println!(
            "SKIPPED: JSONTestSuite not found at {} (expected ../shared beside the crate)",
            dir.display()
        );
        return None;
    }
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(".json")
        })
        .collect();
    paths.sort();
    Some(
        paths
            .into_iter()
            .map(|path| Doc {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                bytes: fs::read(&path).unwrap(),
            })
            .collect(),
    )
}

const BEFORE_PARAMS: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":"#;

fn wrap(doc: &[u8]) -> Vec<u8> {
    let mut wrapped = BEFORE_PARAMS.to_vec();
    wrapped.push(b'[');
    wrapped.extend_from_slice(doc);
    wrapped.extend_from_slice(b"]}");
    wrapped
}

/// serde_json's verdict on whether `bytes` is one valid JSON text. `Value` checks
/// everything (UTF-8, surrogates) but refuses numbers beyond f64; its "number out of range"
/// refusal still means the syntax was fine up to that number, so the remainder is checked
/// with `IgnoredAny`, which does not look at number ranges.
fn serde_json_accepts(bytes: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(_) => true,
        Err(e) if e.to_string().starts_with("number out of range") => {
            serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
        }
        Err(_) => false,
    }
}

fn parse_without_panic(name: &str, bytes: &[u8]) -> Result<(), rpcwire::ParseError> {
    catch_unwind(AssertUnwindSafe(|| {
        rpcwire::parse(bytes).map(|parsed| touch(&parsed))
    }))
    .unwrap_or_else(|_| panic!("{name}: rpcwire panicked"))
}

/// Reads everything a parsed value offers, so that views are exercised too.
fn touch(parsed: &Parsed<'_>) {
    let visit = |message: &Message<'_>| {
        let _ = message.id().map(|id| (id.as_str(), id.as_u64(), id.raw().len()));
        if let Message::Request(r) = message {
            if let Some(p) = r.params() {
                let _ = p.iter().count() + p.members().count();
                let _ = p.decode::<serde::de::IgnoredAny>();
            }
        }
    };
    match parsed {
        Parsed::Single(message) => visit(message),
        Parsed::Batch(batch) => batch.iter().flatten().for_each(|m| visit(&m)),
    }
}

#[test]
fn y_documents_parse_as_params() {
    let Some(docs) = documents("y_") else { return };
    for doc in &docs {
        let wrapped = wrap(&doc.bytes);
        match parse_without_panic(&doc.name, &wrapped) {
            Ok(()) => {}
            Err(e) => panic!("{}: valid JSON as params was rejected: {e}", doc.name),
        }
        let Ok(Parsed::Single(Message::Request(request))) = rpcwire::parse(&wrapped) else {
            unreachable!()
        };
        // The params are exactly the document inside the brackets, and serde_json reads
        // the same value from them as from the document.
        let params = request.params().unwrap();
        assert_eq!(
            params.as_str().as_bytes(),
            &wrapped[BEFORE_PARAMS.len()..wrapped.len() - 1],
            "{}",
            doc.name
        );
        if let Ok(expected) = serde_json::from_slice::<serde_json::Value>(&doc.bytes) {
            let [value]: [serde_json::Value; 1] = params.decode().unwrap();
            assert_eq!(value, expected, "{}", doc.name);
        }
    }
    println!("JSONTestSuite y_ as params: {} documents accepted", docs.len());
    assert!(docs.len() > 90, "only {} y_ documents", docs.len());
}

#[test]
fn n_documents_as_params_are_parse_errors() {
    let Some(docs) = documents("n_") else { return };
    let mut syntax_errors = 0;
    let mut valid_when_wrapped = Vec::new();
    for doc in &docs {
        let wrapped = wrap(&doc.bytes);
        let serde_json_valid = serde_json_accepts(&wrapped);
        let listed = N_VALID_WHEN_WRAPPED.contains(&doc.name.as_str());
        assert_eq!(
            serde_json_valid,
            listed,
            "{}: serde_json says the wrapped text is {}valid JSON",
            doc.name,
            if serde_json_valid { "" } else { "in" }
        );
        match parse_without_panic(&doc.name, &wrapped) {
            Err(e) if e.is_syntax() => {
                assert!(
                    !listed,
                    "{}: listed as valid when wrapped, but rpcwire says {e}",
                    doc.name
                );
                assert_eq!(e.code().code(), -32700);
                assert!(e.offset() <= wrapped.len());
                syntax_errors += 1;
            }
            Ok(()) if listed => valid_when_wrapped.push(doc.name.as_str()),
            other => panic!(
                "{}: expected -32700 for the wrapped document, got {other:?}",
                doc.name
            ),
        }
    }
    println!(
        "JSONTestSuite n_ as params: {syntax_errors} rejected with -32700, {} valid once wrapped ({})",
        valid_when_wrapped.len(),
        valid_when_wrapped.join(", ")
    );
    assert_eq!(valid_when_wrapped, N_VALID_WHEN_WRAPPED);
    assert!(syntax_errors > 180, "only {syntax_errors} n_ documents");
}

#[test]
fn documents_on_their_own() {
    let (Some(y), Some(n), Some(i)) = (documents("y_"), documents("n_"), documents("i_")) else {
        return;
    };

    let (mut y_ok, mut y_invalid_request) = (0, 0);
    for doc in &y {
        match parse_without_panic(&doc.name, &doc.bytes) {
            Ok(()) => y_ok += 1,
            Err(e) if !e.is_syntax() => {
                assert_eq!(e.code().code(), -32600, "{}", doc.name);
                y_invalid_request += 1;
            }
            Err(e) => panic!("{}: valid JSON rejected as malformed: {e}", doc.name),
        }
    }

    for doc in &n {
        match parse_without_panic(&doc.name, &doc.bytes) {
            Err(e) if e.is_syntax() => assert!(e.offset() <= doc.bytes.len(), "{}", doc.name),
            other => panic!("{}: expected -32700, got {other:?}", doc.name),
        }
    }

    let (mut i_accepted, mut i_rejected) = (0, 0);
    for doc in &i {
        match parse_without_panic(&doc.name, &doc.bytes) {
            Ok(()) => i_accepted += 1,
            Err(e) => {
                assert!(e.offset() <= doc.bytes.len(), "{}", doc.name);
                i_rejected += 1;
            }
        }
        // Wrapped as params, too.
        let _ = parse_without_panic(&doc.name, &wrap(&doc.bytes));
    }

    println!(
        "JSONTestSuite on their own: y_ {} ({y_ok} ok, {y_invalid_request} -32600), n_ {} (all -32700), \
         i_ {} ({i_accepted} accepted, {i_rejected} rejected, no panic)",
        y.len(),
        n.len(),
        i.len()
    );
    assert!(!y.is_empty() && !n.is_empty() && !i.is_empty());
    assert_eq!(y_ok + y_invalid_request, y.len());
    assert_eq!(i_accepted + i_rejected, i.len());
}

/// The implementation-defined documents rpcwire rejects are exactly those that break UTF-8
/// or UTF-16 rules, use a byte order mark or another encoding, or nest deeper than the
/// default limit; big numbers are accepted (they stay text until decoded).
#[test]
fn i_documents_follow_a_stated_policy() {
    let Some(i) = documents("i_") else { return };
    for doc in &i {
        let accepted = rpcwire::parse(&wrap(&doc.bytes)).is_ok();
        let expected = doc.name.starts_with("i_number_");
        assert_eq!(accepted, expected, "{}", doc.name);
    }
}
