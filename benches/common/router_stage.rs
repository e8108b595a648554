//! Stage "router W1 subtract": W1-shaped requests (`subtract` with positional params,
//! varying ids) answered end to end — parse, route, typed decode, handler, encode — by
//! rpcwire's `Router` and by the same server logic written with serde_json +
//! jsonrpsee-types, as a jsonrpsee-style server does it.

use std::collections::HashMap;
use std::hint::black_box;

use bytes::BytesMut;
use jsonrpsee_types::{ErrorObjectOwned, Id, Request, Response, ResponsePayload};
use rpcwire::dispatch::Router;

use super::stages::Stage;

#[path = "../../examples/common/spec_methods.rs"]
mod spec_methods;

pub const STAGE: &str = "router W1 subtract";

/// The `Stage` methods of an implementation that answers `self.inputs[i]` with
/// `self.handle(i)`.
macro_rules! per_request_stage {
    () => {
        fn messages(&self) -> usize {
            self.inputs.len()
        }
        fn bytes(&self) -> usize {
            self.inputs.iter().map(Vec::len).sum()
        }
        fn pass(&mut self) -> usize {
            (0..self.inputs.len()).map(|i| self.handle(i)).sum()
        }
        fn one(&mut self, i: usize) -> usize {
            self.handle(i)
        }
    };
}

/// The requests: W1's shape with `subtract`, ids 1..=256 (numbers and strings alternating).
pub fn requests() -> Vec<Vec<u8>> {
    (1..=256u32)
        .map(|i| {
            let id = if i % 2 == 0 {
                format!("{i}")
            } else {
                format!("\"req-{i}\"")
            };
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"subtract","params":[{},{}]}}"#,
                1000 + i,
                i % 97
            )
            .into_bytes()
        })
        .collect()
}

pub struct RpcwireRouter {
    router: Router,
    inputs: Vec<Vec<u8>>,
    out: BytesMut,
}

impl RpcwireRouter {
    fn handle(&mut self, i: usize) -> usize {
        self.out.clear();
        self.router.handle(&self.inputs[i], &mut self.out);
        black_box(&self.out);
        self.out.len()
    }
}

impl Stage for RpcwireRouter {
    const STAGE: &'static str = STAGE;
    const NAME: &'static str = "rpcwire Router::handle";
    const RPCWIRE: bool = true;

    fn new() -> Self {
        let mut router = Router::new();
        spec_methods::register(&mut router);
        RpcwireRouter {
            router,
            inputs: requests(),
            out: BytesMut::with_capacity(1024),
        }
    }
    per_request_stage!();
}

type Method = fn(Option<&serde_json::value::RawValue>) -> Result<i64, ErrorObjectOwned>;

/// The same logic with serde_json + jsonrpsee-types: `Request` deserialized by serde_json,
/// the method looked up in a `HashMap`, params decoded by serde_json, the answer built as a
/// jsonrpsee `Response` and serialized by serde_json into a reused buffer.
pub struct JsonrpseeServer {
    methods: HashMap<String, Method>,
    inputs: Vec<Vec<u8>>,
    out: Vec<u8>,
}

fn subtract(params: Option<&serde_json::value::RawValue>) -> Result<i64, ErrorObjectOwned> {
    let invalid =
        |e: serde_json::Error| ErrorObjectOwned::owned(-32602, "Invalid params", Some(e.to_string()));
    let params = params.ok_or_else(|| ErrorObjectOwned::owned(-32602, "Invalid params", None::<()>))?;
    let p: spec_methods::Subtract = serde_json::from_str(params.get()).map_err(invalid)?;
    p.minuend
        .checked_sub(p.subtrahend)
        .ok_or_else(|| ErrorObjectOwned::owned(-32602, "Invalid params", None::<()>))
}

impl JsonrpseeServer {
    fn handle(&mut self, i: usize) -> usize {
        self.out.clear();
        match serde_json::from_slice::<Request<'_>>(&self.inputs[i]) {
            Ok(request) => {
                let id: Id<'_> = request.id.clone();
                let payload = match self.methods.get(request.method.as_ref()) {
                    Some(method) => match method(request.params.as_deref()) {
                        Ok(result) => ResponsePayload::success(result),
                        Err(error) => ResponsePayload::error(error),
                    },
                    None => ResponsePayload::error(ErrorObjectOwned::owned(
                        -32601,
                        "Method not found",
                        None::<()>,
                    )),
                };
                let response = Response::new(payload, id);
                serde_json::to_writer(&mut self.out, &response).expect("serializable");
            }
            Err(_) => self.out.extend_from_slice(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            ),
        }
        black_box(&self.out);
        self.out.len()
    }
}

impl Stage for JsonrpseeServer {
    const STAGE: &'static str = STAGE;
    const NAME: &'static str = "serde_json + jsonrpsee-types";
    const RPCWIRE: bool = false;

    fn new() -> Self {
        let mut methods: HashMap<String, Method> = HashMap::new();
        methods.insert("subtract".to_owned(), subtract);
        JsonrpseeServer {
            methods,
            inputs: requests(),
            out: Vec::with_capacity(1024),
        }
    }
    per_request_stage!();
}

/// Both implementations answer every request identically (as JSON values).
pub fn verify() {
    let mut a = RpcwireRouter::new();
    let mut b = JsonrpseeServer::new();
    for i in 0..a.inputs.len() {
        a.handle(i);
        b.handle(i);
        let x: serde_json::Value = serde_json::from_slice(&a.out).expect("rpcwire answer is JSON");
        let y: serde_json::Value = serde_json::from_slice(&b.out).expect("baseline answer is JSON");
        assert_eq!(x, y, "request {i}");
        assert!(x.get("result").is_some(), "request {i} succeeds");
    }
}
