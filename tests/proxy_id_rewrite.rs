//! The gateway's id rewrite on raw frames (`rpcwire::proxy`), as properties over requests and
//! responses in any member order and spacing, with ids of every kind and params that hold
//! `"id"` members of their own: rewriting a request's id changes nothing else; restoring the
//! client's id after a rewrite gives back the client's bytes exactly; an upstream answer
//! restored to the client's id keeps every other byte. Also batches split into their
//! elements and joined again.
#![cfg(feature = "tokio")]

use bytes::Bytes;
use proptest::prelude::*;
use rpcwire::proxy::{batch_elements, join_batch, IdSlot};
use rpcwire::{IdKind, Message};

/// Id texts that must come back exactly as written.
fn id_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("18446744073709551616".to_owned()),
        Just("-0".to_owned()),
        Just("1.50".to_owned()),
        Just("1.5e3".to_owned()),
        Just("-2E-07".to_owned()),
        Just("null".to_owned()),
        Just(r#""\u00e9""#.to_owned()),
        Just(r#""é""#.to_owned()),
        Just(r#""a\"b\\c""#.to_owned()),
        Just(r#""""#.to_owned()),
        "[a-z0-9 _-]{0,12}".prop_map(|s| format!("\"{s}\"")),
    ]
}

/// Params that hold ids of their own, and strings that look like members.
fn params_text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("[]".to_owned())),
        Just(Some(r#"[{"id":5,"to":"0x1"},"latest"]"#.to_owned())),
        Just(Some(r#"{"id": "x", "nested": {"id": null}}"#.to_owned())),
        Just(Some(r#"["\"id\":7", "id"]"#.to_owned())),
        (0u32..1000, "[a-z]{0,8}").prop_map(|(n, s)| Some(format!(r#"[{n}, "{s}", {{"id": {n}}}]"#))),
    ]
}

/// Whitespace between tokens.
fn space() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just(""), Just(" "), Just("\n"), Just("\t "), Just("\r\n  ")]
}

/// A JSON object with `members` in the order given by `order` and spacing from `spaces`.
fn object(members: &[(String, String)], order: &[usize], spaces: &[&str]) -> String {
    let mut out = String::from(spaces[0]);
    out.push('{');
    for (n, &index) in order.iter().enumerate() {
        let (key, value) = &members[index % members.len()];
        if n > 0 {
            out.push(',');
        }
        let s = |k: usize| spaces[(n * 3 + k) % spaces.len()];
        out.push_str(&format!("{}\"{key}\"{}:{}{value}", s(1), s(2), s(3)));
    }
    out.push_str(spaces[spaces.len() - 1]);
    out.push('}');
    out
}

fn members_in_order(count: usize) -> impl Strategy<Value = Vec<usize>> {
    Just((0..count).collect::<Vec<_>>()).prop_shuffle()
}

fn parse_single(bytes: &Bytes) -> Message<'_> {
    rpcwire::parse(bytes)
        .expect("valid")
        .single()
        .expect("one message")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn rewrite_then_restore_is_the_identity(
        id in id_text(),
        gateway_id in any::<u32>(),
        method in "[a-zA-Z_]{1,16}",
        params in params_text(),
        order in members_in_order(4),
        spaces in proptest::collection::vec(space(), 4..12),
    ) {
        let mut members = vec![
            ("jsonrpc".to_owned(), "\"2.0\"".to_owned()),
            ("id".to_owned(), id.clone()),
            ("method".to_owned(), format!("\"{method}\"")),
        ];
        members.extend(params.clone().map(|p| ("params".to_owned(), p)));
        let order: Vec<usize> = order.into_iter().filter(|&i| i < members.len()).collect();
        let original = Bytes::from(object(&members, &order, &spaces));
        let message = parse_single(&original);
        let slot = IdSlot::find(&original, &message).expect("a request has an id");
        prop_assert_eq!(slot.id_text(), id.as_bytes());

        // Upstream: the gateway's id, the rest unchanged.
        let upstream = slot.replace(gateway_id.to_string().as_bytes());
        let forwarded = parse_single(&upstream);
        prop_assert_eq!(forwarded.id().unwrap().as_u64(), Some(u64::from(gateway_id)));
        prop_assert_eq!(forwarded.method(), Some(method.as_str()));
        let raw_params = |m: &Message<'_>| match m {
            Message::Request(r) => r.raw_params().map(|p| p.get().to_owned()),
            _ => None,
        };
        prop_assert_eq!(raw_params(&forwarded), params);
        let (before, after) = slot.around();
        prop_assert_eq!(&upstream[..before.len()], &before[..]);
        prop_assert_eq!(&upstream[upstream.len() - after.len()..], &after[..]);

        // Back: the client's id restored gives the client's bytes.
        let back = IdSlot::find(&upstream, &forwarded).unwrap().replace(slot.id_text());
        prop_assert_eq!(back, original);
    }

    #[test]
    fn an_upstream_answer_gets_the_clients_id_and_keeps_the_rest(
        id in id_text(),
        gateway_id in any::<u32>(),
        failed in any::<bool>(),
        order in members_in_order(3),
        spaces in proptest::collection::vec(space(), 4..12),
    ) {
        let payload = if failed {
            ("error".to_owned(), r#"{"code":-32000,"message":"execution reverted","data":{"id":1}}"#.to_owned())
        } else {
            ("result".to_owned(), r#"{"id":9,"hash":"0xab","logs":[1.50,-0]}"#.to_owned())
        };
        let members = vec![
            ("jsonrpc".to_owned(), "\"2.0\"".to_owned()),
            ("id".to_owned(), gateway_id.to_string()),
            payload,
        ];
        let answer = Bytes::from(object(&members, &order, &spaces));
        let message = parse_single(&answer);
        let slot = IdSlot::find(&answer, &message).unwrap();
        let restored = slot.replace(id.as_bytes());
        let (before, after) = slot.around();
        let mut expected = before.to_vec();
        expected.extend_from_slice(id.as_bytes());
        expected.extend_from_slice(&after);
        prop_assert_eq!(&restored[..], &expected[..]);
        if id == "null" && !failed {
            // A success with a null id is not a valid response (only error responses may
            // have one): a gateway answering a request whose id was null must not send it.
            let refused = rpcwire::parse(&restored).unwrap_err();
            prop_assert_eq!(refused.kind(), &rpcwire::ParseErrorKind::NullIdSuccess);
            return Ok(());
        }
        let parsed = parse_single(&restored);
        let back = parsed.id().unwrap();
        let kind = if id == "null" { IdKind::Null } else if id.starts_with('"') { IdKind::String } else { IdKind::Number };
        prop_assert_eq!(back.kind(), kind);
        let again = IdSlot::find(&restored, &parsed).unwrap();
        prop_assert_eq!(again.id_text(), id.as_bytes());
    }

    #[test]
    fn a_batch_splits_into_its_elements_and_joins_again(
        ids in proptest::collection::vec(id_text(), 1..8),
        spaces in proptest::collection::vec(space(), 2..6),
    ) {
        let elements: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":[{{"id":0}}]}}"#))
            .collect();
        let frame = Bytes::from(format!("{}[{}]{}", spaces[0], elements.join(&format!("{},{}", spaces[1], spaces[spaces.len() - 1])), spaces[1]));
        let split = batch_elements(&frame).expect("an array");
        prop_assert_eq!(split.len(), elements.len());
        for ((piece, element), id) in split.iter().zip(&elements).zip(&ids) {
            prop_assert_eq!(&piece[..], element.as_bytes());
            let message = parse_single(piece);
            let slot = IdSlot::find(piece, &message).unwrap();
            prop_assert_eq!(slot.id_text(), id.as_bytes());
        }
        let joined = join_batch(&split);
        let expected = format!("[{}]", elements.join(","));
        prop_assert_eq!(&joined[..], expected.as_bytes());
    }
}

#[test]
fn what_is_not_a_batch_has_no_elements() {
    for text in [&b"{}"[..], b"[1,", b"", b"  7 ", b"[1] x"] {
        assert!(batch_elements(&Bytes::from_static(text)).is_none(), "{text:?}");
    }
    assert_eq!(batch_elements(&Bytes::from_static(b" [ ] ")).unwrap().len(), 0);
    assert_eq!(&join_batch(&[])[..], b"[]");
}
