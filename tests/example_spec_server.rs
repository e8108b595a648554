//! The example server's binary (`examples/spec_server.rs`), run as a child process: every
//! example of the specification in both framings, oversized lines and frames, headers as
//! real peers send them, end of input. Outputs are compared as JSON values.

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/spec_cases.rs"]
mod spec_cases;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use example_binary::example_binary;
use serde_json::Value;
use spec_cases::{strip_error_data, SPEC_EXAMPLES};

fn run_server(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(example_binary("spec_server"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn spec_server");
    let mut input = child.stdin.take().expect("stdin");
    let bytes = stdin.to_vec();
    // Write from another thread: the server answers while it reads, and both pipes are finite.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().expect("spec_server runs");
    writer.join().expect("writer thread");
    output
}

fn values(bodies: Vec<&[u8]>) -> Vec<Value> {
    bodies
        .into_iter()
        .map(|body| {
            let mut value: Value = serde_json::from_slice(body).expect("answers are JSON");
            strip_error_data(&mut value);
            value
        })
        .collect()
}

fn expected_answers() -> Vec<Value> {
    SPEC_EXAMPLES
        .iter()
        .filter_map(|(_, _, expected)| expected.map(|e| serde_json::from_str(e).unwrap()))
        .collect()
}

/// Splits Content-Length framed output into bodies, checking each header.
fn content_length_bodies(mut output: &[u8]) -> Vec<&[u8]> {
    let mut bodies = Vec::new();
    while !output.is_empty() {
        let end = output
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("header end");
        let header = std::str::from_utf8(&output[..end]).unwrap();
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .expect("Content-Length header")
            .parse()
            .unwrap();
        bodies.push(&output[end + 4..end + 4 + length]);
        output = &output[end + 4 + length..];
    }
    bodies
}

fn ndjson_bodies(output: &[u8]) -> Vec<&[u8]> {
    assert!(
        output.is_empty() || output.ends_with(b"\n"),
        "every answer ends its line"
    );
    output
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn every_specification_example_over_ndjson() {
    spec_examples_over_ndjson(&[]);
}

/// The same examples answered through `Peer` over the stdio transport (`--peer`).
#[cfg(feature = "tokio")]
#[test]
fn every_specification_example_over_ndjson_through_a_peer() {
    spec_examples_over_ndjson(&["--peer"]);
}

fn spec_examples_over_ndjson(extra: &[&str]) {
    let mut input = Vec::new();
    for (_, example, _) in SPEC_EXAMPLES {
        // One message per line: the multi-line examples are joined.
        input.extend(example.bytes().map(|b| if b == b'\n' { b' ' } else { b }));
        input.push(b'\n');
    }
    let output = run_server(&[&["--framing", "ndjson"], extra].concat(), &input);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(values(ndjson_bodies(&output.stdout)), expected_answers());
}

#[test]
fn every_specification_example_over_content_length() {
    spec_examples_over_content_length(&[]);
}

#[cfg(feature = "tokio")]
#[test]
fn every_specification_example_over_content_length_through_a_peer() {
    spec_examples_over_content_length(&["--peer"]);
}

fn spec_examples_over_content_length(extra: &[&str]) {
    let mut input = Vec::new();
    for (i, (_, example, _)) in SPEC_EXAMPLES.iter().enumerate() {
        // As real peers write headers: vscode-jsonrpc (Content-Length only) and
        // python-lsp-jsonrpc (with Content-Type), alternating.
        if i % 2 == 0 {
            input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", example.len()).as_bytes());
        } else {
            input.extend_from_slice(
                format!(
                    "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n",
                    example.len()
                )
                .as_bytes(),
            );
        }
        input.extend_from_slice(example.as_bytes());
    }
    let output = run_server(&[&["--framing", "content-length"], extra].concat(), &input);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(values(content_length_bodies(&output.stdout)), expected_answers());
}

#[test]
fn an_oversized_line_is_answered_and_the_next_is_served() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"echo","params":["{}"],"id":1}}"#,
        "x".repeat(5000)
    );
    let input = format!(
        "{big}\n{}\n\r\n{}",
        r#"{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":2}"#,
        r#"{"jsonrpc":"2.0","method":"get_data","id":3}"#
    );
    let output = run_server(&["--framing", "ndjson", "--max-frame", "1024"], input.as_bytes());
    assert!(output.status.success());
    let answers = values(ndjson_bodies(&output.stdout));
    assert_eq!(answers.len(), 3, "{}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[0]["id"], Value::Null);
    assert_eq!(answers[1], serde_json::json!({"jsonrpc":"2.0","id":2,"result":3}));
    // The last line had no newline: served at end of input.
    assert_eq!(
        answers[2],
        serde_json::json!({"jsonrpc":"2.0","id":3,"result":["hello",5]})
    );
}

#[test]
fn an_oversized_frame_is_answered_and_skipped() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"echo","params":["{}"],"id":1}}"#,
        "x".repeat(5000)
    );
    let small = r#"{"jsonrpc":"2.0","method":"echo","params":{"k":[1,"é"]},"id":"b"}"#;
    let input = format!(
        "Content-Length: {}\r\n\r\n{big}content-length: {}\r\n\r\n{small}",
        big.len(),
        small.len()
    );
    let output = run_server(
        &["--framing", "content-length", "--max-frame", "1024"],
        input.as_bytes(),
    );
    assert!(output.status.success());
    let answers = values(content_length_bodies(&output.stdout));
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(
        answers[1],
        serde_json::json!({"jsonrpc":"2.0","id":"b","result":{"k":[1,"é"]}})
    );
}

#[test]
fn a_garbage_header_is_answered_then_the_stream_ends() {
    let input = b"Content-Length: 2\r\n\r\n[]Content-Length: lots\r\n\r\n[]";
    let output = run_server(&["--framing", "content-length"], input);
    assert!(!output.status.success(), "a fatal framing error is an error exit");
    let answers = values(content_length_bodies(&output.stdout));
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["error"]["code"], -32600); // `[]`
    assert_eq!(answers[1]["error"]["code"], -32700); // the header
    assert!(!output.stderr.is_empty());
}

#[test]
fn a_frame_cut_off_by_the_end_of_input_is_answered() {
    let output = run_server(
        &["--framing", "content-length"],
        b"Content-Length: 50\r\n\r\n{\"jsonrpc\":",
    );
    assert!(output.status.success());
    let answers = values(content_length_bodies(&output.stdout));
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["error"]["code"], -32700);
}

#[test]
fn many_messages_in_one_stream() {
    let mut input = String::new();
    for i in 0..5000 {
        input.push_str(&format!(
            r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},1],"id":{i}}}"#
        ));
        input.push('\n');
        input.push_str(r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#);
        input.push('\n');
    }
    let output = run_server(&["--framing", "ndjson"], input.as_bytes());
    assert!(output.status.success());
    let answers = values(ndjson_bodies(&output.stdout));
    assert_eq!(answers.len(), 5000);
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer["id"], i);
        assert_eq!(answer["result"], i as i64 - 1);
    }
}

#[test]
fn bad_arguments_are_a_usage_error() {
    for args in [&[][..], &["--framing", "xml"][..], &["--bogus"][..]] {
        let output = run_server(args, b"");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("usage"));
    }
}

/// `examples/stdio_client.rs` against this server, both loops (`serve` and `Peer`), both
/// framings: 10,000 checked `subtract` calls with up to 256 in flight.
#[cfg(feature = "tokio")]
#[test]
fn stdio_client_calls_the_server() {
    let server = example_binary("spec_server");
    for framing in ["content-length", "ndjson"] {
        for peer in [false, true] {
            let mut command = Command::new(example_binary("stdio_client"));
            command
                .args(["--framing", framing, "--"])
                .arg(&server)
                .args(["--framing", framing]);
            if peer {
                command.arg("--peer");
            }
            let output = command.output().expect("run stdio_client");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "{framing}, peer {peer}: {stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                stdout.contains("calls=10000 answered=10000 errors=0 "),
                "{framing}, peer {peer}: {stdout}"
            );
        }
    }
}
