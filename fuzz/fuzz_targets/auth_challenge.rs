//! Any text as a `WWW-Authenticate` header: read into challenges or cut short, never a
//! panic; what is read is bounded, each scheme a token, each parameter name in lower case,
//! and reading the same text twice gives the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcwire::mcp::auth::Challenge;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let challenges = Challenge::parse(text);
    assert_eq!(challenges, Challenge::parse(text), "the same text read twice");
    assert!(challenges.len() <= 64);
    for challenge in &challenges {
        assert!(!challenge.scheme.is_empty());
        assert!(challenge
            .scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)));
        assert!(challenge.params.len() <= 64);
        for (name, _) in &challenge.params {
            assert_eq!(name, &name.to_ascii_lowercase());
            assert!(!name.is_empty());
        }
    }
});
