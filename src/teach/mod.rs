//! Teaching the encoding: how bytes make values (`explain`), primitives on
//! their own (`primitive`), and what changes between versions and releases.

pub mod explain;
pub mod primitive;
