//! `BuildError`: why a message could not be built.

/// Why building a message failed.
///
/// ```
/// use rpcwire_wire::{BuildError, Request};
/// let err = Request::new(1u64, "m").with_params(&5).unwrap_err();
/// assert!(matches!(err, BuildError::ParamsNotStructured));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// serde_json could not serialize the value.
    #[error("cannot serialize value: {0}")]
    Serialize(#[source] serde_json::Error),
    /// JSON-RPC 2.0 requires `params` to be an array or an object.
    #[error("params must be a JSON array or object")]
    ParamsNotStructured,
    /// Only an error response may have a `null` id (the id of a request that could not be
    /// read); a successful one answers a request, whose id it repeats.
    #[error("a successful response must not have a null id")]
    NullIdSuccess,
}
