//! Router: method name to handler, JSON-RPC 2.0 answer rules.
