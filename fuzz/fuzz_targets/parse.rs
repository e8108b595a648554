//! Any bytes: `parse` never panics, and whatever it accepts survives a round trip through
//! the owned types and serde_json, and reads the same through every accessor.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcwire::{Message, Parsed, ParsedFrame};

/// Touches every accessor of a parsed message, and checks that it serializes to JSON that
/// parses back to an equal message.
fn exercise(message: &Message<'_>) {
    if let Message::Request(request) = message {
        let _ = request.id().as_u64();
        let _ = request.id().as_str();
        if let Some(params) = request.params() {
            let count = params.len();
            if params.is_array() {
                assert_eq!(params.iter().count(), count);
            } else {
                assert_eq!(params.members().count(), count);
                for (key, value) in params.members() {
                    // The first member with this key is what `get` finds.
                    assert!(params.get(&key).is_some());
                    let _ = value.decode::<serde_json::Value>();
                }
            }
            let _ = params.decode::<serde_json::Value>();
        }
    }
    let text = serde_json::to_string(message).expect("a parsed message serializes");
    let again = rpcwire::parse(text.as_bytes()).expect("serialized message parses");
    let Parsed::Single(again) = again else {
        panic!("a single message serialized into a batch")
    };
    assert_eq!(&again, message, "round trip changed the message: {text}");
    assert_eq!(message.clone().into_owned(), *message);
}

fuzz_target!(|data: &[u8]| {
    let parsed = rpcwire::parse(data);
    let frame = ParsedFrame::parse(bytes::Bytes::copy_from_slice(data));
    assert_eq!(parsed.is_ok(), frame.is_ok());
    match parsed {
        Ok(Parsed::Single(message)) => {
            exercise(&message);
            if let Ok(frame) = frame {
                assert_eq!(frame.view().single(), Some(message));
            }
        }
        Ok(Parsed::Batch(batch)) => {
            assert!(!batch.is_empty());
            for element in &batch {
                match element {
                    Ok(message) => exercise(&message),
                    Err(error) => assert!(!error.is_syntax(), "syntax error inside a parsed batch"),
                }
            }
        }
        Err(error) => {
            assert!(error.offset() <= data.len().max(1 << 20));
            let _ = error.to_string();
            let _ = rpcwire::ErrorObject::from(&error);
        }
    }
});
