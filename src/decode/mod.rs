//! The decoder: bytes → annotated tree, driven by the catalogue.

pub mod context;
pub mod fields;
pub mod frame;
pub mod guess;
pub mod note;
pub mod payload;
pub mod problem;
pub mod reader;
pub mod records;
pub mod regions;
pub mod sasl;
pub mod secrets;
pub mod tape;
pub mod topic_ids;
pub mod tree;
pub mod values;

pub use crate::text::name::Name;
pub use frame::{decode_frame, decode_frame_reusing, decode_frames, for_each_frame, DecodeOptions};
pub use note::Note;
pub use problem::{ErrorKind, Warning, WarningKind};
pub use tree::{
    DecodeError, DeferredRecords, Direction, Frame, FrameKind, Kind, Node, RecordPart, Region,
    Role, SaslMechanism, Value, Wire,
};
