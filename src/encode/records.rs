//! Records written by the record format's one definition
//! ([`crate::decode::records::layout`]): each field in the table's order and
//! wire form, a value found by the field's name, as the encoder finds a
//! message field's. What the table marks as worked out is worked out: the
//! length before bytes (-1 for null), a record's length, a legacy
//! message's size and checksum. The definitions do not describe records,
//! so this is the encoder's one record writer (the pages' example records
//! are written by it); a batch's header is written by
//! [`crate::protocol::record_batch`].

use super::writer::Writer;
use crate::decode::records::layout::{
    crc32_ieee, PartField, LEGACY_LAYOUT, RECORD_HEADER_LAYOUT, RECORD_LAYOUT,
};
use crate::decode::Wire;

/// A field's value: a number in the field's wire form, or bytes (`None`:
/// null) after their length.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Put<'a> {
    Int(i64),
    Bytes(Option<&'a [u8]>),
}

/// A v2 record: its fields by name (those [`RECORD_LAYOUT`] does not work
/// out: attributes, timestampDelta, offsetDelta, key, value), and its
/// headers' keys and values.
pub(crate) struct Record<'a> {
    pub fields: &'a [(&'a str, Put<'a>)],
    pub headers: &'a [(&'a [u8], Option<&'a [u8]>)],
}

/// `record` as a batch holds it: its length, then its fields, its headers'
/// count and each header by [`RECORD_HEADER_LAYOUT`].
pub(crate) fn write_record(w: &mut Writer, record: &Record) {
    // The layout's first field is the record's length: of all that follows.
    let [length, fields @ ..] = &RECORD_LAYOUT;
    let mut body = Writer::default();
    let count = [("headers", Put::Int(record.headers.len() as i64))];
    let named = |name: &str| {
        record
            .fields
            .iter()
            .chain(&count)
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    };
    write_fields(&mut body, fields, named);
    for (key, value) in record.headers {
        let header = [
            ("headerKey", Put::Bytes(Some(key))),
            ("headerValue", Put::Bytes(*value)),
        ];
        let named = |name: &str| header.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        write_fields(&mut body, &RECORD_HEADER_LAYOUT, named);
    }
    put_int(w, length.wire, body.len() as i64);
    w.bytes(&body.buf);
}

/// A legacy message of `magic` 0 or 1 (magic 0 has no timestamp): its
/// offset, size and CRC-32 worked out around its fields by name
/// (attributes, timestamp, key, value).
pub(crate) fn write_legacy_message(w: &mut Writer, offset: i64, magic: i8, fields: &[(&str, Put)]) {
    // offset, messageSize and crc, then what the crc covers.
    let (head, covered) = LEGACY_LAYOUT.split_at(3);
    let covered: Vec<PartField> = covered
        .iter()
        .filter(|f| magic >= 1 || f.name != "timestamp")
        .copied()
        .collect();
    let mut body = Writer::default();
    let magic = [("magic", Put::Int(i64::from(magic)))];
    let named = |name: &str| {
        fields
            .iter()
            .chain(&magic)
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    };
    write_fields(&mut body, &covered, named);
    let crc = i64::from(crc32_ieee(&body.buf));
    put_int(w, head[0].wire, offset);
    // The size counts the checksum and what it covers.
    let crc_width = head[2].wire.fixed_width().unwrap_or(4);
    put_int(w, head[1].wire, (crc_width + body.len()) as i64);
    put_int(w, head[2].wire, crc);
    w.bytes(&body.buf);
}

/// `layout`'s fields, each value found by name (none found: 0, or null
/// bytes); a length a bytes field is sized by is written with its bytes.
fn write_fields<'v>(w: &mut Writer, layout: &[PartField], value: impl Fn(&str) -> Option<Put<'v>>) {
    for f in layout {
        if layout.iter().any(|b| b.sized_by == Some(f.name)) {
            continue;
        }
        match (f.wire, value(f.name)) {
            (Wire::Bytes, v) => {
                let bytes = match v {
                    Some(Put::Bytes(b)) => b,
                    _ => None,
                };
                let length = layout.iter().find(|l| Some(l.name) == f.sized_by);
                if let Some(length) = length {
                    put_int(w, length.wire, bytes.map_or(-1, |b| b.len() as i64));
                }
                w.bytes(bytes.unwrap_or_default());
            }
            (wire, Some(Put::Int(n))) => put_int(w, wire, n),
            (wire, _) => put_int(w, wire, 0),
        }
    }
}

/// `n` in the wire form of a number field (its low bytes for a fixed width).
fn put_int(w: &mut Writer, wire: Wire, n: i64) {
    match wire {
        Wire::Varint => w.varint(n as i32),
        Wire::Varlong => w.varlong(n),
        Wire::Uvarint => w.uvarint(n as u64),
        wire => {
            let width = wire.fixed_width().unwrap_or(8).min(8);
            w.bytes(&n.to_be_bytes()[8 - width..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_written_in_the_layouts_forms_with_its_lengths_worked_out() {
        let mut w = Writer::default();
        let fields = [
            ("offsetDelta", Put::Int(1)),
            ("timestampDelta", Put::Int(5)),
            ("key", Put::Bytes(Some(b"k"))),
            ("value", Put::Bytes(None)),
        ];
        let headers: [(&[u8], Option<&[u8]>); 1] = [(b"h", Some(b"v"))];
        write_record(
            &mut w,
            &Record {
                fields: &fields,
                headers: &headers,
            },
        );
        // length 11; attributes 0 (none given); timestampDelta 5 and
        // offsetDelta 1 zigzagged; key 1 "k"; value null (-1); 1 header:
        // key 1 "h", value 1 "v".
        assert_eq!(
            w.buf,
            [0x16, 0, 0x0a, 0x02, 0x02, b'k', 0x01, 0x02, 0x02, b'h', 0x02, b'v']
        );
    }

    #[test]
    fn a_legacy_message_has_its_size_and_crc_worked_out() {
        let fields = [
            ("timestamp", Put::Int(7)),
            ("key", Put::Bytes(None)),
            ("value", Put::Bytes(Some(b"ab"))),
        ];
        let mut v1 = Writer::default();
        write_legacy_message(&mut v1, 3, 1, &fields);
        let body = [
            &[1u8, 0][..],
            &7i64.to_be_bytes(),
            &(-1i32).to_be_bytes(),
            &2i32.to_be_bytes(),
            b"ab",
        ]
        .concat();
        let mut want = [&3i64.to_be_bytes()[..], &24i32.to_be_bytes()].concat();
        want.extend_from_slice(&crc32_ieee(&body).to_be_bytes());
        want.extend_from_slice(&body);
        assert_eq!(v1.buf, want);

        let mut v0 = Writer::default();
        write_legacy_message(&mut v0, 3, 0, &fields);
        assert_eq!(v0.buf.len(), want.len() - 8, "magic 0 has no timestamp");
        assert_eq!(&v0.buf[8..12], &16i32.to_be_bytes());
        assert_eq!(v0.buf[16], 0, "magic");
    }
}
