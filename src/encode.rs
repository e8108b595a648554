//! Encoder: messages and responses written straight into `BytesMut`.
