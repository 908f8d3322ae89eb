//! How the protocol writes the length of a string or bytes and the count of
//! an array: one of three prefixes, each with its own null. The one place
//! these rules live: the decoder reads by them (its quick path too), the
//! encoder writes by them, and notes and `--explain` name them.

use super::model::Primitive;

/// A length or count prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LengthPrefix {
    /// A uvarint of n+1, 0 for null: every length and count of a flexible
    /// version.
    Compact,
    /// An int16 n, -1 for null: a string's before flexible versions.
    Int16,
    /// An int32 n, -1 for null: bytes', records' and an array's count
    /// before flexible versions.
    Int32,
}

/// A written prefix that gives no length: below -1 for a fixed-width one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoLength;

impl LengthPrefix {
    /// The prefix of a value of `p` (a string, bytes or records), compact
    /// or not.
    #[inline(always)]
    pub fn of(p: Primitive, compact: bool) -> LengthPrefix {
        match (compact, p) {
            (true, _) => LengthPrefix::Compact,
            (false, Primitive::String) => LengthPrefix::Int16,
            (false, _) => LengthPrefix::Int32,
        }
    }

    /// The count prefix of an array, compact or not.
    #[inline(always)]
    pub(crate) fn of_array(compact: bool) -> LengthPrefix {
        match compact {
            true => LengthPrefix::Compact,
            false => LengthPrefix::Int32,
        }
    }

    /// Bytes the prefix takes, when that is fixed (a compact one's varies).
    #[inline(always)]
    pub fn width(self) -> Option<usize> {
        match self {
            LengthPrefix::Compact => None,
            LengthPrefix::Int16 => Some(2),
            LengthPrefix::Int32 => Some(4),
        }
    }

    /// The length (or count) that `written` gives: `None` for null.
    #[inline(always)]
    pub fn length(self, written: i64) -> Result<Option<usize>, NoLength> {
        match self {
            LengthPrefix::Compact => {
                Ok(written.checked_sub(1).and_then(|n| usize::try_from(n).ok()))
            }
            _ if written == -1 => Ok(None),
            _ => usize::try_from(written).map(Some).map_err(|_| NoLength),
        }
    }

    /// What is written for `length` (`None`: null): the inverse of
    /// [`LengthPrefix::length`].
    pub fn written(self, length: Option<usize>) -> i64 {
        match (self, length) {
            (LengthPrefix::Compact, None) => 0,
            (LengthPrefix::Compact, Some(n)) => n as i64 + 1,
            (_, None) => -1,
            (_, Some(n)) => n as i64,
        }
    }

    /// The largest length the prefix can write.
    pub(crate) fn max_length(self) -> usize {
        match self {
            // A compact length is read as a 32-bit uvarint of n+1.
            LengthPrefix::Compact => u32::MAX as usize - 1,
            LengthPrefix::Int16 => i16::MAX as usize,
            LengthPrefix::Int32 => i32::MAX as usize,
        }
    }

    /// The prefix at `buf[pos..]`, read where it is when its bytes are all
    /// before `end` and, for a compact one, it is the usual single byte:
    /// (the length, or `None` for null; the bytes the prefix takes).
    /// `None` when it is not so simple (a longer varint, too few bytes, a
    /// length below -1), for the reader to read it and say what is wrong.
    /// The decoder's quick path (a capture's text tree reads most strings so).
    #[inline(always)]
    pub fn peek(self, buf: &[u8], pos: usize, end: usize) -> Option<(Option<usize>, usize)> {
        let written = match self {
            LengthPrefix::Compact => {
                let b = *buf.get(pos).filter(|_| pos < end)?;
                if b >= 0x80 {
                    return None;
                }
                i64::from(b)
            }
            LengthPrefix::Int16 => {
                let head = buf.get(pos..pos + 2).filter(|_| 2 <= end - pos)?;
                i64::from(i16::from_be_bytes([head[0], head[1]]))
            }
            LengthPrefix::Int32 => {
                let head = buf.get(pos..pos + 4).filter(|_| 4 <= end - pos)?;
                i64::from(i32::from_be_bytes([head[0], head[1], head[2], head[3]]))
            }
        };
        let length = self.length(written).ok()?;
        Some((length, self.width().unwrap_or(1)))
    }

    /// How notes and `--explain` name the prefix.
    pub fn name(self) -> &'static str {
        match self {
            LengthPrefix::Compact => "compact",
            LengthPrefix::Int16 => "int16",
            LengthPrefix::Int32 => "int32",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_prefix_has_its_null_and_its_lengths() {
        use LengthPrefix::*;
        assert_eq!(Compact.length(0), Ok(None));
        assert_eq!(Compact.length(1), Ok(Some(0)));
        assert_eq!(Compact.length(8), Ok(Some(7)));
        for p in [Int16, Int32] {
            assert_eq!(p.length(-1), Ok(None));
            assert_eq!(p.length(0), Ok(Some(0)));
            assert_eq!(p.length(-2), Err(NoLength));
        }
        for p in [Compact, Int16, Int32] {
            for n in [None, Some(0), Some(5), Some(300)] {
                assert_eq!(p.length(p.written(n)), Ok(n), "{p:?} {n:?}");
            }
        }
        assert_eq!(LengthPrefix::of(Primitive::String, false), Int16);
        assert_eq!(LengthPrefix::of(Primitive::Bytes, false), Int32);
        assert_eq!(LengthPrefix::of(Primitive::Records, true), Compact);
        assert_eq!(LengthPrefix::of_array(false), Int32);
    }

    #[test]
    fn peek_reads_only_what_is_whole_and_simple() {
        use LengthPrefix::*;
        assert_eq!(Compact.peek(&[0x00], 0, 1), Some((None, 1)));
        assert_eq!(Compact.peek(&[0x03, 0x61], 0, 2), Some((Some(2), 1)));
        // A two-byte varint is left to the reader; so is a byte past `end`.
        assert_eq!(Compact.peek(&[0x80, 0x01], 0, 2), None);
        assert_eq!(Compact.peek(&[0x03], 0, 0), None);
        assert_eq!(Int16.peek(&[0xff, 0xff], 0, 2), Some((None, 2)));
        assert_eq!(Int16.peek(&[0x00, 0x05], 0, 2), Some((Some(5), 2)));
        assert_eq!(Int16.peek(&[0xff, 0xfe], 0, 2), None);
        assert_eq!(Int16.peek(&[0x00, 0x05], 0, 1), None);
        assert_eq!(Int32.peek(&[0, 0, 1, 0], 0, 4), Some((Some(256), 4)));
        assert_eq!(Int32.peek(&[0xff; 4], 0, 4), Some((None, 4)));
        assert_eq!(Int32.peek(&[0, 0, 1, 0], 1, 4), None);
    }
}
