//! Records read from the tape (`decode::records::each`: the filters'
//! `record.key`, `kwire records` of a capture) are the records the tree's
//! nodes hold (`decode::records::view`: the explorer's records pane, `kwire
//! records --format dump`): the same offsets, timestamps, keys, values,
//! headers, control marks and batch headers, in the same order, for every
//! kind of record batch and thousands of damaged copies. Two readers of two
//! representations, each the other's oracle.

mod common;

use bytes::Bytes;
use common::batches::record_batch_cases;
use common::random_body::Rng;
use kwire::budget::Budget;
use kwire::decode::fields::Context;
use kwire::decode::records::each::for_each_record;
use kwire::decode::records::view;
use kwire::decode::records::BatchDecoder;
use kwire::schema::Catalogue;

/// A record as both readers give it.
type Listed = (
    i64,
    Option<i64>,
    bool,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>,
    Option<view::BatchHeader>,
    Option<i64>,
);

/// The records read whole from the tape, as a listing takes them.
fn from_tape(records: &[u8]) -> Vec<Listed> {
    let mut out = Vec::new();
    for_each_record(records, &Budget::default(), &mut |r| {
        if let (true, Some(offset)) = (r.whole, r.offset) {
            out.push((
                offset,
                r.timestamp,
                r.control,
                r.key.map(<[u8]>::to_vec),
                r.value.map(<[u8]>::to_vec),
                r.headers
                    .iter()
                    .map(|(k, v)| (k.map(<[u8]>::to_vec), v.map(<[u8]>::to_vec)))
                    .collect(),
                r.batch,
                r.offset_delta,
            ));
        }
        true
    });
    out
}

/// The records of the tree's nodes (those whose reading did not stop).
fn from_nodes(cat: &Catalogue, records: &[u8]) -> Vec<Listed> {
    let bytes = Bytes::copy_from_slice(records);
    let ctx = Context::default();
    let mut nodes = Vec::new();
    BatchDecoder::new(&bytes, cat, &ctx).decode_stream(0, bytes.len(), &mut nodes);
    let mut out = Vec::new();
    let bytes_of = |p: view::Payload| p.bytes().map(|b| b.to_vec());
    view::records(&nodes, &mut |r| {
        out.push((
            r.offset,
            r.timestamp,
            r.control,
            bytes_of(r.key),
            bytes_of(r.value),
            r.headers
                .iter()
                .map(|(k, v)| (bytes_of(*k), bytes_of(*v)))
                .collect(),
            r.batch,
            r.offset_delta,
        ))
    });
    out
}

#[test]
fn the_tapes_records_are_the_trees_for_every_batch_and_damaged_copies() {
    let cat = Catalogue::builtin();
    let mut rng = Rng::new(23);
    let (mut compared, mut with_records, mut damaged_differently) = (0, 0, 0);
    for case in record_batch_cases() {
        let whole = from_tape(&case.records);
        assert_eq!(whole, from_nodes(cat, &case.records), "{}", case.name);
        compared += 1;
        with_records += usize::from(!whole.is_empty());
        for _ in 0..500 {
            let mut copy = case.records.clone();
            if copy.is_empty() {
                break;
            }
            let at = rng.below(copy.len() as u64) as usize;
            copy[at] = rng.next() as u8;
            let tape = from_tape(&copy);
            assert_eq!(
                tape,
                from_nodes(cat, &copy),
                "{}, byte {at} set to {:#04x}",
                case.name,
                copy[at]
            );
            compared += 1;
            damaged_differently += usize::from(tape != whole);
        }
    }
    println!("{compared} compared, {with_records} cases with records, {damaged_differently} damaged copies listed otherwise");
    assert!(compared > 5_000, "{compared} compared");
    assert!(with_records >= 10, "{with_records} cases with records");
    assert!(
        damaged_differently > 1_000,
        "{damaged_differently} damaged copies listed something else"
    );
}
