//! Lock-free correlation table for outgoing calls.
