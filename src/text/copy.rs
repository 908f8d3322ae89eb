//! Appending short byte strings without a call to `memcpy`: a tree line is a
//! dozen pieces of a few bytes (a name, a type, `" = "`, a prefix of `|   `),
//! and the library call and its size dispatch cost more than the copy. Kept
//! for `kwire capture`'s text tree, whose goal (10× `tshark -V`) it is at
//! the line of: with `extend_from_slice` instead, the Produce benchmark
//! capture's tree took 1.4% more instructions (BENCHMARKS.md, "Micro-
//! optimisations measured again").

/// Append `b` to `out`: pieces of up to 32 bytes with two overlapping loads
/// and stores of a fixed width, longer ones through `extend_from_slice`.
#[inline(always)]
pub(crate) fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if n > 32 {
        return out.extend_from_slice(b);
    }
    out.reserve(32);
    let len = out.len();
    // SAFETY: `out` has room for 32 more bytes past `len` (reserved above), and
    // every read is within `b`: the two loads of width `w` start at 0 and at
    // `n - w`, with `w <= n`. The bytes between `len` and `len + n` are all
    // written (the two stores cover them) before the length is set.
    unsafe {
        let (src, dst) = (b.as_ptr(), out.as_mut_ptr().add(len));
        if n >= 16 {
            let (head, tail) = (
                src.cast::<u128>().read_unaligned(),
                src.add(n - 16).cast::<u128>().read_unaligned(),
            );
            dst.cast::<u128>().write_unaligned(head);
            dst.add(n - 16).cast::<u128>().write_unaligned(tail);
        } else if n >= 8 {
            let (head, tail) = (
                src.cast::<u64>().read_unaligned(),
                src.add(n - 8).cast::<u64>().read_unaligned(),
            );
            dst.cast::<u64>().write_unaligned(head);
            dst.add(n - 8).cast::<u64>().write_unaligned(tail);
        } else if n >= 4 {
            let (head, tail) = (
                src.cast::<u32>().read_unaligned(),
                src.add(n - 4).cast::<u32>().read_unaligned(),
            );
            dst.cast::<u32>().write_unaligned(head);
            dst.add(n - 4).cast::<u32>().write_unaligned(tail);
        } else if n > 0 {
            // 1 to 3 bytes: the first, the middle and the last (some the same).
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        out.set_len(len + n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_is_appended_exactly_after_what_is_there() {
        let source: Vec<u8> = (0..80u8).collect();
        for before in [0, 1, 7, 31] {
            for n in 0..=source.len() {
                for from in [0, 3] {
                    let piece = &source[from..(from + n).min(source.len())];
                    let mut out = vec![0xee; before];
                    out.shrink_to_fit();
                    push_bytes(&mut out, piece);
                    let mut want = vec![0xee; before];
                    want.extend_from_slice(piece);
                    assert_eq!(out, want, "{before} bytes before, {} appended", piece.len());
                }
            }
        }
    }
}
