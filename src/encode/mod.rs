//! The encoder: the decoder's JSON contract → bytes, over the same catalogue.

pub mod example;
pub mod fields;
pub mod frame;
pub mod writer;

pub use fields::EncodeError;
pub use frame::{encode_body, encode_frame, example_header, FrameSpec};
