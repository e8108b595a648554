//! The methods of the JSON-RPC 2.0 specification's examples, registered on a `Router`.
//! Shared by `examples/spec_server.rs` and the tests (`#[path]`-included there).

use rpcwire::dispatch::{NoParams, Reply, Router};
use rpcwire::{ErrorObject, Params};

/// `subtract`'s params: `[minuend, subtrahend]` or `{"minuend": a, "subtrahend": b}`.
///
/// Deserialized by hand rather than as a `#[serde(untagged)]` enum: untagged enums buffer
/// the input into an intermediate tree (allocating), a visitor reads it in place.
pub struct Subtract {
    /// The number to subtract from.
    pub minuend: i64,
    /// The number to subtract.
    pub subtrahend: i64,
}

impl<'de> serde::Deserialize<'de> for Subtract {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IgnoredAny, MapAccess, SeqAccess, Visitor};

        struct SubtractVisitor;

        impl<'de> Visitor<'de> for SubtractVisitor {
            type Value = Subtract;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("[minuend, subtrahend] or {\"minuend\": a, \"subtrahend\": b}")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Subtract, A::Error> {
                let minuend = seq
                    .next_element()?
                    .ok_or_else(|| Error::invalid_length(0, &self))?;
                let subtrahend = seq
                    .next_element()?
                    .ok_or_else(|| Error::invalid_length(1, &self))?;
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(Error::invalid_length(3, &self));
                }
                Ok(Subtract { minuend, subtrahend })
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Subtract, A::Error> {
                #[derive(serde::Deserialize)]
                #[serde(field_identifier, rename_all = "lowercase")]
                enum Field {
                    Minuend,
                    Subtrahend,
                    #[serde(other)]
                    Other,
                }
                let (mut minuend, mut subtrahend) = (None, None);
                while let Some(key) = map.next_key::<Field>()? {
                    match key {
                        Field::Minuend if minuend.is_none() => minuend = Some(map.next_value()?),
                        Field::Subtrahend if subtrahend.is_none() => subtrahend = Some(map.next_value()?),
                        Field::Minuend => return Err(Error::duplicate_field("minuend")),
                        Field::Subtrahend => return Err(Error::duplicate_field("subtrahend")),
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Subtract {
                    minuend: minuend.ok_or_else(|| Error::missing_field("minuend"))?,
                    subtrahend: subtrahend.ok_or_else(|| Error::missing_field("subtrahend"))?,
                })
            }
        }

        deserializer.deserialize_any(SubtractVisitor)
    }
}

/// `sum`'s params: an array of integers, added up while they are read (no `Vec`).
pub struct Sum(pub i64);

impl<'de> serde::Deserialize<'de> for Sum {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SumVisitor;

        impl<'de> serde::de::Visitor<'de> for SumVisitor {
            type Value = Sum;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of integers")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Sum, A::Error> {
                let mut total = 0i64;
                while let Some(x) = seq.next_element::<i64>()? {
                    total = total.checked_add(x).ok_or_else(|| {
                        serde::de::Error::custom("the sum does not fit in a 64-bit integer")
                    })?;
                }
                Ok(Sum(total))
            }
        }

        deserializer.deserialize_seq(SumVisitor)
    }
}

fn overflow() -> ErrorObject<'static> {
    ErrorObject::invalid_params("the result does not fit in a 64-bit integer")
}

/// Registers `subtract`, `sum`, `get_data`, `echo`, and the notifications `update`,
/// `foobar`, `notify_hello`, `notify_sum`.
pub fn register(router: &mut Router) -> &mut Router {
    router
        .method("subtract", |p: Subtract| {
            p.minuend.checked_sub(p.subtrahend).ok_or_else(overflow)
        })
        .method("sum", |Sum(total)| Ok(total))
        .method("get_data", |_: NoParams| Ok(("hello", 5)))
        .raw_method("echo", |params: Option<Params<'_>>, reply: Reply<'_>| {
            Ok(match params {
                Some(params) => reply.raw(&params.raw()),
                None => reply.null(),
            })
        });
    for name in ["update", "foobar", "notify_hello", "notify_sum"] {
        router.raw_notification(name, |_: Option<Params<'_>>| {});
    }
    router
}
