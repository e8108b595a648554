//! One HTTP/1.1 POST on a connection of its own (`connection: close`), written by hand so
//! that nothing but the server under test shapes the exchange: the status, the headers
//! (lower-cased names) and the body (parsed; `Null` when empty).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// What came back.
pub struct Posted {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Posted {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// POSTs `body` to `address` at `path` with `extra` header lines (`"name: value"`).
pub fn post_to(address: &str, path: &str, extra: &[&str], body: &str) -> Posted {
    let mut socket = TcpStream::connect(address).expect("connect to the server");
    socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!("POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n", body.len());
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    write!(socket, "{head}\r\n{body}").unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).expect("an answer");
    let status = answer[9..12].parse().expect("a status");
    let split = answer.find("\r\n\r\n").expect("a head");
    let headers = answer[..split]
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let body = &answer[split + 4..];
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"))
    };
    Posted {
        status,
        headers,
        body,
    }
}
