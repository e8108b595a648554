//! `NoParams`: the params type of a method that takes none.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// The params of a method that takes none: accepts absent params, `null`, `[]` and `{}`, and
/// rejects anything else (which the router answers with -32602).
///
/// ```
/// use rpcwire_core::dispatch::{NoParams, Router};
///
/// let mut router = Router::new();
/// router.method("get_data", |_: NoParams| Ok(("hello", 5)));
/// let mut out = bytes::BytesMut::new();
/// router.handle(br#"{"jsonrpc":"2.0","id":9,"method":"get_data"}"#, &mut out);
/// assert_eq!(&out[..], br#"{"jsonrpc":"2.0","id":9,"result":["hello",5]}"#);
///
/// out.clear();
/// router.handle(br#"{"jsonrpc":"2.0","id":9,"method":"get_data","params":[1]}"#, &mut out);
/// assert!(std::str::from_utf8(&out).unwrap().contains("-32602"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoParams;

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NoParamsVisitor;

        impl<'de> Visitor<'de> for NoParamsVisitor {
            type Value = NoParams;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("no params: null, [] or {}")
            }

            fn visit_unit<E: de::Error>(self) -> Result<NoParams, E> {
                Ok(NoParams)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoParams, A::Error> {
                match seq.next_element::<de::IgnoredAny>()? {
                    None => Ok(NoParams),
                    Some(_) => Err(de::Error::invalid_length(1, &self)),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoParams, A::Error> {
                match map.next_key::<de::IgnoredAny>()? {
                    None => Ok(NoParams),
                    Some(_) => Err(de::Error::invalid_length(1, &self)),
                }
            }
        }

        deserializer.deserialize_any(NoParamsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_the_empty_forms() {
        for ok in ["null", "[]", "{}", " [ ] "] {
            assert_eq!(serde_json::from_str::<NoParams>(ok).unwrap(), NoParams, "{ok}");
        }
        for bad in ["[1]", r#"{"a":1}"#, "0", "\"\"", "true"] {
            let error = serde_json::from_str::<NoParams>(bad).unwrap_err().to_string();
            assert!(
                error.contains("no params") || error.contains("invalid length"),
                "{bad}: {error}"
            );
        }
    }
}
