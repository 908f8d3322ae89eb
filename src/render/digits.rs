//! Decimal numbers written into byte buffers without the formatting
//! machinery: listings and JSON write millions of them.

/// `n`'s last six decimal digits, zero-padded: the microseconds after a
/// decimal point (`{:06}`).
pub fn push_six_digits(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [b'0'; 6];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits);
}

/// `n`'s decimal digits, right-padded with spaces to `width` on the left (`{:>width$}`).
pub fn push_uint(out: &mut Vec<u8>, mut n: u64, width: usize) {
    if n < 10 && width <= 1 {
        out.push(b'0' + n as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in digits.len() - at..width {
        out.push(b' ');
    }
    out.extend_from_slice(&digits[at..]);
}

/// A signed number (`{}`).
pub fn push_int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_uint(out, n.unsigned_abs(), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_format_writes_them() {
        for n in [0i64, 1, -1, 9, 10, 99, 12345, i64::MAX, i64::MIN, -1234567890] {
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
}
