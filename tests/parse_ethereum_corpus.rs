//! The Ethereum execution-apis test corpus, `../shared/corpus/ethereum-execution-apis`:
//! real request/response pairs. In each `<method>/<case>.io` file, `>> ` lines are requests,
//! `<< ` lines their responses, `//` lines comments.
//!
//! Every request parses as a `Request` for the folder's method (two files first make a
//! setup call to another method, listed in `SETUP_CALLS`); every response parses as a
//! `Response` with its request's id; its result (or error) decoded with serde_json equals
//! serde_json's reading of the same member of the whole line. Run with `--nocapture` to see
//! the counts.

use std::fs;
use std::path::{Path, PathBuf};

use rpcwire::{Message, Parsed, Request, Response};
use serde_json::Value;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/ethereum-execution-apis"
);

/// Requests whose method is not the folder's: setup calls made before the call under test
/// (`testing_buildBlockV1` needs a transaction in the mempool, or a block to build on).
const SETUP_CALLS: &[(&str, &str)] = &[
    (
        "testing_buildBlockV1/build-block-from-mempool.io",
        "eth_sendRawTransaction",
    ),
    (
        "testing_buildBlockV1/build-block-invalid-transaction.io",
        "eth_getBlockByNumber",
    ),
];

fn io_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(io_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "io") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn single<'a>(line: &'a str, what: &str) -> Message<'a> {
    match rpcwire::parse(line.as_bytes()) {
        Ok(Parsed::Single(message)) => message,
        Ok(Parsed::Batch(_)) => panic!("{what}: a batch"),
        Err(e) => panic!("{what}: {e}"),
    }
}

fn check_request<'a>(line: &'a str, what: &str) -> Request<'a> {
    let Message::Request(request) = single(line, what) else {
        panic!("{what}: not a request")
    };
    let whole_method: Value = serde_json::from_str::<Value>(line).unwrap()["method"].clone();
    assert_eq!(request.method(), whole_method, "{what}");
    let whole: Value = serde_json::from_str(line).unwrap();
    // The params, decoded lazily, are what serde_json sees in the whole line.
    let params = request.params().map(|p| p.decode::<Value>().unwrap());
    assert_eq!(
        params.as_ref(),
        whole.get("params").filter(|p| !p.is_null()),
        "{what}"
    );
    // The id is the same JSON value.
    assert_eq!(serde_json::to_value(request.id()).unwrap(), whole["id"], "{what}");
    // Written back, the request is the same JSON.
    assert_eq!(serde_json::to_value(&request).unwrap(), whole, "{what}");
    request
}

/// Checks one response; `true` when it is an error response.
fn check_response(line: &str, request: &Request<'_>, what: &str) -> bool {
    let Message::Response(response) = single(line, what) else {
        panic!("{what}: not a response")
    };
    assert_eq!(response.id(), request.id(), "{what}: response id");
    let whole: Value = serde_json::from_str(line).unwrap();
    check_payload(&response, &whole, what);
    assert_eq!(serde_json::to_value(&response).unwrap(), whole, "{what}");
    !response.is_success()
}

fn check_payload(response: &Response<'_>, whole: &Value, what: &str) {
    match (response.result(), response.error_object()) {
        (Some(result), None) => {
            assert_eq!(
                result.decode::<Value>().unwrap(),
                whole["result"],
                "{what}: result"
            );
            assert!(whole.get("error").is_none());
        }
        (None, Some(error)) => {
            let expected = &whole["error"];
            assert_eq!(serde_json::to_value(error).unwrap(), *expected, "{what}: error");
            assert_eq!(Some(error.code().code()), expected["code"].as_i64(), "{what}");
            assert_eq!(Some(error.message()), expected["message"].as_str(), "{what}");
            let data = error.data().map(|d| d.decode::<Value>().unwrap());
            assert_eq!(data.as_ref(), expected.get("data"), "{what}");
            assert!(whole.get("result").is_none());
        }
        _ => unreachable!("a response has exactly one of result and error"),
    }
}

#[test]
fn every_request_and_response_in_the_corpus() {
    let dir = Path::new(CORPUS);
    if !dir.is_dir() {
        println!(
            "SKIPPED: Ethereum corpus not found at {} (expected ../shared beside the crate)",
            dir.display()
        );
        return;
    }
    let files = io_files(dir);
    let (mut pairs, mut errors, mut empty_files) = (0usize, 0usize, Vec::new());
    let mut setup_calls: Vec<(String, String)> = Vec::new();
    for file in &files {
        let method = file.parent().unwrap().file_name().unwrap().to_str().unwrap();
        let relative = file
            .strip_prefix(dir)
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let mut calls_to_folder_method = 0;
        let text = fs::read_to_string(file).unwrap();
        let mut pending: Option<(Request<'_>, usize)> = None;
        let mut lines_seen = 0;
        for (number, line) in text.lines().enumerate() {
            let what = format!("{}:{}", file.display(), number + 1);
            if let Some(line) = line.strip_prefix(">> ") {
                assert!(pending.is_none(), "{what}: two requests in a row");
                let request = check_request(line, &what);
                if request.method() == method {
                    calls_to_folder_method += 1;
                } else {
                    setup_calls.push((relative.clone(), request.method().to_owned()));
                }
                pending = Some((request, number));
                lines_seen += 1;
            } else if let Some(line) = line.strip_prefix("<< ") {
                let (request, _) = pending
                    .take()
                    .unwrap_or_else(|| panic!("{what}: response without request"));
                errors += usize::from(check_response(line, &request, &what));
                pairs += 1;
                lines_seen += 1;
            } else {
                assert!(
                    line.starts_with("//") || line.trim().is_empty(),
                    "{what}: unexpected line"
                );
            }
        }
        if let Some((_, number)) = pending {
            panic!("{}:{}: request without response", file.display(), number + 1);
        }
        if lines_seen == 0 {
            empty_files.push(relative);
        } else {
            assert!(calls_to_folder_method > 0, "{relative}: no request for {method}");
        }
    }
    println!(
        "Ethereum corpus: {} files, {pairs} request/response pairs ({errors} error responses); \
         files without exchanges: {empty_files:?}",
        files.len()
    );
    let expected_setup: Vec<(String, String)> = SETUP_CALLS
        .iter()
        .map(|&(file, method)| (file.to_owned(), method.to_owned()))
        .collect();
    assert_eq!(
        setup_calls, expected_setup,
        "requests for another method than their folder's"
    );
    assert!(pairs > 200, "only {pairs} pairs");
    assert!(errors > 0, "the corpus has error responses");
}
