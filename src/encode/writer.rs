//! Byte writer for the protocol's primitives.

#[derive(Default, Debug)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn i8(&mut self, v: i8) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn i16(&mut self, v: i16) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn uvarint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    pub fn varint(&mut self, v: i32) {
        self.uvarint(u64::from(zigzag32(v)));
    }
    pub fn varlong(&mut self, v: i64) {
        self.uvarint(zigzag64(v));
    }
}

/// Zigzag: 0, -1, 1, -2 … → 0, 1, 2, 3 …, so small negative numbers stay short.
pub(crate) fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

pub(crate) fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Bytes of an unsigned varint.
pub(crate) fn uvarint_bytes(v: u64) -> Vec<u8> {
    let mut w = Writer::default();
    w.uvarint(v);
    w.buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        assert_eq!(uvarint_bytes(300), vec![0xac, 0x02]);
        assert_eq!(uvarint_bytes(127), vec![0x7f]);
        assert_eq!(uvarint_bytes(128), vec![0x80, 0x01]);
        let mut w = Writer::default();
        w.varint(-1);
        w.varint(i32::MIN);
        w.varlong(i64::MAX);
        assert_eq!(&w.buf[..1], &[0x01]);
        assert_eq!(&w.buf[1..6], &[0xff, 0xff, 0xff, 0xff, 0x0f]);
    }
}
