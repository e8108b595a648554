//! Any bytes that parse: the owned message encoded with rpcwire's own encoder
//! (`encode::write_message`, and the batch writer for batches) parses back to an equal
//! message, and encoding that again gives the same bytes (the encoder is a fixed point
//! after one pass).
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rpcwire::encode::{write_message, BatchWriter};
use rpcwire::{Message, Parsed};

fn encode_one(message: &Message<'_>) -> BytesMut {
    let mut out = BytesMut::new();
    write_message(&mut out, message);
    out
}

fn check(message: Message<'_>) {
    let owned: Message<'static> = message.clone().into_owned();
    assert_eq!(owned, message);
    let first = encode_one(&owned);
    let again = match rpcwire::parse(&first) {
        Ok(Parsed::Single(again)) => again,
        other => panic!("{first:?} encoded from {owned:?} parses as {other:?}"),
    };
    assert_eq!(again, owned, "{first:?}");
    assert_eq!(encode_one(&again), first, "a second encoding differs");
}

fuzz_target!(|data: &[u8]| {
    match rpcwire::parse(data) {
        Ok(Parsed::Single(message)) => check(message),
        Ok(Parsed::Batch(batch)) => {
            let mut out = BytesMut::new();
            let mut writer = BatchWriter::new(&mut out);
            let mut messages = Vec::new();
            for element in &batch {
                if let Ok(message) = element {
                    write_message(writer.element(), &message);
                    messages.push(message.clone().into_owned());
                    check(message);
                }
            }
            let written = writer.finish();
            assert_eq!(written, messages.len());
            if messages.is_empty() {
                return;
            }
            match rpcwire::parse(&out) {
                Ok(Parsed::Batch(again)) => {
                    let again: Vec<_> = again
                        .iter()
                        .map(|m| m.expect("an encoded element parses").into_owned())
                        .collect();
                    assert_eq!(again, messages);
                }
                other => panic!("{out:?} parses as {other:?}"),
            }
        }
        Err(_) => {}
    }
});
