//! Teaching the encoding: how bytes make values (`explain`), primitives on
//! their own (`primitive`), and what changes between versions (`version_diff`,
//! `compare`) and releases (`release_diff`), lined up by field path (`align`)
//! and shown as text (`diff_view`).

pub mod align;
pub mod compare;
pub mod diff_view;
pub mod explain;
pub mod primitive;
pub mod release_diff;
pub mod version_diff;
