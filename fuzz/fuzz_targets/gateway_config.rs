//! Any bytes as `examples/gateway`'s config file: read as flags or refused with a reason,
//! never a panic; what it reads gives every flag that takes a value its value (the flags come
//! in the order the command line takes them), and reading the same text twice gives the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../examples/common/config.rs"]
mod config;

/// The flags that take no value.
const ALONE: [&str; 4] = ["--admin", "--coalesce", "--webpki-roots", "--check"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let first = config::flags(text);
    assert_eq!(first, config::flags(text), "the same text read twice");
    let Ok(flags) = first else {
        return;
    };
    let mut flags = flags.iter();
    while let Some(flag) = flags.next() {
        assert!(flag.starts_with("--"), "{flag:?} is not a flag");
        if !ALONE.contains(&flag.as_str()) {
            assert!(flags.next().is_some(), "{flag} has no value");
        }
    }
});
