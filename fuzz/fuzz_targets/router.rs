//! Any bytes as one frame, answered by a `Router` end to end: never a panic; the answer is
//! a response or a batch of responses that rpcwire parses; every request gets exactly one
//! answer carrying its id, in the order of the input; an input that does not parse gets
//! one error answer with the id that could be read from it (null otherwise).
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rpcwire::dispatch::{NoParams, Reply, Router};
use rpcwire::{ErrorCode, ErrorObject, Id, Message, Params, Parsed};
use std::sync::OnceLock;

fn router() -> &'static Router {
    static ROUTER: OnceLock<Router> = OnceLock::new();
    ROUTER.get_or_init(|| {
        let mut router = Router::new();
        router.method("add", |(a, b): (i64, i64)| Ok(a.wrapping_add(b)));
        router.method("ping", |_: NoParams| Ok("pong"));
        router.method(
            "fail",
            |data: serde_json::Value| -> Result<(), ErrorObject<'static>> {
                Err(ErrorObject::new(ErrorCode::ServerError(-32001), "failed")
                    .with_data(&data)
                    .unwrap())
            },
        );
        router.raw_method(
            "first",
            |params: Option<Params<'_>>, reply: Reply<'_>| match params.and_then(|p| p.at(0)) {
                Some(first) => Ok(reply.raw(&first)),
                None => Ok(reply.null()),
            },
        );
        router.notification("tick", |_: serde_json::Value| {});
        router
    })
}

/// What must be answered, in order: the id of each answer (None = null).
fn expected_ids(data: &[u8]) -> Vec<Option<Id<'static>>> {
    match rpcwire::parse(data) {
        Err(error) => vec![error.id().cloned()],
        Ok(Parsed::Single(Message::Request(request))) => vec![Some(request.id().clone().into_owned())],
        Ok(Parsed::Single(_)) => Vec::new(),
        Ok(Parsed::Batch(batch)) => batch
            .iter()
            .filter_map(|element| match element {
                Ok(Message::Request(request)) => Some(Some(request.id().clone().into_owned())),
                Ok(_) => None,
                Err(error) => Some(error.id().cloned()),
            })
            .collect(),
    }
}

fn check_answer(message: Message<'_>, id: &Option<Id<'static>>, input: &[u8]) {
    let Message::Response(response) = message else {
        panic!("answer to {input:?} is not a response")
    };
    match id {
        Some(id) => assert_eq!(response.id(), id, "wrong id for {input:?}"),
        None => assert!(
            response.id().is_null(),
            "non-null id for unreadable id in {input:?}"
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut out = BytesMut::new();
    let answered = router().handle(data, &mut out);
    assert_eq!(answered, !out.is_empty());
    let ids = expected_ids(data);
    if ids.is_empty() {
        assert!(
            out.is_empty(),
            "answered {:?} to {data:?}",
            String::from_utf8_lossy(&out)
        );
        return;
    }
    let parsed = rpcwire::parse(&out).unwrap_or_else(|e| panic!("answer {out:?} does not parse: {e}"));
    let batch_input = data.iter().find(|b| !b" \t\r\n".contains(b)) == Some(&b'[');
    match parsed {
        Parsed::Single(message) => {
            assert!(
                !batch_input || rpcwire::parse(data).is_err(),
                "batch answered with one response"
            );
            assert_eq!(ids.len(), 1);
            check_answer(message, &ids[0], data);
        }
        Parsed::Batch(batch) => {
            assert_eq!(batch.len(), ids.len(), "answers to {data:?}: {out:?}");
            for (element, id) in batch.iter().zip(&ids) {
                check_answer(element.expect("an answer element parses"), id, data);
            }
        }
    }
});
