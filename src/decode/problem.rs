//! What went wrong or looks wrong in a frame, typed: a view or a check
//! dispatches on the kind, never on the wording. The wording is for people.

use serde::Serialize;

/// Why decoding stopped, or why some record data is damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ErrorKind {
    /// A value the encoding does not allow (a negative length, an unknown type).
    #[default]
    Invalid,
    /// The bytes end before what they declare (a read past the end, a count
    /// or length larger than the bytes left, a frame cut short).
    Truncated,
    /// Bytes follow the body within the frame's declared size.
    TrailingBytes,
    /// The header names an API or version the definitions do not have.
    UnknownMessage,
    /// A stored checksum that is not the bytes' checksum.
    Crc,
    /// A batch length the format cannot have (shorter than its fixed fields).
    BatchLength,
    /// A batch's record count disagrees with the records in its bytes.
    RecordsCount,
    /// A record's length is not what its fields used: they read, but the
    /// batch is not what a producer writes, and a broker refuses it.
    RecordLength,
    /// A compression codec the format does not define.
    Codec,
    /// Compressed data that does not decompress.
    Decompression,
    /// Over an input budget: not damage in the data, but not shown either.
    Budget,
}

/// Where decoding stopped and what it expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    /// Offset within the frame.
    pub offset: usize,
    pub expected: String,
}

impl DecodeError {
    pub fn new(kind: ErrorKind, offset: usize, expected: impl Into<String>) -> Self {
        DecodeError {
            kind,
            offset,
            expected: expected.into(),
        }
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at offset 0x{:04x} ({}): {}",
            self.offset, self.offset, self.expected
        )
    }
}

impl std::error::Error for DecodeError {}

/// What a non-fatal finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarningKind {
    /// A varint written with more bytes than its value needs.
    OverlongVarint,
    /// Null (-1 or compact 0) in a field that is not nullable at this version.
    NullNotNullable,
    /// A tag not greater than the one before it in a tagged-fields section.
    TagOrder,
    /// A tag of a field that is not tagged at this version.
    TagVersion,
    /// A tagged entry whose declared size is not what its value used.
    TagSize,
    /// Bytes after an embedded struct (consumer-protocol bytes, record payloads).
    EmbeddedTrailing,
    /// An embedded struct (a record payload, consumer-protocol bytes) that
    /// does not decode as its schema says.
    EmbeddedInvalid,
    /// A record payload no schema describes (an unknown record type or version).
    UnknownPayload,
    /// A records field whose bytes do not start with a record batch (or message set).
    NotBatches,
    /// Record offsets that do not rise within a batch, or go backwards
    /// across the batches of a log.
    RecordOffsets,
    /// A batch's lastOffsetDelta that is not its last record's offsetDelta
    /// (a fetched batch of a compacted topic may end past its last record).
    LastOffsetDelta,
    /// A producer's sequence numbers that do not go on from its batch before.
    RecordSequence,
    /// Damage in record data, also in [`crate::decode::Frame::record_damage`]: of what kind.
    RecordDamage(ErrorKind),
    /// An ApiVersions response in the v0 layout to a version the broker does
    /// not serve: what brokers do, not a fault.
    ApiVersionsV0,
    /// The command line said one thing, the bytes another (`--api`, `--version`).
    Override,
    /// The frame was decoded as something it did not say it was (a response guessed).
    Guessed,
}

/// A non-fatal finding: the frame decodes, but something in it is off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub kind: WarningKind,
    /// Where, within the frame (or the decompressed data the text names).
    pub offset: Option<usize>,
    /// The line the tree views print (led by the offset when there is one).
    pub text: String,
    /// Where the words after the offset start in `text`.
    detail_from: u8,
}

impl Warning {
    pub fn new(kind: WarningKind, offset: Option<usize>, text: impl Into<String>) -> Self {
        Warning {
            kind,
            offset,
            text: text.into(),
            detail_from: 0,
        }
    }

    /// A warning at `offset`, its text led by the offset as every warning line is.
    pub fn at(kind: WarningKind, offset: usize, text: std::fmt::Arguments<'_>) -> Self {
        let lead = format!("0x{offset:04x}: ");
        Warning {
            kind,
            offset: Some(offset),
            detail_from: lead.len() as u8,
            text: lead + &text.to_string(),
        }
    }

    /// The warning of data decompressed from the bytes at `from`, placed
    /// there with its own offset kept in its words (`d:0x…`), so that no
    /// offset into decompressed data reads as one into the input; `None`
    /// for a warning its offset does not lead.
    pub(crate) fn decompressed_from(&self, from: usize) -> Option<Warning> {
        let at = self.offset.filter(|_| self.detail_from > 0)?;
        Some(Warning::at(
            self.kind,
            from,
            format_args!(
                "in the data decompressed from here, at d:0x{at:04x}: {}",
                self.detail()
            ),
        ))
    }

    /// What the warning says, without the offset that leads its line.
    pub fn detail(&self) -> &str {
        self.text
            .get(usize::from(self.detail_from)..)
            .unwrap_or(&self.text)
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Warnings are their text in JSON: the tree JSON's `warnings` stay strings.
impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}
