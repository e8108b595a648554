//! serde's `Deserialize` for [`Message`], [`Request`], [`Notification`] and [`Response`]:
//! through rpcwire's own strict parser, so `serde_json::from_str::<Message>` accepts exactly
//! what [`rpcwire_wire::parse`](crate::parse) accepts. It needs borrowed input (`from_str`,
//! `from_slice`): the message borrows from it.

use serde::de::{self, Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::Parsed;
use crate::message::{Message, Notification, Request, Response};

/// Reads one message with rpcwire's parser from borrowed JSON text.
fn parse_message<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Message<'de>, D::Error> {
    let raw = <&'de RawValue>::deserialize(deserializer)?;
    match super::parse(raw.get().as_bytes()) {
        Ok(Parsed::Single(message)) => Ok(message),
        Ok(Parsed::Batch(_)) => Err(de::Error::custom("expected one JSON-RPC message, found a batch")),
        Err(error) => Err(de::Error::custom(error)),
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Message<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_message(deserializer)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Request<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match parse_message(deserializer)? {
            Message::Request(request) => Ok(request),
            Message::Notification(_) => Err(de::Error::custom(
                "expected a request, found a notification (no id)",
            )),
            Message::Response(_) => Err(de::Error::custom("expected a request, found a response")),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Notification<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match parse_message(deserializer)? {
            Message::Notification(notification) => Ok(notification),
            Message::Request(_) => Err(de::Error::custom(
                "expected a notification, found a request (has an id)",
            )),
            Message::Response(_) => Err(de::Error::custom("expected a notification, found a response")),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Response<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match parse_message(deserializer)? {
            Message::Response(response) => Ok(response),
            _ => Err(de::Error::custom(
                "expected a response, found a request or notification",
            )),
        }
    }
}
