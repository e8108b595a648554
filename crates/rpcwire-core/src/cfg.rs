//! Feature gates for whole groups of items, as hyper's `src/cfg.rs` does: each item inside
//! gets its `cfg` and, on docs.rs (`--cfg docsrs`), the note of the feature it needs.

/// Items that need the `tokio` feature.
#[macro_export]
#[doc(hidden)] // for rpcwire's own crates
macro_rules! cfg_tokio {
    ($($item:item)*) => {
        $(
            #[cfg(feature = "tokio")]
            #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
            $item
        )*
    };
}

/// Items that need the `mcp` feature.
#[macro_export]
#[doc(hidden)] // for rpcwire's own crates
macro_rules! cfg_mcp {
    ($($item:item)*) => {
        $(
            #[cfg(feature = "mcp")]
            #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
            $item
        )*
    };
}

/// Items that need the `http` feature (used inside `tokio` modules only).
#[allow(unused_macros)]
#[macro_export]
#[doc(hidden)] // for rpcwire's own crates
macro_rules! cfg_http {
    ($($item:item)*) => {
        $(
            #[cfg(feature = "http")]
            #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
            $item
        )*
    };
}
