//! Record batches and what is inside them: RecordBatch v2, legacy message sets,
//! compression, control records and internal-topic payloads.

pub mod batch;
pub mod compression;
pub mod deferred;
pub mod each;
mod findings;
pub mod layout;
pub mod lines;
mod nodes;
pub mod order;
pub mod payload;
pub mod peek;
pub mod segment;
pub(crate) mod tape;
pub mod view;

pub use batch::BatchDecoder;
