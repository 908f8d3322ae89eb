//! Field tests run on a frame's values tape. For each message (request or
//! response, API, version) the tests are laid over its plan once: which
//! declaration of which struct each test reads, kept as a small tree by
//! declaration index. A frame's run then follows only those branches of its
//! tape (skipping other subtrees by their end) and sets one bit per test
//! that some occurrence passes.

use super::compile::{path_matches, Anchor, FieldTest, RecordPart, Test, Value};
use super::syntax::Op;
use crate::budget::Budget;
use crate::decode::records::each::{for_each_record, RecordParts};
use crate::decode::tape::{Val, Values};
use crate::schema::plan::{Element, FieldPlan, Shape, StructPlan};
use crate::schema::Primitive;

/// A bit per field test that a frame passes.
pub(crate) type Passed = u64;

/// The tests laid over one message at one version.
#[derive(Debug, Default)]
pub(crate) struct MessageTests {
    pub header: Option<Branch>,
    pub body: Option<Branch>,
    /// The tests some field of this message can pass (the others never hold).
    pub may: Passed,
    /// Whether a test reads bytes that may hold a credential: a bytes or
    /// records field's, or a record's. Only then are a frame's credentials
    /// masked before its tests run (finding them is a decode of the frame).
    pub reads_bytes: bool,
}

/// The tests of one struct's fields, by declaration index.
#[derive(Debug, Default)]
pub struct Branch {
    by_decl: Box<[Option<Reads>]>,
}

impl Branch {
    fn reads_bytes(&self) -> bool {
        self.by_decl.iter().flatten().any(|r| {
            r.bytes || !r.records.is_empty() || r.within.as_ref().is_some_and(|w| w.reads_bytes())
        })
    }
}

#[derive(Debug, Default)]
struct Reads {
    /// Whether the field's value is bytes or records (each element's, for an array).
    bytes: bool,
    /// Tests of this field's value (each element's, for an array).
    tests: Vec<u8>,
    /// Tests of each record of this records field.
    records: Vec<(u8, RecordPart)>,
    /// Tests further down (a struct, or each struct of an array).
    within: Option<Box<Branch>>,
}

impl MessageTests {
    /// Lay `tests` over a message's header and body plans.
    pub fn new(tests: &[FieldTest], header: &StructPlan, body: &StructPlan) -> MessageTests {
        let mut may = 0;
        let header = branch(tests, true, header, &mut Vec::new(), &mut may);
        let body = branch(tests, false, body, &mut Vec::new(), &mut may);
        let reads_bytes = [&header, &body]
            .into_iter()
            .flatten()
            .any(Branch::reads_bytes);
        MessageTests {
            header,
            body,
            may,
            reads_bytes,
        }
    }
}

fn branch(
    tests: &[FieldTest],
    header: bool,
    plan: &StructPlan,
    path: &mut Vec<&'static str>,
    may: &mut Passed,
) -> Option<Branch> {
    let fields = plan.regular.iter().chain(plan.tagged.iter().flatten());
    let mut by_decl: Vec<Option<Reads>> = Vec::new();
    for f in fields {
        path.push(f.name);
        let reads = reads(tests, header, f, path, may);
        path.pop();
        if let Some(r) = reads {
            let d = usize::from(f.decl);
            if by_decl.len() <= d {
                by_decl.resize_with(d + 1, || None);
            }
            by_decl[d] = Some(r);
        }
    }
    (!by_decl.is_empty()).then(|| Branch {
        by_decl: by_decl.into_boxed_slice(),
    })
}

fn reads(
    tests: &[FieldTest],
    header: bool,
    f: &FieldPlan,
    path: &mut Vec<&'static str>,
    may: &mut Passed,
) -> Option<Reads> {
    let mut r = Reads::default();
    // No record is read from a field that does not hold whole batches (as
    // the decoder leaves them).
    let records = matches!(f.shape, Shape::Primitive(Primitive::Records))
        && crate::protocol::record_batch::holds_whole_batches(f.name);
    for (i, t) in tests.iter().enumerate() {
        match t.anchor {
            Anchor::Record(part) if records => r.records.push((i as u8, part)),
            Anchor::Record(_) => continue,
            _ if path_matches(t.anchor, &t.path, header, path) => r.tests.push(i as u8),
            _ => continue,
        }
        *may |= 1 << i;
    }
    r.bytes = !r.tests.is_empty()
        && matches!(
            f.shape,
            Shape::Primitive(Primitive::Bytes | Primitive::Records)
                | Shape::Array(Element::Primitive(Primitive::Bytes | Primitive::Records))
        );
    let nested = match &f.shape {
        Shape::Struct(s) | Shape::Array(Element::Struct(s)) => Some(s),
        _ => None,
    };
    if let Some(s) = nested {
        r.within = branch(tests, header, s, path, may).map(Box::new);
    }
    (!r.tests.is_empty() || !r.records.is_empty() || r.within.is_some()).then_some(r)
}

/// Run the tests of `branch` on the struct at `slot` of the tape (and its
/// structs below), setting the bits of those some value passes. Records
/// fields decompress within `budget`, one per frame.
pub fn run(
    tests: &[FieldTest],
    branch: &Branch,
    tape: &Values,
    frame: &[u8],
    slot: u32,
    passed: &mut Passed,
    budget: &Budget,
) {
    for (i, s) in tape.children(slot) {
        let Some(decl) = s.decl() else { continue };
        let Some(Some(reads)) = branch.by_decl.get(usize::from(decl)) else {
            continue;
        };
        for &t in &reads.tests {
            if *passed & (1 << t) != 0 {
                continue;
            }
            let test = &tests[usize::from(t)].test;
            let hit = match s.value {
                Val::Array(_) => match test {
                    Test::Present => true,
                    _ => tape.children(i).any(|(_, e)| passes(test, e.value, frame)),
                },
                Val::Packed(p) => match test {
                    Test::Present => true,
                    _ => p.values(frame).any(|v| passes(test, v, frame)),
                },
                v => passes(test, v, frame),
            };
            if hit {
                *passed |= 1 << t;
            }
        }
        if let (false, Val::Bytes(span)) = (reads.records.is_empty(), s.value) {
            run_records(tests, &reads.records, span.of(frame), passed, budget);
        }
        if let Some(within) = &reads.within {
            match s.value {
                Val::Struct => run(tests, within, tape, frame, i, passed, budget),
                Val::Array(_) => {
                    for (e, es) in tape.children(i) {
                        if es.value == Val::Struct {
                            run(tests, within, tape, frame, e, passed, budget);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Run record tests on each record of a records field's bytes, until each
/// has passed or the records end. Decompression draws on the frame's budget.
fn run_records(
    tests: &[FieldTest],
    wanted: &[(u8, RecordPart)],
    records: &[u8],
    passed: &mut Passed,
    budget: &Budget,
) {
    let all: Passed = wanted.iter().fold(0, |m, (t, _)| m | 1 << t);
    if *passed & all == all {
        return;
    }
    for_each_record(records, budget, &mut |r| {
        for &(t, part) in wanted {
            if *passed & (1 << t) != 0 {
                continue;
            }
            if record_passes(&tests[usize::from(t)].test, part, r) {
                *passed |= 1 << t;
            }
        }
        *passed & all != all
    });
}

/// Whether a record's part passes a test (a header's: some header's).
pub(crate) fn record_passes(test: &Test, part: RecordPart, r: &RecordParts<'_>) -> bool {
    match part {
        RecordPart::Key => record_bytes(test, r.key),
        RecordPart::Value => record_bytes(test, r.value),
        RecordPart::HeaderKey => r.headers.iter().any(|h| record_bytes(test, h.0)),
        RecordPart::HeaderValue => r.headers.iter().any(|h| record_bytes(test, h.1)),
        RecordPart::Offset => record_int(test, r.offset),
        RecordPart::Timestamp => record_int(test, r.timestamp),
    }
}

/// A record's bytes (null: `None`) against a test.
fn record_bytes(test: &Test, b: Option<&[u8]>) -> bool {
    let Some(b) = b else { return false };
    match test {
        Test::Present => true,
        Test::Contains(needle) => memchr::memmem::find(b, needle).is_some(),
        Test::Matches(re) => re.is_match(b),
        Test::Compare(op, values) => values
            .iter()
            .any(|w| ordered(*op, w.text.as_deref().map(|w| b.cmp(w)))),
    }
}

fn record_int(test: &Test, v: Option<i64>) -> bool {
    let Some(v) = v else { return false };
    match test {
        Test::Present => true,
        Test::Compare(op, values) => values
            .iter()
            .any(|w| ordered(*op, w.int.map(|w| i128::from(v).cmp(&w)))),
        Test::Contains(_) | Test::Matches(_) => false,
    }
}

/// Whether one value passes a test.
fn passes(test: &Test, v: Val, frame: &[u8]) -> bool {
    match test {
        Test::Present => !matches!(v, Val::Null),
        Test::Contains(needle) => {
            text_of(v, frame).is_some_and(|h| memchr::memmem::find(h, needle).is_some())
        }
        Test::Matches(re) => text_of(v, frame).is_some_and(|h| re.is_match(h)),
        Test::Compare(op, values) => values.iter().any(|want| compare(*op, v, want, frame)),
    }
}

fn text_of(v: Val, frame: &[u8]) -> Option<&[u8]> {
    match v {
        Val::Str(s) | Val::Bytes(s) => Some(s.of(frame)),
        _ => None,
    }
}

/// `v op want`, where `want` is read as `v`'s kind takes it; false when it cannot be.
pub fn compare(op: Op, v: Val, want: &Value, frame: &[u8]) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match v {
        Val::Int(i) => want.int.map(|w| i128::from(i).cmp(&w)),
        Val::Uint(u) => want.int.map(|w| i128::from(u).cmp(&w)),
        Val::Float(f) => want.float.and_then(|w| f.partial_cmp(&w)),
        Val::Bool(b) => want.boolean.map(|w| b.cmp(&w)),
        Val::Str(s) | Val::Bytes(s) => want.text.as_deref().map(|w| s.of(frame).cmp(w)),
        Val::Uuid(at) => want.uuid.and_then(|w| {
            let at = at as usize;
            frame.get(at..at + 16).map(|u| u.cmp(&w[..]))
        }),
        Val::Null | Val::Array(_) | Val::Struct | Val::Packed(_) => None,
    };
    ordered(op, ord)
}

/// Whether an ordering satisfies `op` (none: the values could not be compared).
pub fn ordered(op: Op, ord: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    let Some(o) = ord else { return false };
    match op {
        Op::Eq | Op::In => o == Equal,
        Op::Ne => o != Equal,
        Op::Lt => o == Less,
        Op::Le => o != Greater,
        Op::Gt => o == Greater,
        Op::Ge => o != Less,
        Op::Contains | Op::Matches => false,
    }
}
