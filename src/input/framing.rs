//! Whether pasted bytes are size-prefixed frames, or one frame that lost its
//! 4-byte size prefix on the way (copied from a dissector's payload field,
//! or from a client library's debug log, which print the message alone).

use crate::decode::{decode_frame, DecodeOptions};
use crate::schema::Catalogue;
use bytes::{BufMut, Bytes, BytesMut};

/// How the input's frames are delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Size-prefixed frames, unless the bytes read as one frame without its
    /// prefix and not as frames with one ([`missing_size_prefix`]).
    Auto,
    /// Size-prefixed frames, as Kafka sends them: the bytes as given.
    Prefixed,
    /// One frame without its size prefix: a prefix is added.
    Bare,
}

/// `bytes` delimited as `framing` says: with a size prefix added when it is
/// missing (said to `say`, with the way to read the bytes as given), or
/// why they cannot be one frame.
pub(crate) fn as_framed(
    cat: &Catalogue,
    bytes: Bytes,
    framing: Framing,
    opts: &DecodeOptions,
    say: &mut dyn FnMut(&str),
) -> Result<Bytes, String> {
    match framing {
        Framing::Prefixed => Ok(bytes),
        Framing::Bare => {
            with_size_prefix(&bytes).ok_or_else(|| "the input is too long for one frame".into())
        }
        Framing::Auto => {
            let Some(added) = missing_size_prefix(cat, &bytes, opts) else {
                return Ok(bytes);
            };
            let claimed = added.claimed.map_or_else(
                || "they are fewer than the 4 bytes of a size".to_string(),
                |size| {
                    format!(
                        "as given, the first 4 bytes would be a size of {size} where {} bytes follow",
                        bytes.len().saturating_sub(4)
                    )
                },
            );
            say(&format!("the input reads as one frame without its 4-byte size prefix ({claimed}): decoded with the prefix added, so offsets count it; --framing prefixed reads the bytes as given"));
            Ok(added.bytes)
        }
    }
}

/// What a missing size prefix looked like, for the note that says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedPrefix {
    /// The bytes with the 4-byte prefix in front.
    pub bytes: Bytes,
    /// What the first four bytes claimed as a size, read as given (`None`
    /// when there were fewer than four).
    pub claimed: Option<i32>,
}

/// `bytes` with a size prefix added when they do not split into
/// size-prefixed frames as given but, with one added, decode as one frame
/// without an error under `opts` (a request unless `opts` says otherwise).
/// `None` when the bytes are frames as given, or read no better without.
pub fn missing_size_prefix(
    cat: &Catalogue,
    bytes: &[u8],
    opts: &DecodeOptions,
) -> Option<AddedPrefix> {
    if splits_into_frames(bytes) || bytes.is_empty() {
        return None;
    }
    let prefixed = with_size_prefix(bytes)?;
    let frame = decode_frame(cat, prefixed.clone(), 0, opts);
    if frame.error.is_some() {
        return None;
    }
    let claimed = bytes
        .first_chunk::<4>()
        .map(|size| i32::from_be_bytes(*size));
    Some(AddedPrefix {
        bytes: prefixed,
        claimed,
    })
}

/// The bytes behind a 4-byte big-endian size prefix; `None` past what a
/// size prefix can hold.
pub(crate) fn with_size_prefix(bytes: &[u8]) -> Option<Bytes> {
    let size = i32::try_from(bytes.len()).ok()?;
    let mut out = BytesMut::with_capacity(bytes.len() + 4);
    out.put_i32(size);
    out.put_slice(bytes);
    Some(out.freeze())
}

/// Whether the bytes are a chain of size-prefixed frames that ends exactly
/// where they do.
fn splits_into_frames(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some((size, after)) = rest.split_first_chunk::<4>() else {
            return false;
        };
        let Ok(size) = usize::try_from(i32::from_be_bytes(*size)) else {
            return false;
        };
        if size > after.len() {
            return false;
        }
        rest = &after[size..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_of_frames_are_told_from_other_bytes() {
        assert!(splits_into_frames(&[0, 0, 0, 2, 9, 9]));
        assert!(splits_into_frames(&[0, 0, 0, 1, 9, 0, 0, 0, 0]));
        assert!(!splits_into_frames(&[0, 0, 0, 3, 9, 9]), "cut short");
        assert!(!splits_into_frames(&[0, 0, 0, 1, 9, 0, 0]), "a cut prefix");
        assert!(!splits_into_frames(&[0xff, 0xff, 0xff, 0xff]), "negative");
    }

    #[test]
    fn a_prefix_holds_the_length() {
        let b = with_size_prefix(&[7, 8, 9]).unwrap();
        assert_eq!(&b[..], &[0, 0, 0, 3, 7, 8, 9]);
    }
}
