//! Captures as tables (`kwire export`): the tables' schema ([`schema`]) and
//! a capture read into their rows ([`read`]); `render::tables` writes them
//! as Parquet or JSON lines.

pub mod read;
pub mod schema;

pub use read::{export_capture, Counts, Reading};
pub use schema::{Cell, Kind, Sink, Table, SCHEMA_VERSION};
