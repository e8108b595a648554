//! The gateway example (`examples/gateway.rs`, `http` feature), started as a user starts it
//! on 127.0.0.1, in front of upstreams started the same way (`examples/http_server`, and
//! `examples/spec_server` as a `stdio:` child) and of faulty upstreams this test plays on
//! plain TCP sockets: one answering out of order, one answering with an id that matches
//! nothing, one answering garbage, one too slow, one dropping the connection with a request
//! under way. Every client request gets exactly one answer with its own id, and the gateway
//! serves on; an upstream killed mid-run is replaced by the other for safe methods.
#![cfg(all(unix, feature = "http", feature = "metrics"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/http_post.rs"]
mod http_post;
#[path = "support/listening_child.rs"]
mod listening_child;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use example_binary::example_binary;
use listening_child::{start_listening, Listening};
use serde_json::{json, Value};

/// POSTs `body` to the gateway; the status and the body (parsed, `Null` when empty).
fn post(address: &str, body: &str) -> (u16, Value) {
    let posted = http_post::post_to(address, "/", &[], body);
    (posted.status, posted.body)
}

fn gateway(upstreams: &[String], extra: &[&str]) -> Listening {
    let mut args = vec!["--listen", "127.0.0.1:0", "--timeout-ms", "500"];
    for upstream in upstreams {
        args.push("--upstream");
        args.push(upstream);
    }
    args.extend_from_slice(extra);
    start_listening(&example_binary("gateway"), &args)
}

/// The Prometheus page of a gateway started with `--metrics` (the status line included).
fn metrics_page(front: &Listening) -> String {
    let metrics = front
        .before
        .iter()
        .find_map(|line| line.strip_prefix("metrics on "))
        .expect("metrics on");
    let mut socket = TcpStream::connect(metrics).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        socket,
        "GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    socket.read_to_string(&mut page).unwrap();
    page
}

/// A TCP upstream speaking NDJSON, played by `behave` on each connection (a thread each);
/// its `tcp://` address.
fn fake_upstream(behave: fn(BufReader<TcpStream>, TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("tcp://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let writer = stream.try_clone().unwrap();
            std::thread::spawn(move || behave(BufReader::new(stream), writer));
        }
    });
    address
}

fn request_id(line: &str) -> Value {
    serde_json::from_str::<Value>(line).unwrap()["id"].clone()
}

#[test]
fn the_gateway_forwards_to_real_upstreams_and_survives_losing_one() {
    let http = start_listening(&example_binary("http_server"), &["--listen", "127.0.0.1:0"]);
    let spec_server = example_binary("spec_server");
    let upstreams = [
        format!("http://{}/", http.address),
        format!("stdio:{} --framing ndjson", spec_server.display()),
    ];
    let front = gateway(
        &upstreams,
        &[
            "--safe",
            "subtract",
            "--safe",
            "sum",
            "--metrics",
            "127.0.0.1:0",
            "--admin",
        ],
    );
    // The HTTP upstream goes by its host and port.
    let label = http.address.clone();
    let (status, answer) = post(
        &front.address,
        r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1.50}"#,
    );
    assert_eq!(
        (status, answer),
        (200, json!({"jsonrpc": "2.0", "id": 1.5, "result": 19}))
    );
    // Ids come back as written (1.50 above is only checked as a number by serde_json).
    let mut socket = TcpStream::connect(&front.address).unwrap();
    let body = r#"{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":18446744073709551616}"#;
    write!(socket, "POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut raw = String::new();
    socket.read_to_string(&mut raw).unwrap();
    assert!(
        raw.ends_with(r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":0}"#),
        "{raw}"
    );

    let (_, batch) = post(
        &front.address,
        r#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},
            {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
            {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},
            {"foo":"boo"},
            {"jsonrpc":"2.0","method":"get_data","id":"9"}]"#,
    );
    let batch = batch.as_array().unwrap().clone();
    assert_eq!(batch.len(), 4);
    assert_eq!(batch[0], json!({"jsonrpc": "2.0", "id": "1", "result": 7}));
    assert_eq!(batch[1]["error"]["code"], -32601);
    assert_eq!(batch[2]["error"]["code"], -32600);
    assert_eq!(
        batch[3],
        json!({"jsonrpc": "2.0", "id": "9", "result": ["hello", 5]})
    );
    let (status, empty) = post(
        &front.address,
        r#"[{"jsonrpc":"2.0","method":"update","params":[1]}]"#,
    );
    assert_eq!((status, empty), (204, Value::Null));

    drop(http); // killed
    for i in 0..6 {
        let (_, answer) = post(
            &front.address,
            &format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},1],"id":{i}}}"#),
        );
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": i, "result": i - 1}),
            "after the HTTP upstream died"
        );
    }
    let (_, stats) = post(
        &front.address,
        r#"{"jsonrpc":"2.0","method":"gateway_upstreams","id":0}"#,
    );
    assert!(
        stats["result"][0]["not_reached"].as_u64().unwrap() >= 1,
        "{stats}"
    );

    // The same, as Prometheus text.
    let page = metrics_page(&front);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let series = format!(
        r#"rpcwire_upstream_requests_total{{upstream="{label}",method="subtract",outcome="not_reached"}}"#
    );
    assert!(page.contains(&series), "{series} in {page}");
}

#[test]
fn out_of_order_answers_reach_their_own_clients() {
    // Reads two requests, then answers the second first.
    let upstream = fake_upstream(|mut reader, mut writer| loop {
        let (mut first, mut second) = (String::new(), String::new());
        if reader.read_line(&mut first).unwrap_or(0) == 0 || reader.read_line(&mut second).unwrap_or(0) == 0 {
            return;
        }
        for line in [&second, &first] {
            let params = serde_json::from_str::<Value>(line).unwrap()["params"].clone();
            let answer = json!({"jsonrpc": "2.0", "id": request_id(line), "result": params});
            let _ = writeln!(writer, "{answer}");
        }
    });
    let front = gateway(&[upstream], &[]);
    let clients: Vec<_> = (0..2)
        .map(|n| {
            let address = front.address.clone();
            std::thread::spawn(move || {
                post(
                    &address,
                    &format!(r#"{{"jsonrpc":"2.0","method":"echo","params":["client {n}"],"id":"c{n}"}}"#),
                )
            })
        })
        .collect();
    for (n, client) in clients.into_iter().enumerate() {
        let (_, answer) = client.join().unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": format!("c{n}"), "result": [format!("client {n}")]})
        );
    }
}

#[test]
fn foreign_ids_garbage_slowness_and_drops_become_error_answers() {
    let foreign = fake_upstream(|reader, mut writer| {
        for _line in reader.lines().map_while(Result::ok) {
            let _ = writeln!(writer, r#"{{"jsonrpc":"2.0","id":424242,"result":"not yours"}}"#);
        }
    });
    let garbage = fake_upstream(|reader, mut writer| {
        for _line in reader.lines().map_while(Result::ok) {
            let _ = writeln!(writer, "this is not JSON-RPC");
        }
    });
    let slow = fake_upstream(|reader, mut writer| {
        for line in reader.lines().map_while(Result::ok) {
            std::thread::sleep(Duration::from_millis(1500));
            let _ = writeln!(
                writer,
                "{}",
                json!({"jsonrpc": "2.0", "id": request_id(&line), "result": "late"})
            );
        }
    });
    let drops = fake_upstream(|mut reader, _writer| {
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        // Dropping both halves closes the connection with the request under way.
    });
    for (name, upstream) in [
        ("foreign id", foreign),
        ("garbage", garbage),
        ("slow", slow),
        ("drops", drops),
    ] {
        let front = gateway(&[upstream], &["--admin"]);
        for id in 0..2 {
            let (status, answer) = post(
                &front.address,
                &format!(r#"{{"jsonrpc":"2.0","method":"m","id":{id}}}"#),
            );
            assert_eq!(status, 200, "{name}");
            assert_eq!(answer["id"], id, "{name}: {answer}");
            assert_eq!(answer["error"]["code"], -32011, "{name}: {answer}");
        }
        // Still serving: its own method answers.
        let (_, stats) = post(
            &front.address,
            r#"{"jsonrpc":"2.0","method":"gateway_upstreams","id":"s"}"#,
        );
        assert_eq!(stats["id"], "s", "{name}");
        assert_eq!(stats["result"][0]["no_answer"], 2, "{name}: {stats}");
    }
}

#[test]
fn a_key_in_an_upstream_url_reaches_no_client_and_no_metric() {
    // The key comes from the environment (`${NAME}` in the URL), in the path and the query;
    // nothing listens at the upstream, so every call fails and says which upstream failed.
    std::env::set_var("RPCWIRE_TEST_PROVIDER_KEY", "SECRET-KEY-4711");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!(
        "http://127.0.0.1:{port}/v3/${{RPCWIRE_TEST_PROVIDER_KEY}}?apikey=${{RPCWIRE_TEST_PROVIDER_KEY}}"
    );
    let call = r#"{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":1}"#;
    let admin = r#"{"jsonrpc":"2.0","method":"gateway_upstreams","id":2}"#;
    let front = gateway(std::slice::from_ref(&url), &["--metrics", "127.0.0.1:0"]);
    let (_, failed) = post(&front.address, call);
    assert_eq!(failed["error"]["code"], -32010, "{failed}");
    let shown = failed.to_string();
    assert!(
        shown.contains(&format!("127.0.0.1:{port}")),
        "named by host and port: {shown}"
    );
    // Off without --admin: the method is forwarded like any other, and fails the same way.
    let (_, refused) = post(&front.address, admin);
    assert!(refused["result"].is_null(), "{refused}");
    let page = metrics_page(&front);
    assert!(page.contains(&format!("upstream=\"127.0.0.1:{port}\"")), "{page}");
    // With --admin and a label: the label, never the URL.
    let labelled = gateway(&[format!("primary={url}")], &["--admin"]);
    let (_, stats) = post(&labelled.address, admin);
    assert_eq!(stats["result"][0]["name"], "primary", "{stats}");
    let (_, failed_again) = post(&labelled.address, call);
    for text in [
        shown,
        refused.to_string(),
        page,
        stats.to_string(),
        failed_again.to_string(),
    ] {
        assert!(
            !text.contains("SECRET-KEY-4711") && !text.contains("/v3/"),
            "{text}"
        );
    }
    // A variable that is not set stops it at start-up, saying which.
    let stopped = std::process::Command::new(example_binary("gateway"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "https://eth.example/${RPCWIRE_TEST_UNSET_VARIABLE}",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(2), "{said}");
    assert!(
        said.contains("${RPCWIRE_TEST_UNSET_VARIABLE} is not set"),
        "{said}"
    );
}

/// Writes `text` to a config file of its own; its path.
fn config_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("rpcwire-gateway-{}-{name}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_config_file_in_front_of_two_upstreams_serves_and_check_says_what_is_wrong() {
    let one = start_listening(&example_binary("http_server"), &["--listen", "127.0.0.1:0"]);
    let two = start_listening(&example_binary("http_server"), &["--listen", "127.0.0.1:0"]);
    let good = config_file(
        "good",
        &format!(
            r#"
listen = "127.0.0.1:0"
timeout_ms = 2000
max_batch = 1000
hedge = 50
prefer_faster = true

[[upstream]]
label = "primary"
url = "http://{}/v3/${{RPCWIRE_TEST_KEY}}"

[[upstream]]
label = "backup"
url = "http://{}/"

[methods]
safe = ["subtract"]
deny = ["update"]
route = {{ subtract = ["backup", "primary"] }}

[chain]
track_heads_ms = 200
max_lag = 5
cache = true
head_ttl_ms = 500
log_chunk = 1000
"#,
            one.address, two.address
        ),
    );
    let path = good.to_str().unwrap();
    let checked = std::process::Command::new(example_binary("gateway"))
        .args(["--config", path, "--check"])
        .env("RPCWIRE_TEST_KEY", "SECRET-KEY-0042")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(
        said.contains("2 upstreams (primary, backup)") && !said.contains("SECRET"),
        "{said}"
    );

    // Served as the file says: both upstreams in turn, `update` denied; a flag after the file
    // adds to it.
    let served = config_file(
        "served",
        &std::fs::read_to_string(&good)
            .unwrap()
            .replace("${RPCWIRE_TEST_KEY}", "SECRET-KEY-0042"),
    );
    let front = start_listening(
        &example_binary("gateway"),
        &["--config", served.to_str().unwrap(), "--deny", "sum"],
    );
    for id in 0..4 {
        let (status, answer) = post(
            &front.address,
            &format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":{id}}}"#),
        );
        assert_eq!((status, &answer["result"]), (200, &json!(19)), "{answer}");
    }
    for denied in ["update", "sum"] {
        let (_, answer) = post(
            &front.address,
            &format!(r#"{{"jsonrpc":"2.0","method":"{denied}","params":[1],"id":9}}"#),
        );
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
    }

    // What is wrong is said with where it is.
    for (name, text, expected) in [
        ("unknown", "lisen = \"127.0.0.1:0\"\n", "unknown field `lisen`"),
        ("type", "max_batch = \"many\"\n", "line 1"),
        (
            "label",
            "[[upstream]]\nlabel = \"a/b\"\nurl = \"http://h:1/\"\n",
            "upstream label",
        ),
        ("none", "listen = \"127.0.0.1:0\"\n", "at least one --upstream"),
        (
            "route",
            "[[upstream]]\nurl = \"http://h:1/\"\n[methods]\nroute = { eth_call = [\"archive\"] }\n",
            "no upstream is labelled archive",
        ),
        ("chain", "[chain]\nmax_lagg = 5\n", "unknown field `max_lagg`"),
    ] {
        let path = config_file(name, text);
        let checked = std::process::Command::new(example_binary("gateway"))
            .args(["--config", path.to_str().unwrap(), "--check"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&checked.stderr);
        assert_eq!(checked.status.code(), Some(2), "{name}: {said}");
        assert!(said.contains(expected), "{name}: {said}");
        let _ = std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(good);
    let _ = std::fs::remove_file(served);
}
