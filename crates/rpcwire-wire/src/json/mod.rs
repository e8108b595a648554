//! The lexical layer: JSON text, validated in one pass, without building values.
//!
//! Everything above it (messages, the JSON-RPC parser, the encoder) reads and writes JSON
//! through this module, which imports nothing else from the crate. Bottom up:
//!
//! - `kernels/`: the byte-scanning kernels (SSE2, AVX2, portable SWAR) and the validated
//!   `Span` that turns checked bytes into `&str`: the only `unsafe` code of
//!   the crate, which denies `unsafe_code` everywhere else;
//! - `string`, `number`, `value`: the grammar as functions from a position to the position
//!   after a string, a number or a whole value, validating everything they step over;
//! - `cursor`: a position and the grammar around it (what the JSON-RPC envelope reads with);
//! - `iter`: the elements of an array and the members of an object, as text;
//! - `escape`, `unescape`, `decimal`: writing and reading string contents and integers;
//! - [`validate`] and [`SyntaxError`], the public face of all this.
//!
//! ```
//! let err = rpcwire_wire::json::validate(b"[1, 2,]").unwrap_err();
//! assert_eq!(err.offset(), 6);
//! ```

pub(crate) mod cursor;
pub(crate) mod decimal;
mod error;
pub mod escape;
pub mod iter;
#[doc(hidden)]
#[allow(unsafe_code)]
pub mod kernels;
#[cfg(test)]
pub(crate) mod mutations;
pub(crate) mod number;
pub(crate) mod string;
pub(crate) mod unescape;
mod validate;
pub(crate) mod value;

pub use error::{SyntaxError, SyntaxErrorKind};
pub use validate::is_whitespace_char;
pub use validate::{validate, DEFAULT_MAX_DEPTH};
