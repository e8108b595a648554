//! rpcwire and serde_json must agree on whether bytes are valid JSON.
//!
//! The bytes go in as the params of a request, so that the parser validates them as
//! arbitrary JSON; serde_json parses the same wrapped text into a `Value` (with
//! `arbitrary_precision`, so huge numbers are grammar, not range, questions).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Both parsers limit nesting (serde_json at 128 levels); keep clear of the limits.
    if data.iter().filter(|&&b| b == b'[' || b == b'{').count() > 100 {
        return;
    }
    // serde_json gives its private tokens (`$serde_json::private::RawValue`, `…::Number`, the
    // keys of its raw-value and arbitrary-precision protocols) a meaning of their own, so
    // valid JSON holding them is not judged by JSON's grammar there (a campaign finding:
    // `{"$serde_json::private::RawValue":"0sseal:1ur}"}` is rejected by serde_json). rpcwire
    // reads them as ordinary keys (tests/parse_strictness.rs); no oracle for those here.
    if data.windows(22).any(|w| w == b"$serde_json::private::") {
        return;
    }
    let mut wrapped = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":["#.to_vec();
    wrapped.extend_from_slice(data);
    wrapped.extend_from_slice(b"]}");

    let ours = rpcwire::parse(&wrapped);
    let theirs = serde_json::from_slice::<serde_json::Value>(&wrapped);
    // rpcwire's verdict on the JSON alone: accepted, or rejected only as a JSON-RPC problem
    // (the data may close the params early and add, say, a duplicate member).
    let ours_valid_json = match &ours {
        Ok(_) => true,
        Err(error) => !error.is_syntax(),
    };
    assert_eq!(
        ours_valid_json,
        theirs.is_ok(),
        "rpcwire: {:?}, serde_json: {:?}, input: {:?}",
        ours.as_ref().err(),
        theirs.as_ref().err(),
        String::from_utf8_lossy(&wrapped)
    );
    // When both accept, the params decode to the same value.
    if let (Ok(rpcwire::Parsed::Single(rpcwire::Message::Request(request))), Ok(value)) = (ours, theirs) {
        let params: serde_json::Value = request
            .params()
            .expect("params present")
            .decode()
            .expect("decodes");
        assert_eq!(Some(&params), value.get("params"));
    }
});
