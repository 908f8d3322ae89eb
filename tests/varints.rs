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

/// Every over-long varint of a flexible frame is warned once, at its offset,
/// with its width: a header's tagged section count, a compact string's
/// length, a body's tagged section count, a tag, a tagged entry's size and a
/// compact array's length. `kwire check`'s walk over the tape without a tree
/// finds the same, and a frame written minimally finds none.
#[test]
fn over_long_varints_in_a_frame_are_each_warned_where_they_are() {
    use kwire::decode::{decode_frame, DecodeOptions, WarningKind};
    use kwire::schema::Catalogue;
    let cat = Catalogue::builtin();
    let sized = |body: &[u8]| {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    };
    // Heartbeat v4: header v2, then GroupId "g", GenerationId 7, MemberId
    // "m", GroupInstanceId null, and one unknown tag (5) of two bytes.
    let heartbeat = |long: bool| {
        let v = |short: &[u8], long_form: &[u8]| {
            if long {
                long_form.to_vec()
            } else {
                short.to_vec()
            }
        };
        let mut b = vec![0, 12, 0, 4, 0, 0, 0, 1, 0, 1, b'c'];
        b.extend(v(&[0], &[0x80, 0x00])); // header tagged count
        b.extend(v(&[2], &[0x82, 0x00])); // GroupId length
        b.extend([b'g', 0, 0, 0, 7, 2, b'm', 0]);
        b.extend(v(&[1], &[0x81, 0x00])); // body tagged count
        b.extend(v(&[5], &[0x85, 0x80, 0x00])); // tag
        b.extend(v(&[2], &[0x82, 0x00])); // size
        b.extend([0xab, 0xcd]);
        sized(&b)
    };
    // DescribeGroups v5: Groups ["a", "b"], IncludeAuthorizedOperations false.
    let describe = |long: bool| {
        let mut b = vec![0, 15, 0, 5, 0, 0, 0, 2, 0, 1, b'c', 0];
        b.extend(if long {
            vec![0x83, 0x80, 0x80, 0x00]
        } else {
            vec![3]
        });
        b.extend([2, b'a', 2, b'b', 0, 0]);
        sized(&b)
    };
    let warned = |frame: Vec<u8>, findings_only: bool| {
        let opts = DecodeOptions {
            findings_only,
            ..Default::default()
        };
        let f = decode_frame(cat, frame.into(), 0, &opts);
        assert!(f.error.is_none(), "{:?}", f.error);
        f.warnings
            .iter()
            .filter(|w| w.kind == WarningKind::OverlongVarint)
            .map(|w| w.text.clone())
            .collect::<Vec<_>>()
    };
    let want_heartbeat = [
        "0x000f: tagged field count is an over-long varint (2 bytes)",
        "0x0011: GroupId length is an over-long varint",
        "0x001b: tagged field count is an over-long varint (2 bytes)",
        "0x001d: tag is an over-long varint (3 bytes)",
        "0x0020: tagged field size is an over-long varint (2 bytes)",
    ];
    let want_describe = ["0x0010: array length is an over-long varint (4 bytes)"];
    for findings_only in [false, true] {
        assert_eq!(warned(heartbeat(true), findings_only), want_heartbeat);
        assert_eq!(warned(describe(true), findings_only), want_describe);
        assert!(warned(heartbeat(false), findings_only).is_empty());
        assert!(warned(describe(false), findings_only).is_empty());
    }
}

/// Over-long lengths of an array's string elements are warned at each
/// element, and one whose bytes are cut short is still warned, with the
/// error, in the tree and in `kwire check`'s walk.
#[test]
fn over_long_lengths_of_elements_and_of_a_cut_string_are_warned() {
    use kwire::decode::{decode_frame, DecodeOptions, WarningKind};
    use kwire::schema::Catalogue;
    let cat = Catalogue::builtin();
    // DescribeGroups v5: Groups of compact strings, IncludeAuthorizedOperations.
    let frame = |groups: &[u8]| {
        let mut b = vec![0, 15, 0, 5, 0, 0, 0, 2, 0, 1, b'c', 0];
        b.extend_from_slice(groups);
        let mut f = (b.len() as u32).to_be_bytes().to_vec();
        f.extend(b);
        f
    };
    let whole = frame(&[4, 0x82, 0x00, b'a', 2, b'b', 0x82, 0x80, 0x00, b'c', 0, 0]);
    // The second group says 4 bytes ("bcde") and the frame ends after "b".
    let cut = frame(&[3, 2, b'a', 0x85, 0x00, b'b']);
    let seen = |frame: &[u8], findings_only: bool| {
        let opts = DecodeOptions {
            findings_only,
            ..Default::default()
        };
        let f = decode_frame(cat, frame.to_vec().into(), 0, &opts);
        let warned: Vec<String> = f
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::OverlongVarint)
            .map(|w| w.text.clone())
            .collect();
        (warned, f.error.map(|e| e.expected))
    };
    for findings_only in [false, true] {
        let (warned, error) = seen(&whole, findings_only);
        assert_eq!(
            warned,
            [
                "0x0011: Groups length is an over-long varint",
                "0x0016: Groups length is an over-long varint",
            ],
            "findings only: {findings_only}"
        );
        assert_eq!(error, None);
        let (warned, error) = seen(&cut, findings_only);
        assert_eq!(warned, ["0x0013: Groups length is an over-long varint"]);
        assert!(
            error.is_some_and(|e| e.contains("Groups")),
            "findings only: {findings_only}"
        );
    }
}
