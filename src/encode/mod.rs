//! The encoder: the decoder's JSON contract → bytes, over the same catalogue.

pub mod example;
pub mod fields;
pub mod frame;
pub mod realistic;
pub(crate) mod records;
pub mod writer;

pub use fields::{EncodeError, RawValues};
pub use frame::{encode_body, encode_frame, encode_frame_exact, example_header, FrameSpec};
