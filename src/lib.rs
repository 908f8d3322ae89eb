//! kwire: shows exactly what a Kafka protocol message looks like on the wire.
//!
//! Data flow: input bytes ([`input`]) → frames and the schema-driven decoder
//! over the catalogue ([`decode`], [`schema`]) → the annotated tree
//! ([`decode::Node`]) → renderers ([`render`]). [`docs`] gathers the
//! documentation pages that `render::page` draws.

pub mod analysis;
pub mod budget;
pub mod capture;
pub mod decode;
pub mod docs;
pub mod encode;
pub mod input;
pub mod live;
pub mod protocol;
pub mod render;
pub mod schema;
pub mod teach;
pub mod text;
pub mod tui;
