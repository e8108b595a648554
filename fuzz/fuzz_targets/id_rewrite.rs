//! Any bytes as a frame a gateway forwards: when it parses as a request or response (or a
//! batch of them, split with `batch_elements`), the frame with its id replaced by the
//! gateway's parses to the same message under the new id, the bytes around the id are
//! untouched, and putting the original id back gives the original bytes (restore after
//! rewrite is the identity). Never a panic, whatever the input.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use rpcwire::proxy::{batch_elements, join_batch, IdSlot};
use rpcwire::{Message, Parsed};

/// The gateway's ids: a number, a large number and a string, as a gateway may choose.
const GATEWAY_IDS: [&[u8]; 3] = [b"7", b"18446744073709551616", br#""gw-\u00e9""#];

fn same_apart_from_id(a: &Message<'_>, b: &Message<'_>) -> bool {
    match (a, b) {
        (Message::Request(a), Message::Request(b)) => {
            a.method() == b.method() && a.raw_params().map(|p| p.get()) == b.raw_params().map(|p| p.get())
        }
        (Message::Response(a), Message::Response(b)) => {
            a.result().map(|r| r.get()) == b.result().map(|r| r.get()) && a.error_object() == b.error_object()
        }
        (Message::Notification(a), Message::Notification(b)) => a == b,
        _ => false,
    }
}

fn check(text: &Bytes) {
    let Ok(Parsed::Single(message)) = rpcwire::parse(text) else {
        return;
    };
    let Some(slot) = IdSlot::find(text, &message) else {
        assert!(
            matches!(message, Message::Notification(_)),
            "no id slot in {text:?}"
        );
        return;
    };
    let original_id = message.id().unwrap();
    let (before, after) = slot.around();
    assert_eq!(before.len() + slot.id_text().len() + after.len(), text.len());
    for gateway_id in GATEWAY_IDS {
        let upstream = slot.replace(gateway_id);
        assert_eq!(&upstream[..before.len()], &before[..]);
        assert_eq!(&upstream[upstream.len() - after.len()..], &after[..]);
        let forwarded = match rpcwire::parse(&upstream) {
            Ok(Parsed::Single(forwarded)) => forwarded,
            other => panic!("{upstream:?} (from {text:?}) parses as {other:?}"),
        };
        let new_slot = IdSlot::find(&upstream, &forwarded).expect("the new id is found");
        assert_eq!(new_slot.id_text(), gateway_id);
        assert!(
            same_apart_from_id(&message, &forwarded),
            "{text:?} became {upstream:?}"
        );
        let back = new_slot.replace(slot.id_text());
        assert_eq!(back, *text, "restore after rewrite");
        let restored = rpcwire::parse(&back).unwrap().single().unwrap();
        assert_eq!(restored.id(), Some(original_id));
    }
}

fuzz_target!(|data: &[u8]| {
    let text = Bytes::copy_from_slice(data);
    check(&text);
    if let Some(elements) = batch_elements(&text) {
        for element in &elements {
            check(element);
        }
        let joined = join_batch(&elements);
        let again = batch_elements(&joined).expect("a joined batch splits");
        assert_eq!(again, elements);
    }
});
