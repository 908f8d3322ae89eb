//! A bounds-checked cursor over a frame. Every read either returns its value or
//! a [`DecodeError`] naming the offset and what was expected; nothing panics and
//! nothing is allocated from an untrusted length before it is checked.

use super::problem::{DecodeError, ErrorKind};

#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Reads stop here (a tagged field's size limits its payload).
    end: usize,
}

/// An unsigned varint as read, with how it was encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uvarint {
    pub value: u64,
    pub len: usize,
    /// Encoded with more bytes than needed (Java accepts it; not canonical).
    pub overlong: bool,
}

impl<'a> Reader<'a> {
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            end: buf.len(),
        }
    }

    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn end(&self) -> usize {
        self.end
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    #[inline]
    pub fn buf(&self) -> &'a [u8] {
        self.buf
    }

    /// Narrow the readable end; returns the previous end to restore later.
    pub fn limit(&mut self, len: usize) -> usize {
        let old = self.end;
        self.end = self.pos.saturating_add(len).min(old);
        old
    }

    /// A reader of `buf[start..end]`, at `start`.
    #[inline]
    pub fn over(buf: &'a [u8], (start, end): (usize, usize)) -> Self {
        let mut r = Reader::new(buf);
        r.seek(start);
        r.limit(end.saturating_sub(start));
        r
    }

    pub(crate) fn restore_end(&mut self, end: usize) {
        self.end = end.min(self.buf.len());
    }

    #[inline]
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.end);
    }

    #[inline]
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.short(n, what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The error of a read of `n` bytes past the end (kept out of line: reads rarely fail).
    #[cold]
    #[inline(never)]
    fn short(&self, n: usize, what: &str) -> DecodeError {
        DecodeError::new(
            ErrorKind::Truncated,
            self.pos,
            format!("{what}: needs {n} bytes, {} remain", self.remaining()),
        )
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    #[inline]
    pub fn i8(&mut self, what: &str) -> Result<i8, DecodeError> {
        Ok(i8::from_be_bytes(self.array(what)?))
    }
    #[inline]
    pub fn i16(&mut self, what: &str) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.array(what)?))
    }
    #[inline]
    pub fn i32(&mut self, what: &str) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }
    #[inline]
    pub fn u32(&mut self, what: &str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    #[inline]
    pub fn i64(&mut self, what: &str) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// Unsigned LEB128 of at most `max_bytes` bytes (5 for 32-bit, 10 for 64-bit).
    /// Always inlined, with the readers built on it: a record is a handful of
    /// varints, and a call returning a `Result` this size costs more than the read.
    #[inline(always)]
    pub fn uvarint_n(&mut self, max_bytes: usize, what: &str) -> Result<Uvarint, DecodeError> {
        // Most varints (lengths, counts, tags) are one byte: read those without the loop.
        if let Some(&b) = self
            .buf
            .get(self.pos)
            .filter(|&&b| b < 0x80 && self.pos < self.end)
        {
            self.pos += 1;
            return Ok(Uvarint {
                value: u64::from(b),
                len: 1,
                overlong: false,
            });
        }
        // And most of the rest two (record lengths, deltas): also without the loop.
        if let (true, Some(&[b0, b1])) = (
            self.pos + 2 <= self.end && max_bytes >= 2,
            self.buf.get(self.pos..self.pos + 2),
        ) {
            if b1 < 0x80 {
                self.pos += 2;
                return Ok(Uvarint {
                    value: u64::from(b0 & 0x7f) | u64::from(b1) << 7,
                    len: 2,
                    overlong: b1 == 0,
                });
            }
        }
        self.uvarint_long(max_bytes, what)
    }

    #[inline(never)]
    fn uvarint_long(&mut self, max_bytes: usize, what: &str) -> Result<Uvarint, DecodeError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..max_bytes {
            let Some(&b) = self.buf.get(self.pos).filter(|_| self.pos < self.end) else {
                self.pos = start;
                return Err(DecodeError {
                    kind: ErrorKind::Truncated, offset: start,
                    expected: format!("{what}: varint runs past the end ({} of at most {max_bytes} bytes present)", i),
                });
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                let len = i + 1;
                // Over-long: a final zero group after the first byte adds nothing.
                let overlong = len > 1 && b == 0;
                return Ok(Uvarint {
                    value,
                    len,
                    overlong,
                });
            }
        }
        self.pos = start;
        Err(DecodeError {
            kind: ErrorKind::Invalid,
            offset: start,
            expected: format!("{what}: varint longer than {max_bytes} bytes"),
        })
    }

    /// 32-bit unsigned varint (lengths, counts, tags).
    #[inline(always)]
    pub fn uvarint(&mut self, what: &str) -> Result<Uvarint, DecodeError> {
        let v = self.uvarint_n(5, what)?;
        if v.value > u64::from(u32::MAX) {
            return Err(DecodeError {
                kind: ErrorKind::Invalid,
                offset: self.pos - v.len,
                expected: format!("{what}: varint exceeds 32 bits"),
            });
        }
        Ok(v)
    }

    /// [`Reader::uvarint`] with a name made only if the read fails.
    #[inline]
    pub(crate) fn uvarint_or_else(
        &mut self,
        what: impl FnOnce() -> String,
    ) -> Result<Uvarint, DecodeError> {
        named(self.uvarint(""), what)
    }

    /// [`Reader::i32`] with a name made only if the read fails.
    #[inline]
    pub(crate) fn i32_or_else(
        &mut self,
        what: impl FnOnce() -> String,
    ) -> Result<i32, DecodeError> {
        named(self.i32(""), what)
    }

    /// Zigzag varint (32-bit).
    #[inline(always)]
    pub fn varint(&mut self, what: &str) -> Result<(i32, usize), DecodeError> {
        let v = self.uvarint(what)?;
        let u = v.value as u32;
        Ok((((u >> 1) as i32) ^ -((u & 1) as i32), v.len))
    }

    /// Zigzag varlong (64-bit).
    #[inline(always)]
    pub fn varlong(&mut self, what: &str) -> Result<(i64, usize), DecodeError> {
        let v = self.uvarint_n(10, what)?;
        // A tenth byte holds the 64th bit alone: more would be bits that do
        // not fit, refused as a varint's past 32 bits are.
        if v.len == 10 && self.buf.get(self.pos - 1).is_some_and(|&b| b > 1) {
            return Err(DecodeError {
                kind: ErrorKind::Invalid,
                offset: self.pos - v.len,
                expected: format!("{what}: varlong exceeds 64 bits"),
            });
        }
        let u = v.value;
        Ok((((u >> 1) as i64) ^ -((u & 1) as i64), v.len))
    }
}

/// Every read error's text starts with the name of what was read: put it there.
fn named<T>(res: Result<T, DecodeError>, what: impl FnOnce() -> String) -> Result<T, DecodeError> {
    res.map_err(|mut e| {
        e.expected.insert_str(0, &what());
        e
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_reads_are_big_endian_and_bounded() {
        let mut r = Reader::new(&[0x00, 0x55, 0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(r.i16("a").unwrap(), 85);
        assert_eq!(r.i32("b").unwrap(), -2);
        let e = r.i8("c").unwrap_err();
        assert_eq!(e.offset, 6);
        assert!(e.expected.contains("needs 1 bytes, 0 remain"));
    }

    #[test]
    fn a_varlong_of_more_than_64_bits_is_refused() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert_eq!(r.varlong("v").unwrap(), (i64::MIN, 10));
        for last in [0x02, 0x7f] {
            let mut bytes = [0xff; 10];
            bytes[9] = last;
            let e = Reader::new(&bytes).varlong("v").unwrap_err();
            assert_eq!(
                (e.offset, e.expected.as_str()),
                (0, "v: varlong exceeds 64 bits")
            );
        }
    }

    #[test]
    fn uvarint_boundaries() {
        for (bytes, v) in [
            (&[0x00][..], 0u64),
            (&[0x7f], 127),
            (&[0x80, 0x01], 128),
            (&[0xac, 0x02], 300),
            (&[0xff, 0x7f], 16383),
            (&[0x80, 0x80, 0x01], 16384),
        ] {
            let mut r = Reader::new(bytes);
            let u = r.uvarint("x").unwrap();
            assert_eq!((u.value, u.len, u.overlong), (v, bytes.len(), false));
        }
        let mut r = Reader::new(&[0x81, 0x00]);
        assert!(r.uvarint("x").unwrap().overlong);
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert!(r.uvarint("x").is_err());
        let mut r = Reader::new(&[0x80]);
        let e = r.uvarint("x").unwrap_err();
        assert_eq!(e.offset, 0);
    }

    #[test]
    fn zigzag() {
        let mut r = Reader::new(&[0x01, 0x02, 0x03, 0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(r.varint("a").unwrap().0, -1);
        assert_eq!(r.varint("b").unwrap().0, 1);
        assert_eq!(r.varint("c").unwrap().0, -2);
        assert_eq!(r.varint("d").unwrap().0, i32::MAX);
    }

    #[test]
    fn limit_confines_reads() {
        let mut r = Reader::new(&[1, 2, 3, 4]);
        let old = r.limit(2);
        assert!(r.i32("x").is_err());
        assert_eq!(r.i16("y").unwrap(), 0x0102);
        r.restore_end(old);
        assert_eq!(r.i16("z").unwrap(), 0x0304);
    }
}
