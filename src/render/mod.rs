//! Renderers: walk the annotated tree; never re-parse bytes.

/// Numbers written as text live with the text they are written into, below the decoder.
pub use crate::text::digits;
pub mod apis;
pub mod dump_log;
pub mod findings;
pub mod grid;
pub mod json;
pub mod listing;
pub mod notes;
pub mod page;
mod record_lines;
pub mod records_table;
pub mod report;
pub mod tables;
pub mod text_tree;
pub mod tls;
pub mod tree_json;
pub mod values;
