//! Decimal and hex numbers written into byte buffers (or, `int_str`, a
//! stack buffer) without the formatting machinery: listings, JSON and trees
//! write millions of them.

/// Two decimal digits of each number below 100, in order: digits are
/// written two at a time (half the divisions of one at a time).
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// `n`'s two digits (`n` < 100).
#[inline(always)]
fn pair(n: u64) -> [u8; 2] {
    let i = (n as usize % 100) * 2;
    [PAIRS[i], PAIRS[i + 1]]
}

/// A byte's two lowercase hex digits.
#[inline(always)]
pub(crate) fn hex_pair(b: u8) -> [u8; 2] {
    HEX_PAIRS[usize::from(b)]
}

/// `n` as four lowercase hex digits (`{:04x}` of a `u16`).
#[inline(always)]
pub(crate) fn hex4(n: u16) -> [u8; 4] {
    let ([a, b], [c, d]) = (hex_pair((n >> 8) as u8), hex_pair(n as u8));
    [a, b, c, d]
}

/// `n` as eight lowercase hex digits (`{:08x}`: checksums).
#[inline]
pub(crate) fn hex8(n: u32) -> [u8; 8] {
    let ([a, b, c, d], [e, f, g, h]) = (hex4((n >> 16) as u16), hex4(n as u16));
    [a, b, c, d, e, f, g, h]
}

/// `{:04x}`: lowercase hex, at least four digits (offsets in the tree views).
#[inline]
pub(crate) fn push_hex4(out: &mut Vec<u8>, n: usize) {
    if let Ok(short) = u16::try_from(n) {
        out.extend_from_slice(&hex4(short));
        return;
    }
    let digits = (usize::BITS - n.leading_zeros()).div_ceil(4) as usize;
    for i in (0..digits).rev() {
        out.push(b"0123456789abcdef"[(n >> (4 * i)) & 15]);
    }
}

/// Bytes as lowercase hex (record data is most of a Fetch response's JSON,
/// and every bytes value in a tree starts with it). Sixteen bytes at a time
/// for `--format json`: without it, the values JSON of the 400,000-record
/// Fetch capture took 31% more instructions (BENCHMARKS.md,
/// "Micro-optimisations measured again").
pub fn push_hex(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve(2 * b.len());
    #[cfg(target_arch = "x86_64")]
    let b = {
        let whole = b.len() - b.len() % 16;
        write_hex_sse2(out, &b[..whole]);
        &b[whole..]
    };
    out.extend(b.iter().flat_map(|&x| HEX_PAIRS[usize::from(x)]));
}

/// Two lowercase hex digits per byte, by the byte.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let digits = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [digits[i >> 4], digits[i & 15]];
        i += 1;
    }
    t
};

/// [`push_hex`] sixteen bytes at a time with SSE2 (every x86-64 has it):
/// nibbles split, made digits by adding `'0'` and, where 10 or more, 39 more
/// (to reach `'a'`), then interleaved high, low. `b.len()` is a multiple of 16.
#[cfg(target_arch = "x86_64")]
fn write_hex_sse2(out: &mut Vec<u8>, b: &[u8]) {
    use std::arch::x86_64::*;
    out.reserve(2 * b.len());
    let start = out.len();
    // SAFETY: SSE2 is part of every x86-64 CPU (the target's baseline). Room
    // for 2 × b.len() bytes after `start` was reserved above; each iteration
    // reads 16 bytes inside `b` and writes 32 inside that room, and the length
    // is set only over the bytes written.
    unsafe {
        let digits = |n: __m128i| {
            let tens = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
            _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), tens)
        };
        let mask = _mm_set1_epi8(0x0f);
        let dst = out.as_mut_ptr().add(start);
        for (i, chunk) in b.chunks_exact(16).enumerate() {
            let x = _mm_loadu_si128(chunk.as_ptr().cast());
            let hi = digits(_mm_and_si128(_mm_srli_epi16::<4>(x), mask));
            let lo = digits(_mm_and_si128(x, mask));
            _mm_storeu_si128(dst.add(32 * i).cast(), _mm_unpacklo_epi8(hi, lo));
            _mm_storeu_si128(dst.add(32 * i + 16).cast(), _mm_unpackhi_epi8(hi, lo));
        }
        out.set_len(start + 2 * (b.len() / 16 * 16));
    }
}

/// `n`'s last six decimal digits, zero-padded: the microseconds after a
/// decimal point (`{:06}`).
pub(crate) fn push_six_digits(out: &mut Vec<u8>, n: u64) {
    let n = n % 1_000_000;
    let [a, b] = pair(n / 10_000);
    let [c, d] = pair(n / 100);
    let [e, f] = pair(n);
    out.extend_from_slice(&[a, b, c, d, e, f]);
}

/// `n`'s decimal digits, right-padded with spaces to `width` on the left (`{:>width$}`).
#[inline(always)]
pub(crate) fn push_uint(out: &mut Vec<u8>, n: u64, width: usize) {
    // Most numbers in a tree (lengths, counts, small values) have one or two
    // digits: written with fixed-size copies, without the loop.
    if n < 10 && width <= 1 {
        out.push(b'0' + n as u8);
    } else if (10..100).contains(&n) && width <= 2 {
        out.extend_from_slice(&pair(n));
    } else {
        push_uint_long(out, n, width);
    }
}

// Kept out of line: inlined, it made `push_uint` too large to inline.
#[inline(never)]
fn push_uint_long(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let at = decimal(n, &mut digits);
    let len = digits.len() - at;
    if width > len {
        out.resize(out.len() + width - len, b' ');
    }
    out.extend_from_slice(&digits[at..]);
}

/// `n`'s decimal digits at the end of `digits`, two at a time; returns where they start.
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> usize {
    let mut at = digits.len();
    while n >= 100 {
        at -= 2;
        digits[at..at + 2].copy_from_slice(&pair(n));
        n /= 100;
    }
    if n >= 10 {
        at -= 2;
        digits[at..at + 2].copy_from_slice(&pair(n));
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    at
}

/// A signed number's decimal digits in `buf` (`{}`), without a buffer of its own.
pub fn int_str(n: i64, buf: &mut [u8; 20]) -> &str {
    // The magnitude has at most 19 digits, which leaves room for the sign.
    let mut at = decimal(n.unsigned_abs(), buf);
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

/// A signed number (`{}`).
#[inline]
pub(crate) fn push_int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_uint(out, n.unsigned_abs(), 0);
}

/// A socket address as `Display` writes it (`10.0.0.1:9092`, `[::1]:9092`):
/// IPv4 digit by digit, as formatting it cost 3,000 instructions a frame heading.
pub(crate) fn push_socket_addr(out: &mut Vec<u8>, addr: std::net::SocketAddr) {
    match addr {
        std::net::SocketAddr::V4(a) => {
            for (i, octet) in a.ip().octets().into_iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                push_uint(out, octet.into(), 0);
            }
            out.push(b':');
            push_uint(out, a.port().into(), 0);
        }
        v6 => {
            use std::io::Write;
            let _ = write!(out, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_str_writes_what_format_writes() {
        for n in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            12_345,
            i64::MAX,
            i64::MIN,
            -9_876_543_210,
        ] {
            let mut buf = [0u8; 20];
            assert_eq!(int_str(n, &mut buf), n.to_string());
        }
    }

    #[test]
    fn socket_addresses_are_written_as_display_writes_them() {
        for text in [
            "0.0.0.0:0",
            "10.0.0.1:9092",
            "192.168.100.255:65535",
            "1.22.133.4:80",
            "[::1]:9092",
            "[fe80::1%2]:1",
        ] {
            let addr: std::net::SocketAddr = text.parse().expect("an address");
            let mut out = Vec::new();
            push_socket_addr(&mut out, addr);
            assert_eq!(
                (String::from_utf8(out).unwrap(), addr.to_string()),
                (text.to_string(), text.to_string())
            );
        }
    }

    #[test]
    fn hex_is_written_as_format_writes_it() {
        for n in (0..0x2_0000usize).chain([0xfffff, 0x10_0000, 0xdead_beef, usize::MAX]) {
            let mut out = Vec::new();
            push_hex4(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), format!("{n:04x}"));
        }
        for n in [0u32, 1, 0xabc, 0xe231_795d, u32::MAX] {
            assert_eq!(
                String::from_utf8(hex8(n).to_vec()).unwrap(),
                format!("{n:08x}")
            );
        }
        let bytes: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        push_hex(&mut out, &bytes);
        assert_eq!(String::from_utf8(out).unwrap(), hex::encode(&bytes));
    }

    #[test]
    fn as_format_writes_them() {
        for n in [
            0i64,
            1,
            -1,
            9,
            10,
            99,
            12345,
            i64::MAX,
            i64::MIN,
            -1234567890,
        ] {
            let mut out = Vec::new();
            push_int(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
        for (n, w) in [(0u64, 3usize), (42, 5), (123456, 2), (u64::MAX, 25)] {
            let mut out = Vec::new();
            push_uint(&mut out, n, w);
            assert_eq!(String::from_utf8(out).unwrap(), format!("{n:>w$}"));
        }
    }

    #[test]
    fn every_digit_pair_in_every_place() {
        for n in (0u64..200_000).chain((0..64).map(|s| (1u64 << s) - 1)) {
            let mut out = Vec::new();
            push_uint(&mut out, n, 7);
            push_six_digits(&mut out, n);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{n:>7}{:06}", n % 1_000_000)
            );
        }
        // The one- and two-digit paths, at every width they take or pass on.
        for n in 0u64..1000 {
            for w in 0..4 {
                let mut out = b"x".to_vec();
                push_uint(&mut out, n, w);
                assert_eq!(String::from_utf8(out).unwrap(), format!("x{n:>w$}"));
            }
        }
    }
}
