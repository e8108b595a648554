//! serde `Serialize` and `Deserialize` for the message family.
//!
//! Serializing writes compact JSON-RPC 2.0: `"jsonrpc":"2.0"` first, absent optional members
//! omitted, ids and raw JSON written as their exact text (through serde_json's `RawValue`).
//!
//! Deserializing borrows from the input: ids, raw JSON and error objects here; the messages
//! themselves are read by rpcwire's own parser (`Deserialize` for them lives in
//! [`parse`](crate::parse), the layer above). It needs borrowed input (`from_str`,
//! `from_slice`); for a reader, read into a buffer first.

use std::borrow::Cow;

use serde::de::{self, Deserializer};
use serde::ser::{self, SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{
    ErrorCode, ErrorObject, Id, IdKind, Message, Notification, RawJson, Request, Response, ResponsePayload,
};

/// Borrows `text` (valid JSON) as serde_json's `RawValue`, which serializes verbatim.
fn as_raw_value<E: ser::Error>(text: &str) -> Result<&RawValue, E> {
    serde_json::from_str::<&RawValue>(text).map_err(E::custom)
}

impl Serialize for RawJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        as_raw_value::<S::Error>(self.get())?.serialize(serializer)
    }
}

/// Borrows the next value as JSON text checked by rpcwire's own validator: serde_json's
/// `RawValue` lets lone UTF-16 surrogate escapes (`"\ud800"`) through, which the parser
/// rejects, and `RawJson` promises text the parser accepts.
fn validated_raw<'de, D: Deserializer<'de>>(deserializer: D) -> Result<&'de str, D::Error> {
    let text = <&'de RawValue>::deserialize(deserializer)?.get();
    crate::json::validate(text.as_bytes()).map_err(de::Error::custom)?;
    Ok(text)
}

impl<'de: 'a, 'a> Deserialize<'de> for RawJson<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        validated_raw(deserializer).map(RawJson::from_validated)
    }
}

impl Serialize for Id<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.kind() {
            IdKind::Null => serializer.serialize_unit(),
            // Escapes are kept exactly as they arrived: the id goes out as raw JSON text.
            IdKind::String if self.raw().contains('\\') => {
                let quoted = format!("\"{}\"", self.raw());
                as_raw_value::<S::Error>(&quoted)?.serialize(serializer)
            }
            IdKind::String => serializer.serialize_str(self.raw()),
            IdKind::Number => {
                let text = self.raw();
                // Integers in canonical form go through the serializer's own integer path;
                // anything else (big, fractional, exponent, -0) verbatim as raw JSON.
                if let Some(n) = self.as_u64().filter(|n| n.to_string() == text) {
                    serializer.serialize_u64(n)
                } else if let Some(n) = self.as_i64().filter(|n| n.to_string() == text) {
                    serializer.serialize_i64(n)
                } else {
                    as_raw_value::<S::Error>(text)?.serialize(serializer)
                }
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = validated_raw(deserializer)?;
        let bytes = text.as_bytes();
        match bytes.first() {
            Some(b'"') => {
                let inner = &text[1..text.len() - 1];
                Ok(Id::from_string_text(inner, inner.contains('\\')))
            }
            Some(b'n') => Ok(Id::null()),
            Some(b'-' | b'0'..=b'9') => Ok(Id::from_number_text(text)),
            _ => Err(de::Error::custom("id must be a string, a number or null")),
        }
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.code())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        i64::deserialize(deserializer).map(ErrorCode::from)
    }
}

impl Serialize for ErrorObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2 + usize::from(self.data().is_some())))?;
        map.serialize_entry("code", &self.code())?;
        map.serialize_entry("message", self.message())?;
        if let Some(data) = self.data() {
            map.serialize_entry("data", data)?;
        }
        map.end()
    }
}

/// The shape of an error object for serde; strictness (duplicates, integer code) comes from
/// the parser when the object is part of a message.
#[derive(Deserialize)]
struct ErrorObjectFields<'a> {
    code: i64,
    #[serde(borrow)]
    message: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    data: Option<RawJson<'a>>,
}

/// A member that is present is `Some`, also when it is `null` (as the parser reads it).
fn present<'de: 'a, 'a, D: Deserializer<'de>>(deserializer: D) -> Result<Option<RawJson<'a>>, D::Error> {
    RawJson::deserialize(deserializer).map(Some)
}

impl<'de: 'a, 'a> Deserialize<'de> for ErrorObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = ErrorObjectFields::deserialize(deserializer)?;
        Ok(ErrorObject::from_parts(
            ErrorCode::from(fields.code),
            fields.message,
            fields.data,
        ))
    }
}

impl Serialize for Request<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3 + usize::from(self.raw_params().is_some())))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", self.id())?;
        map.serialize_entry("method", self.method())?;
        if let Some(params) = self.raw_params() {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Notification<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2 + usize::from(self.raw_params().is_some())))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", self.method())?;
        if let Some(params) = self.raw_params() {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Response<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", self.id())?;
        match self.payload() {
            ResponsePayload::Result(result) => map.serialize_entry("result", result)?,
            ResponsePayload::Error(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(request) => request.serialize(serializer),
            Message::Notification(notification) => notification.serialize(serializer),
            Message::Response(response) => response.serialize(serializer),
        }
    }
}
