//! Several servers under one endpoint: their names as prefixes of tool and prompt names
//! (`NAME__tool`), requests routed by prefix (or, for resources, by which server listed the
//! URI), list results merged, and one `initialize` answer for all. Everything a server
//! wrote is passed on byte for byte but the one `name` member rewritten.

use bytes::{BufMut, Bytes, BytesMut};

use crate::encode;
use crate::json::iter::member_value_range;
use crate::message::{JsonBytes, Params};

/// Between a server's name and a tool's or prompt's name.
pub const SEPARATOR: &str = "__";

/// Which server `prefixed` (`NAME__rest`) belongs to, and the name without the prefix.
pub(crate) fn split_name<'a>(prefixed: &'a str, names: &[Box<str>]) -> Option<(usize, &'a str)> {
    let (name, rest) = prefixed.split_once(SEPARATOR)?;
    let index = names.iter().position(|known| &**known == name)?;
    Some((index, rest))
}

/// `object` with its member `member`, a string, set to `value` (the rest byte for byte);
/// `None` when it has no such member.
pub(crate) fn with_member(object: &[u8], member: &str, value: &str) -> Option<Bytes> {
    let mut text = BytesMut::with_capacity(value.len() + 2);
    encode::write_str(&mut text, value);
    with_member_json(object, member, std::str::from_utf8(&text).ok()?)
}

/// `object` with its member `member` set to the JSON text `value` (the rest byte for byte);
/// `None` when it has no such member.
pub(crate) fn with_member_json(object: &[u8], member: &str, value: &str) -> Option<Bytes> {
    let range = member_value_range(object, member)?;
    let mut out = BytesMut::with_capacity(object.len() + value.len());
    out.put_slice(&object[..range.start]);
    out.put_slice(value.as_bytes());
    out.put_slice(&object[range.end..]);
    Some(out.freeze())
}

/// The string member `member` of `object`, decoded.
pub(crate) fn string_member(object: &str, member: &str) -> Option<String> {
    Params::new(object).get(member)?.decode::<String>().ok()
}

/// A list method's results from several servers, merged into one result with every element
/// of `key` (`tools`, `prompts`, `resources`, `resourceTemplates`), each server's in turn;
/// with `prefix`, each element's `name` gets its server's name before it. No `nextCursor`:
/// the pages were all fetched.
pub(crate) fn merge_lists(key: &str, parts: &[(usize, JsonBytes)], prefix: Option<&[Box<str>]>) -> Bytes {
    let mut out = BytesMut::with_capacity(parts.iter().map(|(_, part)| part.len()).sum::<usize>() + 32);
    out.put_slice(b"{");
    encode::write_str(&mut out, key);
    out.put_slice(b":[");
    let mut first = true;
    for (server, part) in parts {
        let Some(elements) = Params::new(part.as_str()).get(key) else {
            continue;
        };
        for element in Params::new(elements.get()).iter() {
            if !first {
                out.put_u8(b',');
            }
            first = false;
            let text = element.get().as_bytes();
            let renamed = prefix.and_then(|names| {
                let name = string_member(element.get(), "name")?;
                with_member(text, "name", &format!("{}{SEPARATOR}{name}", names[*server]))
            });
            match renamed {
                Some(renamed) => out.put_slice(&renamed),
                None => out.put_slice(text),
            }
        }
    }
    out.put_slice(b"]");
    // A result of the stateless revision says it is complete (every page was).
    if parts
        .iter()
        .any(|(_, part)| Params::new(part.as_str()).get("resultType").is_some())
    {
        out.put_slice(br#","resultType":"complete""#);
    }
    out.put_slice(b"}");
    out.freeze()
}

/// The `initialize` answer for several servers: the revision every one agreed on (the
/// oldest of theirs), the union of their capabilities, the gateway as the server, and
/// their instructions each under its name.
pub(crate) fn merge_initialize(results: &[(usize, JsonBytes)], names: &[Box<str>]) -> Bytes {
    let mut version: Option<String> = None;
    let values = decoded(results);
    for (_, value) in &values {
        if let Some(theirs) = value["protocolVersion"].as_str() {
            if version.as_deref().map_or(true, |ours| theirs < ours) {
                version = Some(theirs.to_owned());
            }
        }
    }
    let mut answer = serde_json::json!({
        "protocolVersion": version.unwrap_or_default(),
        "capabilities": union_of_capabilities(&values),
        "serverInfo": gateway_info(),
    });
    with_instructions(&mut answer, &values, names);
    Bytes::from(serde_json::to_vec(&answer).unwrap_or_default())
}

/// The `server/discover` answer for several servers (the stateless revision): the revisions
/// every one supports, the union of their capabilities, the gateway as the server, their
/// instructions each under its name, and the shortest time any lets its answer be kept
/// (private when any says so).
pub(crate) fn merge_discover(results: &[(usize, JsonBytes)], names: &[Box<str>]) -> Bytes {
    let values = decoded(results);
    let listed = |value: &serde_json::Value| -> Vec<String> {
        value["supportedVersions"]
            .as_array()
            .map(|versions| {
                versions
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut versions = values.first().map(|(_, value)| listed(value)).unwrap_or_default();
    for (_, value) in &values[1.min(values.len())..] {
        let theirs = listed(value);
        versions.retain(|version| theirs.contains(version));
    }
    let ttl = values
        .iter()
        .filter_map(|(_, value)| value["ttlMs"].as_u64())
        .min()
        .unwrap_or(0);
    let public = values
        .iter()
        .all(|(_, value)| value["cacheScope"].as_str() == Some("public"));
    let mut answer = serde_json::json!({
        "resultType": "complete",
        "ttlMs": ttl,
        "cacheScope": if public { "public" } else { "private" },
        "supportedVersions": versions,
        "capabilities": union_of_capabilities(&values),
        "serverInfo": gateway_info(),
        "_meta": { "io.modelcontextprotocol/serverInfo": gateway_info() },
    });
    with_instructions(&mut answer, &values, names);
    Bytes::from(serde_json::to_vec(&answer).unwrap_or_default())
}

/// The results that are JSON objects, decoded.
fn decoded(results: &[(usize, JsonBytes)]) -> Vec<(usize, serde_json::Value)> {
    results
        .iter()
        .filter_map(|(server, result)| Some((*server, result.decode::<serde_json::Value>().ok()?)))
        .collect()
}

/// Every capability any server offers, with each flag on when one has it on.
fn union_of_capabilities(
    values: &[(usize, serde_json::Value)],
) -> serde_json::Map<String, serde_json::Value> {
    let mut capabilities = serde_json::Map::new();
    for (_, value) in values {
        if let Some(offered) = value["capabilities"].as_object() {
            for (name, capability) in offered {
                let merged = capabilities
                    .entry(name.clone())
                    .or_insert_with(|| serde_json::json!({}));
                if let (Some(merged), Some(capability)) = (merged.as_object_mut(), capability.as_object()) {
                    for (flag, on) in capability {
                        if on.as_bool() != Some(false) || !merged.contains_key(flag) {
                            merged.insert(flag.clone(), on.clone());
                        }
                    }
                }
            }
        }
    }
    capabilities
}

/// Their instructions, each under its server's name, when any has some.
fn with_instructions(
    answer: &mut serde_json::Value,
    values: &[(usize, serde_json::Value)],
    names: &[Box<str>],
) {
    let instructions: Vec<String> = values
        .iter()
        .filter_map(|(server, value)| {
            Some(format!("{}: {}", names[*server], value["instructions"].as_str()?))
        })
        .collect();
    if !instructions.is_empty() {
        answer["instructions"] = serde_json::Value::String(instructions.join("\n\n"));
    }
}

fn gateway_info() -> serde_json::Value {
    serde_json::json!({ "name": "rpcwire-mcp-gateway", "version": env!("CARGO_PKG_VERSION") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<Box<str>> {
        vec!["math".into(), "text".into()]
    }

    fn json(text: &str) -> JsonBytes {
        JsonBytes::new(Bytes::copy_from_slice(text.as_bytes())).unwrap()
    }

    #[test]
    fn names_split_at_the_first_separator_of_a_known_server() {
        let names = names();
        assert_eq!(split_name("math__add", &names), Some((0, "add")));
        assert_eq!(split_name("text__to__upper", &names), Some((1, "to__upper")));
        assert_eq!(split_name("other__x", &names), None);
        assert_eq!(split_name("add", &names), None);
    }

    #[test]
    fn one_member_is_rewritten_and_the_rest_kept_byte_for_byte() {
        let object = br#"{ "name" : "add", "inputSchema":{"type":"object","x":1.50}}"#;
        let renamed = with_member(object, "name", "math__add").unwrap();
        assert_eq!(
            &renamed[..],
            br#"{ "name" : "math__add", "inputSchema":{"type":"object","x":1.50}}"#
        );
        assert!(with_member(br#"{"a":1}"#, "name", "x").is_none());
    }

    #[test]
    fn lists_are_merged_with_their_servers_names() {
        let parts = [
            (
                0,
                json(r#"{"tools":[{"name":"add","inputSchema":{"$schema":"s","b":1}}],"nextCursor":"c"}"#),
            ),
            (1, json(r#"{"tools":[]}"#)),
            (1, json(r#"{"tools":[{"name":"upper"},{"title":"no name"}]}"#)),
        ];
        let merged = merge_lists("tools", &parts, Some(&names()));
        assert_eq!(
            &merged[..],
            br#"{"tools":[{"name":"math__add","inputSchema":{"$schema":"s","b":1}},{"name":"text__upper"},{"title":"no name"}]}"#
        );
        let resources = merge_lists(
            "resources",
            &[(0, json(r#"{"resources":[{"uri":"a://1","name":"one"}]}"#))],
            None,
        );
        assert_eq!(&resources[..], br#"{"resources":[{"uri":"a://1","name":"one"}]}"#);
    }

    #[test]
    fn initialize_answers_merge_capabilities_and_take_the_oldest_revision() {
        let results = [
            (
                0,
                json(
                    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"m"},"instructions":"adds"}"#,
                ),
            ),
            (
                1,
                json(
                    r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"prompts":{}},"serverInfo":{"name":"t"}}"#,
                ),
            ),
        ];
        let merged: serde_json::Value =
            serde_json::from_slice(&merge_initialize(&results, &names())).unwrap();
        assert_eq!(merged["protocolVersion"], "2025-06-18");
        assert_eq!(merged["capabilities"]["tools"]["listChanged"], true);
        assert!(merged["capabilities"]["prompts"].is_object());
        assert_eq!(merged["serverInfo"]["name"], "rpcwire-mcp-gateway");
        assert_eq!(merged["instructions"], "math: adds");
    }

    #[test]
    fn discoveries_agree_on_the_revisions_all_support_and_the_strictest_caching() {
        let results = [
            (
                0,
                json(
                    r#"{"resultType":"complete","supportedVersions":["2025-11-25","2026-07-28"],"ttlMs":500,"cacheScope":"public","capabilities":{"tools":{}}}"#,
                ),
            ),
            (
                1,
                json(
                    r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":100,"cacheScope":"private","capabilities":{"prompts":{}},"instructions":"greets"}"#,
                ),
            ),
        ];
        let merged: serde_json::Value = serde_json::from_slice(&merge_discover(&results, &names())).unwrap();
        assert_eq!(merged["supportedVersions"], serde_json::json!(["2026-07-28"]));
        assert_eq!(
            (merged["ttlMs"].as_u64(), merged["cacheScope"].as_str()),
            (Some(100), Some("private"))
        );
        assert!(merged["capabilities"]["tools"].is_object() && merged["capabilities"]["prompts"].is_object());
        assert_eq!(merged["instructions"], "text: greets");
        assert_eq!(merged["resultType"], "complete");
        let public = [(
            0,
            json(r#"{"supportedVersions":["2026-07-28"],"cacheScope":"public"}"#),
        )];
        let merged: serde_json::Value = serde_json::from_slice(&merge_discover(&public, &names())).unwrap();
        assert_eq!(
            (merged["ttlMs"].as_u64(), merged["cacheScope"].as_str()),
            (Some(0), Some("public"))
        );
        // The stateless revision's lists say they are complete.
        let lists = [(0, json(r#"{"resultType":"complete","tools":[{"name":"a"}]}"#))];
        assert_eq!(
            &merge_lists("tools", &lists, None)[..],
            br#"{"tools":[{"name":"a"}],"resultType":"complete"}"#
        );
    }
}
