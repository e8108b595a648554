//! The name an upstream goes by in answers, metrics and logs when none is given: never its
//! whole address, where providers put their API keys (`https://host/v3/KEY`, `?apikey=KEY`,
//! `user:KEY@host`).

/// The label of the upstream at `address`: the host of a URL (with its port when one is
/// written), without scheme, credentials, path, query or fragment; `stdio:` and the file name
/// of the program for `stdio:COMMAND` (its arguments left out); `upstream` for anything else.
///
/// ```
/// use rpcwire::proxy::upstream_label;
/// assert_eq!(upstream_label("https://mainnet.example/v3/SECRET"), "mainnet.example");
/// assert_eq!(upstream_label("wss://user:SECRET@node.example:8546/ws?key=SECRET"), "node.example:8546");
/// assert_eq!(upstream_label("tcp://127.0.0.1:8545"), "127.0.0.1:8545");
/// assert_eq!(upstream_label("stdio:/usr/bin/node server.js --key SECRET"), "stdio:node");
/// ```
pub fn upstream_label(address: &str) -> String {
    if let Some(command) = address.strip_prefix("stdio:") {
        let program = command.split_whitespace().next().unwrap_or_default();
        let name = program.rsplit('/').next().unwrap_or_default();
        return format!("stdio:{name}");
    }
    match crate::transport::url_parts(address) {
        Some((_, host, _)) if !host.is_empty() => host.to_owned(),
        _ => "upstream".to_owned(),
    }
}

/// `names` made unique: the second of a name is `NAME#2`, the third `NAME#3` (two upstreams
/// of one provider with two keys have one host).
pub(crate) fn unique(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .map(|name| {
            let mut unique = name.clone();
            let mut n = 1;
            while !seen.insert(unique.clone()) {
                n += 1;
                unique = format!("{name}#{n}");
            }
            unique
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_secret_of_an_address_is_in_its_label() {
        for (address, label) in [
            ("http://node:8545", "node:8545"),
            ("https://eth-mainnet.example/v2/KEY", "eth-mainnet.example"),
            ("https://a.example?apikey=KEY", "a.example"),
            ("https://a.example#KEY", "a.example"),
            ("ws://KEY@node/", "node"),
            ("wss://[::1]:8546/KEY", "[::1]:8546"),
            ("stdio:spec_server --token KEY", "stdio:spec_server"),
            ("stdio:", "stdio:"),
            ("https:///KEY", "upstream"),
            ("KEY", "upstream"),
        ] {
            assert_eq!(upstream_label(address), label, "{address}");
        }
    }

    #[test]
    fn repeated_names_are_numbered() {
        let names = ["a", "b", "a", "a", "a#2"].map(str::to_owned);
        assert_eq!(unique(names), ["a", "b", "a#2", "a#3", "a#2#2"]);
    }
}
