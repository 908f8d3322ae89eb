//! Credentials are redacted wherever kwire shows data, unless asked for
//! (`--show-secrets`). The decoder marks the nodes that are credentials
//! (`Node::is_secret`: SASL passwords, SCRAM proofs and signatures, bearer
//! tokens, messages of unknown mechanisms, salts, SCRAM keys, token HMACs);
//! [`redact`] then masks their bytes in the frame (so the grid, the JSON
//! contract and every other view see `*`s of the same length) and shows the
//! secret nodes as `<redacted, N bytes>`. Layouts stay true: nothing moves.
//!
//! The command line turns hiding on ([`hide`]) unless `--show-secrets` is
//! given; `decode::decode_frame` then redacts every frame that may hold a
//! credential. Credentials are found in the tree: a frame decoded onto a
//! values tape (for the JSON contract) is decoded into its tree too, takes
//! its masked bytes and redacted paths, and its slots that the tree shows as
//! redacted are marked ([`crate::decode::tape::REDACTED`]). Library users
//! see what was decoded unless they turn it on.

use crate::decode::{Frame, FrameKind, Node, Role, Value};
use crate::schema::{MessageKind, MessageSpec};
use bytes::Bytes;
use std::sync::atomic::{AtomicBool, Ordering};

static HIDING: AtomicBool = AtomicBool::new(false);

/// What masked bytes become.
pub(crate) const MASK: u8 = b'*';

/// The JSON contract's member listing the paths of redacted values.
pub const REDACTED_KEY: &str = "_redacted";

/// Redact credentials in every frame decoded from now on (or stop).
pub fn hide(on: bool) {
    HIDING.store(on, Ordering::Relaxed);
}

#[inline]
pub fn hiding() -> bool {
    HIDING.load(Ordering::Relaxed)
}

/// The topic of KRaft's metadata log, whose records carry SCRAM credentials.
const METADATA_TOPIC: &[u8] = b"__cluster_metadata";
/// Its fixed topic id (`Uuid.METADATA_TOPIC_ID`), for Fetch v13 and later.
pub(crate) const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// Whether `frame` may hold a credential: its message (as `message` looks it
/// up by direction, api key and version) has credential fields, or records
/// of the metadata log. Frames that cannot are never walked.
pub fn may_hold<'c>(
    frame: &Frame,
    message: impl FnMut(MessageKind, i16, i16) -> Option<&'c MessageSpec>,
) -> bool {
    may_hold_bytes(
        &frame.kind,
        frame.direction,
        frame.api_key.zip(frame.api_version),
        &frame.bytes,
        message,
    )
}

/// [`may_hold`] for a frame not decoded yet (a captured frame's kind,
/// direction, API and bytes), so that only frames that may hold a
/// credential are decoded to find it.
pub(crate) fn may_hold_bytes<'c>(
    kind: &FrameKind,
    direction: crate::decode::Direction,
    api: Option<(i16, i16)>,
    bytes: &[u8],
    mut message: impl FnMut(MessageKind, i16, i16) -> Option<&'c MessageSpec>,
) -> bool {
    if matches!(kind, FrameKind::SaslToken { .. }) {
        return true;
    }
    let Some((k, v)) = api else {
        return false;
    };
    let kind = match direction {
        crate::decode::Direction::Request => MessageKind::Request,
        crate::decode::Direction::Response => MessageKind::Response,
    };
    let Some(spec) = message(kind, k, v) else {
        // A version no definition describes cannot be read for its
        // credentials: it is taken for one whole when the API's known
        // versions hold any (a SaslAuthenticate of a newer version).
        return message(kind, k, 0).is_some_and(|spec| {
            let versions = spec.valid_versions;
            (versions.lo..=versions.hi).any(|v| spec.plan(v).holds_secrets)
        });
    };
    // What the message holds is worked out once per version, with its plan
    // (walking its fields for every frame was 2.8% of a capture's text tree).
    let plan = spec.plan(v);
    if plan.holds_secrets {
        return true;
    }
    // Every frame with records is scanned (a byte-at-a-time search was 5% of a capture's text tree).
    plan.holds_records
        && metadata_log_finders()
            .iter()
            .any(|f| f.find(bytes).is_some())
}

/// Whether `topic` (given with `--topic`, which names the records of every
/// frame) is the metadata log, whose records carry credentials wherever
/// the frame's bytes do not name it (a Fetch by topic id, another topic).
pub(crate) fn names_metadata_log(topic: Option<&str>) -> bool {
    topic.is_some_and(|t| t.as_bytes() == METADATA_TOPIC)
}

/// Searchers for the metadata log's name and id, built once (building one
/// for every frame cost more than searching its bytes).
fn metadata_log_finders() -> &'static [memchr::memmem::Finder<'static>; 2] {
    static FINDERS: std::sync::OnceLock<[memchr::memmem::Finder<'static>; 2]> =
        std::sync::OnceLock::new();
    FINDERS.get_or_init(|| {
        [
            memchr::memmem::Finder::new(METADATA_TOPIC),
            memchr::memmem::Finder::new(&METADATA_TOPIC_ID),
        ]
    })
}

/// Mask the credentials of a decoded frame: returns how many were redacted.
/// Of a frame that may hold one and whose decoding stopped, the bytes from
/// where it stopped on are masked too: a credential there was not found.
pub fn redact(frame: &mut Frame) -> usize {
    let found = mask(frame);
    frame.redacted = redacted_paths(frame);
    found
}

/// [`redact`] but for the paths: masks the secrets' bytes and marks their nodes.
fn mask(frame: &mut Frame) -> usize {
    let stopped = frame
        .error
        .as_ref()
        .map(|e| e.offset)
        .filter(|&at| at < frame.bytes.len());
    let found = redact_tree(std::slice::from_mut(&mut frame.root), &mut frame.bytes);
    let Some(at) = stopped else {
        return found;
    };
    let rest = (at, frame.bytes.len() - at);
    frame.bytes = masked(&frame.bytes, &[rest]);
    apply(&mut frame.root, (&frame.bytes.clone(), 0), &[rest]);
    found + 1
}

/// [`redact`] for nodes whose offsets index `bytes` (a log segment's batches).
pub fn redact_tree(nodes: &mut [Node], bytes: &mut Bytes) -> usize {
    redact_tree_at(nodes, bytes, 0)
}

/// [`redact_tree`] for nodes whose offsets index a buffer of which `bytes`
/// holds the part from `base` on: one batch of a large frame's records,
/// masked without copying the rest of the frame.
pub(crate) fn redact_tree_at(nodes: &mut [Node], bytes: &mut Bytes, base: usize) -> usize {
    let ranges: Vec<(usize, usize)> = secret_ranges(nodes)
        .into_iter()
        .filter_map(|(at, len)| Some((at.checked_sub(base)?, len)))
        .collect();
    let inner: usize = nodes.iter().map(count_decompressed_secrets).sum();
    if ranges.is_empty() && inner == 0 {
        return 0;
    }
    if !ranges.is_empty() {
        *bytes = masked(bytes, &ranges);
    }
    for n in nodes.iter_mut() {
        apply(n, (bytes, base), &ranges);
    }
    ranges.len() + inner
}

/// Secrets under decompressed nodes (their own buffers).
fn count_decompressed_secrets(n: &Node) -> usize {
    let own = if n.role == Role::Decompressed {
        secret_ranges(&n.children).len()
    } else {
        0
    };
    own + n
        .children
        .iter()
        .map(count_decompressed_secrets)
        .sum::<usize>()
}

/// The byte ranges of the secret nodes among `nodes` (see [`collect`]).
fn secret_ranges(nodes: &[Node]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    for n in nodes {
        collect(n, &mut ranges);
    }
    ranges
}

/// A copy of `data` with `ranges` masked (a range past its end is left alone).
pub(crate) fn masked(data: &[u8], ranges: &[(usize, usize)]) -> Bytes {
    let mut masked = data.to_vec();
    for &(at, len) in ranges {
        if let Some(b) = masked.get_mut(at..at + len) {
            b.fill(MASK);
        }
    }
    Bytes::from(masked)
}

/// The byte ranges of secret nodes in one buffer: the frame's, or for
/// decompressed data, the decompressed node's own (masked there on their
/// own). Compressed bytes whose data holds a secret are masked whole: a
/// stored (uncompressed) deflate block, for one, holds it as it is.
fn collect(node: &Node, out: &mut Vec<(usize, usize)>) {
    if node.is_secret() {
        out.push(value_range(node));
        return;
    }
    for c in &node.children {
        if c.role != Role::Decompressed {
            collect(c, out);
        } else if holds_secret(c) {
            out.push(value_range(node));
        }
    }
}

fn holds_secret(n: &Node) -> bool {
    n.is_secret() || n.children.iter().any(holds_secret)
}

/// A node's value bytes: its last ones, after any length prefix.
fn value_range(node: &Node) -> (usize, usize) {
    let len = value_len(&node.value).unwrap_or(node.len);
    ((node.offset + node.len).saturating_sub(len), len)
}

/// How many bytes a string or bytes value holds; `None` for other values.
fn value_len(value: &Value) -> Option<usize> {
    match value {
        Value::Bytes(Some(b)) => Some(b.len()),
        Value::Str(Some(t)) => Some(t.len()),
        Value::InvalidUtf8(b) => Some(b.len()),
        _ => None,
    }
}

fn overlaps(node: &Node, base: usize, ranges: &[(usize, usize)]) -> bool {
    ranges
        .iter()
        .any(|&(at, len)| node.offset < base + at + len && base + at < node.offset + node.len)
}

/// Secret nodes show `<redacted, N bytes>`; values that hold their bytes are
/// re-taken from the masked buffer `bytes`, which holds the buffer the
/// offsets index from `base` on (`ranges` are in `bytes`).
fn apply(node: &mut Node, (bytes, base): (&Bytes, usize), ranges: &[(usize, usize)]) {
    if node.role == Role::Decompressed {
        redact_decompressed(node);
        return;
    }
    // A node that does not overlap a secret is left as it is, but decompressed data below may still hold secrets of its own.
    if overlaps(node, base, ranges) {
        if node.is_secret() {
            let len = ranges
                .iter()
                .map(|&(at, len)| (at + base, len))
                .find(|&(at, len)| at >= node.offset && at + len <= node.offset + node.len)
                .map_or(node.len, |r| r.1);
            node.value = Value::Str(Some(format!("<redacted, {len} bytes>").into()));
            node.set_note("(redacted: --show-secrets shows it)");
            node.children.clear();
            return;
        }
        if let Some(value_len) = value_len(&node.value) {
            let end = (node.offset + node.len)
                .saturating_sub(base)
                .min(bytes.len());
            // A string or bytes value is its last bytes (after any length prefix).
            let start = end.saturating_sub(value_len);
            node.value = Value::Bytes(Some(bytes.slice(start..end)));
            // What the bytes are (`(PLAIN client-response)`) stays; with a note
            // set, no view makes a preview of them (`render::notes`).
            super::tree::add_to_note(node, "holds redacted bytes");
        }
    }
    for c in &mut node.children {
        apply(c, (bytes, base), ranges);
    }
}

/// Secrets inside decompressed data: masked in that data.
fn redact_decompressed(node: &mut Node) {
    let ranges = secret_ranges(&node.children);
    let Value::Bytes(Some(data)) = &node.value else {
        return;
    };
    if ranges.is_empty() {
        return;
    }
    let masked = masked(data, &ranges);
    node.value = Value::Bytes(Some(masked.clone()));
    for c in &mut node.children {
        apply(c, (&masked, 0), &ranges);
    }
}

/// Mark on `values` (a values-only tape of the frame `tree` was decoded
/// from) the slots of the schema fields and elements that [`redact`] showed
/// as redacted in `tree`, so that the contract written from the tape says so
/// as the tree does. A slot is the node's when its value ends where the
/// node's does (the node's bytes and the slot's may start apart: a values
/// tape need not keep a length prefix's width).
pub(crate) fn mark_redacted(tree: &Frame, values: &mut crate::decode::tape::Values) {
    use crate::decode::tape::{Id, Val, REDACTED};
    fn collect(n: &Node, out: &mut Vec<u32>) {
        if n.value_is_redacted() && matches!(n.role, Role::Field { .. } | Role::Element) {
            return out.push(n.end() as u32);
        }
        // Below a string or bytes value are its parts (a SASL message's, a
        // batch's records), which the contract shows as that value's bytes.
        if matches!(
            n.value,
            Value::Bytes(_) | Value::Str(_) | Value::InvalidUtf8(_)
        ) || n.role == Role::Decompressed
        {
            return;
        }
        for c in &n.children {
            collect(c, out);
        }
    }
    let mut ends = Vec::new();
    collect(&tree.root, &mut ends);
    if ends.is_empty() {
        return;
    }
    ends.sort_unstable();
    for slot in &mut values.slots {
        if !matches!(slot.id, Id::Field(_) | Id::Element) {
            continue;
        }
        let end = match slot.value {
            Val::Str(span) | Val::Bytes(span) => span.at + span.len,
            // A null's bytes are its length: none is a read that failed there.
            Val::Null if slot.len > 0 => slot.at + slot.len,
            _ => continue,
        };
        if ends.binary_search(&end).is_ok() {
            slot.marks |= REDACTED;
        }
    }
}

/// Mark on `tape` (a values-only tape) the credentials of the struct at
/// `slot` (declared as `fields`): bytes fields whose meaning is a secret, as
/// the tree's walk marks them; returns their bytes' ranges, to be masked.
pub(crate) fn mark_secret_fields(
    tape: &mut crate::decode::tape::Values,
    slot: u32,
    fields: &[crate::schema::model::FieldSpec],
) -> Vec<(usize, usize)> {
    use crate::decode::tape::{Id, Val, REDACTED};
    use crate::schema::model::{FieldMeaning, FieldType, Primitive};
    let mut found = Vec::new();
    let mut structs = vec![(slot, fields)];
    while let Some((s, fields)) = structs.pop() {
        let children: Vec<u32> = tape.children(s).map(|(i, _)| i).collect();
        for i in children {
            let c = tape.slots[i as usize];
            let Some(f) = c.decl().and_then(|d| fields.get(usize::from(d))) else {
                continue;
            };
            match (&f.ty, c.value) {
                (FieldType::Primitive(Primitive::Bytes), Val::Bytes(span))
                    if span.len > 0 && f.meaning() == FieldMeaning::Secret =>
                {
                    tape.slots[i as usize].marks |= REDACTED;
                    found.push((span.at as usize, span.len as usize));
                }
                (FieldType::Struct(_), Val::Struct) => structs.push((i, &f.fields)),
                (FieldType::Array(inner), _) if matches!(**inner, FieldType::Struct(_)) => {
                    for (e, _) in tape.children(i).filter(|(_, e)| e.id == Id::Element) {
                        structs.push((e, &f.fields));
                    }
                }
                _ => {}
            }
        }
    }
    found.sort_unstable();
    found
}

/// The contract paths (`body.AuthBytes`, `body.TopicData[0]...`) of schema
/// fields whose bytes hold redacted ones, for the JSON's `_redacted` member.
fn redacted_paths(frame: &Frame) -> Vec<String> {
    let mut out = Vec::new();
    if matches!(frame.kind, FrameKind::SaslToken { .. }) {
        if frame.bytes.iter().skip(4).any(|&b| b == MASK) && contains_secret(&frame.root) {
            out.push("auth_bytes".into());
        }
        return out;
    }
    for top in &frame.root.children {
        let prefix = match top.region {
            crate::decode::Region::RpcHeader => "header",
            crate::decode::Region::RequestBody | crate::decode::Region::ResponseBody => "body",
            _ => continue,
        };
        paths(top, prefix, &mut out);
    }
    out
}

fn contains_secret(n: &Node) -> bool {
    n.value_is_redacted() || n.children.iter().any(contains_secret)
}

fn paths(node: &Node, at: &str, out: &mut Vec<String>) {
    for (i, c) in node.children.iter().enumerate() {
        let here = match c.role {
            Role::Field { .. } => format!("{at}.{}", c.field_key()),
            Role::Element => format!("{at}[{}]", element_index(node, i)),
            _ => at.to_string(),
        };
        if !contains_secret(c) {
            continue;
        }
        let leaf_field = matches!(c.role, Role::Field { .. })
            && !matches!(c.value, Value::Struct(_) | Value::Array(_));
        if leaf_field {
            out.push(here);
        } else {
            paths(c, &here, out);
        }
    }
}

/// The element index of child `i` of an array node (its first child is the length).
fn element_index(array: &Node, i: usize) -> usize {
    array.children[..i]
        .iter()
        .filter(|c| c.role == Role::Element)
        .count()
}

impl Node {
    /// Whether this node was redacted (its value replaced by the marker).
    pub(crate) fn value_is_redacted(&self) -> bool {
        self.is_secret()
            && matches!(&self.value, Value::Str(Some(t)) if t.starts_with("<redacted, "))
    }
}
