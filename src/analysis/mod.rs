//! Conversations in a capture: each request paired with its response
//! ([`exchange`]), what the pairs add up to per API, client, connection,
//! broker or topic ([`stats`]), and the selection `capture` and `stats` share
//! ([`filter`]).
//!
//! Facts come from the definitions: a field is an error code, a topic name or
//! a topic id by its spec, never by the text a view shows. Memory is the
//! requests awaiting a response and one accumulator per group, not the capture.

pub mod captured;
pub mod check;
pub mod compare;
pub mod diagnosis;
pub mod exchange;
pub mod expr;
pub mod filter;
pub mod finding;
pub mod finding_filter;
pub mod finding_groups;
pub mod in_order;
pub mod index;
pub mod inventory;
pub mod listing;
pub mod pending;
pub mod records_table;
pub mod report;
pub mod selection;
pub mod stats;
pub mod tables;

pub use exchange::{Exchange, Exchanges, FrameAt, Names, Needs, Observer, Outcome, Topic};
pub use filter::Filter;
pub use stats::{Grouping, Stats};
