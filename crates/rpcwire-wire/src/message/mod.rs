//! The JSON-RPC 2.0 message family.
//!
//! Every type carries a lifetime `'a`: values produced by the parser borrow from the input
//! buffer (`'a` is the buffer's lifetime), values built with the constructors own their data
//! (`'static`). `into_owned()` detaches a borrowed value from its buffer.
//!
//! | type | what it is |
//! | --- | --- |
//! | [`Message`] | a [`Request`], a [`Notification`] or a [`Response`] |
//! | [`Id`] | a request id: number, string or null, kept as its exact JSON text |
//! | [`RawJson`] | validated JSON text, decoded only when asked |
//! | [`Params`] | a view of a request's params (an array or an object) |
//! | [`ErrorObject`], [`ErrorCode`] | the `error` member of a failed response |

mod build_error;
mod error_object;
mod id;
mod json_bytes;
mod message_enum;
mod params;
mod raw_json;
mod request;
mod response;
mod serde_impls;

pub use build_error::BuildError;
pub use error_object::{ErrorCode, ErrorObject};
pub use id::{Id, IdKind};
pub use json_bytes::JsonBytes;
pub use json_bytes::{id_range_within, range_within};
pub use message_enum::Message;
pub use params::{Params, ParamsIter};
pub use raw_json::RawJson;
pub use request::{Notification, Request};
pub use response::{Response, ResponsePayload};
