//! What the decoder learns on the way and hands down to what it decodes
//! further on, records included.

use super::problem::Warning;
pub use super::topic_ids::TopicIds;
use super::tree::{DecodeError, Node, Region};
use crate::budget::Budget;
use crate::schema::{Catalogue, MessageSpec};
use bytes::Bytes;

/// What the decoder learns on the way and needs further on: which topic the
/// records belong to, the group protocol type, the topic names a capture tied
/// to topic ids, and resource limits.
/// Its `Default` is [`super::fields`]' (which hands down its own entry as
/// [`Self::embedded`]).
#[derive(Clone, Debug)]
pub struct Context {
    /// The topic of the records being decoded (from `--topic` or the enclosing topic name).
    pub topic: Option<String>,
    /// `--topic` was given: names in the message do not override it.
    pub topic_forced: bool,
    /// The group's protocol type ("consumer" makes member metadata decodable).
    pub protocol_type: Option<String>,
    /// The input's budget for decompression and what it expands into.
    pub budget: Budget,
    /// Topic names by topic id, learned across a capture (empty elsewhere).
    pub topic_ids: TopicIds,
    /// How structs inside record bytes are decoded (internal topics' keys and
    /// values, control records): the struct decoder's entry, handed down by
    /// the decoder that owns it, so that the record format need not know it.
    pub embedded: EmbeddedDecoder,
    /// Records fields over this many bytes are drawn later, a batch at a time
    /// ([`crate::decode::DecodeOptions::defer_records_over`]).
    pub defer_records_over: Option<usize>,
    /// Arrays of primitives or plain structs whose elements take more than this many bytes
    /// are drawn later, an element at a time
    /// ([`crate::decode::DecodeOptions::defer_elements_over`]).
    pub defer_elements_over: Option<usize>,
    /// Arrays of structs that hold records are left too
    /// ([`crate::decode::DecodeOptions::defer_record_arrays`]).
    pub defer_record_arrays: bool,
    /// Records fields left for drawing within a left array's elements, with
    /// their places among the frame's warnings and damage as the frame's
    /// decode found them (`LeftArray::records`): what a walk
    /// of those elements alone marks its records fields with.
    pub placed_records: std::sync::Arc<[super::tree::DeferredRecords]>,
    /// Only whether the frame fits is wanted
    /// ([`crate::decode::DecodeOptions::fits_only`]).
    pub fits_only: bool,
}

/// A struct decoded up to an error, and the error.
pub type PartialStruct = (Node, DecodeError);

/// Decodes `spec` at a version from a range of a buffer, in a region: the
/// decoded struct and its warnings, or the partial struct and its error
/// (boxed: it is large).
pub(crate) type EmbeddedDecoder = fn(
    &Catalogue,
    &Bytes,
    &MessageSpec,
    i16,
    (usize, usize),
    Region,
) -> Result<(Node, Vec<Warning>), Box<PartialStruct>>;
