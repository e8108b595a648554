//! `Limits`: the bounds the parser enforces, checked before the work they bound.

use crate::json::DEFAULT_MAX_DEPTH;

/// Bounds the parser enforces before doing the work they bound.
///
/// ```
/// use rpcwire_wire::{Limits, Parser};
/// let limits = Limits::default().with_max_depth(16).with_max_batch_len(100);
/// assert_eq!(limits.max_size(), 1 << 20);
/// let parser = Parser::new(limits);
/// assert!(parser.parse(b"[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]").unwrap_err().is_syntax());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_size: usize,
    max_depth: usize,
    max_batch_len: usize,
}

impl Default for Limits {
    /// 1 MiB per message, 128 levels of nesting, 1,000 messages per batch.
    fn default() -> Limits {
        Limits {
            max_size: 1 << 20,
            max_depth: DEFAULT_MAX_DEPTH,
            max_batch_len: 1000,
        }
    }
}

impl Limits {
    /// The largest input accepted, in bytes (at most `u32::MAX`; larger values are clamped).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Limits::default().with_max_size(64).max_size(), 64);
    /// ```
    pub fn with_max_size(mut self, bytes: usize) -> Limits {
        self.max_size = bytes.min(u32::MAX as usize);
        self
    }

    /// The deepest nesting accepted; the message object itself is level 1.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Limits::default().with_max_depth(8).max_depth(), 8);
    /// ```
    pub fn with_max_depth(mut self, levels: usize) -> Limits {
        self.max_depth = levels;
        self
    }

    /// The most elements a batch may have.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Limits::default().with_max_batch_len(3).max_batch_len(), 3);
    /// ```
    pub fn with_max_batch_len(mut self, elements: usize) -> Limits {
        self.max_batch_len = elements;
        self
    }

    /// The configured maximum size in bytes.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Limits::default().max_size(), 1_048_576);
    /// ```
    pub fn max_size(&self) -> usize {
        self.max_size
    }

    /// The configured maximum nesting depth.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Limits::default().max_depth(), 128);
    /// ```
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The configured maximum batch length.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Limits::default().max_batch_len(), 1000);
    /// ```
    pub fn max_batch_len(&self) -> usize {
        self.max_batch_len
    }
}
