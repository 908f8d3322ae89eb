//! The reader's unsigned varints against a plain LEB128 reading, on every
//! one- and two-byte start (which the reader takes without its loop), alone,
//! followed by a byte, and cut short.

use kwire::decode::reader::Reader;

/// LEB128 as the protocol defines it: (value, length, over-long), or `None` when cut.
fn leb128(bytes: &[u8], max: usize) -> Option<(u64, usize, bool)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(max) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1, i > 0 && b == 0));
        }
    }
    None
}

#[test]
fn short_varints_read_as_leb128_says() {
    for b0 in 0..=255u8 {
        for b1 in 0..=255u8 {
            for bytes in [&[b0, b1][..], &[b0, b1, 0x01], &[b0]] {
                let mut r = Reader::new(bytes);
                let got = r
                    .uvarint_n(10, "x")
                    .ok()
                    .map(|u| (u.value, u.len, u.overlong));
                let want = leb128(bytes, 10);
                assert_eq!(got, want, "{bytes:02x?}");
                assert_eq!(
                    r.pos(),
                    want.map_or(0, |w| w.1),
                    "{bytes:02x?}: where the reader is left"
                );
            }
        }
    }
}
