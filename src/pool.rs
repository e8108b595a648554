//! Lock-free object pool and pooled buffers (issue: framing and pooled buffers).
