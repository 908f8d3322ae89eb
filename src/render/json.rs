//! The values-only contract (`--format json`), written by one writer from a
//! frame's values-only tape ([`write_contract`]; [`write_contract_of`] decodes
//! a frame that was decoded into its tree again onto one); [`frame_contract`]
//! is that text read back. It reads no bytes but the values' own: a frame
//! that held a credential carries the masked bytes, and its tape the slots
//! to show as redacted (`crate::decode::secrets`). The annotated tree's JSON
//! (`--format tree-json`) is [`super::tree_json`]'s. A struct inside other
//! bytes (a record's key or value, `decode --type`, `kwire primitive`) is
//! decoded onto a tape of its own and written by the same writer
//! ([`write_struct_values`]).
//!
//! JSON is read in terminals too: besides the escapes JSON requires, C1
//! controls, bidi controls and line/paragraph separators are written as
//! `\uXXXX` ([`to_text`] for any value), which parse back to the same text.
//!
//! A value JSON cannot carry exactly (a string that is not UTF-8, a NaN with a
//! payload) is written as its nearest JSON value, and its bytes as they were
//! on the wire go in the frame's `"_raw": {"<path>": "<hex>"}`, keyed by the
//! field's path (`body.Topics[0].Name`, `header.ClientId`), so that
//! `kwire encode` gives back the same bytes.

use super::digits::{push_int, push_uint};
use crate::decode::tape::{Id, Slot, Span, Val, Values, REDACTED};
use crate::decode::{Frame, Value};
use crate::schema::Catalogue;
use crate::text::escape::is_unsafe_in_json;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::{json, Value as Json};
use std::cell::Cell;
use std::io;

/// The JSON contract: `{kind, api_key, api_version, header, body}` keyed by
/// schema names; a SASL token is `{kind: "sasl_token", direction, mechanism, auth_bytes}`.
/// As a value: [`write_contract`]'s text read back, so that the contract has
/// one writer. Its nesting is the definitions' (record data stays hex), well
/// under what the reader allows.
pub fn frame_contract(frame: &Frame) -> Json {
    let mut out = Vec::new();
    write_contract(frame, &mut out);
    read_back(&out)
}

/// The contract's text as a value (it is always JSON: `Null` never comes).
fn read_back(text: &[u8]) -> Json {
    serde_json::from_slice(text).unwrap_or(Json::Null)
}

/// [`write_contract`] of any frame: one decoded into its tree is decoded
/// again onto a values tape (`crate::decode::frame::values_of_tree`) with
/// the catalogue and pin it was read with, within a budget of `limits`.
pub fn write_contract_of(
    frame: &Frame,
    (cat, release): (&Catalogue, Option<&str>),
    limits: crate::budget::Limits,
    out: &mut Vec<u8>,
) {
    if frame.values.is_some() || frame.kind.sasl_mechanism().is_some() {
        return write_contract(frame, out);
    }
    let values = crate::decode::frame::values_of_tree(cat, frame, release, limits);
    write_contract(&values, out)
}

/// [`frame_contract`] of any frame, as [`write_contract_of`] writes it.
pub fn contract_of(frame: &Frame, specs: (&Catalogue, Option<&str>)) -> Json {
    let mut out = Vec::new();
    write_contract_of(frame, specs, crate::budget::Limits::default(), &mut out);
    read_back(&out)
}

/// The frame-level member holding the wire bytes of values JSON cannot carry exactly.
pub const RAW_KEY: &str = "_raw";

/// The `kind` of a SASL token's object, in the contract and in tree JSON.
pub(crate) const SASL_TOKEN_KIND: &str = "sasl_token";

/// A SASL token's bytes, as its tree holds them (`decode::sasl`).
pub(crate) fn token_bytes(frame: &Frame) -> Option<&[u8]> {
    // A token is its size prefix and its bytes (`decode::sasl::token_frame`).
    frame.bytes.get(4..)
}

/// [`write_contract`] of a SASL token: `{"kind":"sasl_token","direction","mechanism","auth_bytes"}`.
fn write_token_contract(frame: &Frame, mechanism: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"kind\":");
    write_json_str(out, SASL_TOKEN_KIND);
    out.extend_from_slice(b",\"direction\":");
    write_json_str(out, frame.direction.as_str());
    out.extend_from_slice(b",\"mechanism\":");
    write_json_str(out, mechanism);
    out.extend_from_slice(b",\"auth_bytes\":");
    match token_bytes(frame) {
        Some(b) => {
            out.push(b'"');
            super::digits::push_hex(out, b);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
    write_redacted(out, frame);
    write_error(out, frame);
    out.push(b'}');
}

/// `"error": {offset, expected}` when decoding stopped.
fn write_error(out: &mut Vec<u8>, frame: &Frame) {
    if let Some(e) = &frame.error {
        out.extend_from_slice(b",\"error\":{\"offset\":");
        push_uint(out, e.offset as u64, 0);
        out.extend_from_slice(b",\"expected\":");
        write_json_str(out, &e.expected);
        out.push(b'}');
    }
}

/// `"_redacted": [paths]` when credentials were masked (see `crate::decode::secrets`).
fn write_redacted(out: &mut Vec<u8>, frame: &Frame) {
    for (i, p) in frame.redacted.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b",\"_redacted\":[" } else { b"," });
        write_json_str(out, p);
    }
    if !frame.redacted.is_empty() {
        out.push(b']');
    }
}

/// A float64 whose JSON text would not parse back to its bits: a NaN other
/// than the one `"NaN"` parses to (its sign or payload would be lost).
pub(crate) fn float_needs_raw(v: f64) -> bool {
    v.is_nan() && v.to_bits() != f64::NAN.to_bits()
}

/// A capture time as every JSON output writes it: epoch seconds rounded to
/// the microsecond, in the shortest decimal that reads back as that number
/// (`1700000000.001`, not `1700000000.001000`), so the same packet has the
/// same digits in `capture`, `check`, `records` and the rest.
pub fn capture_time(t: f64) -> Json {
    let rounded = (t * 1e6).round() / 1e6;
    serde_json::Number::from_f64(rounded).map_or(Json::Null, Json::Number)
}

/// [`frame_contract`] written straight out as compact JSON: the same text as
/// `frame_contract(frame).to_string()` without building a `serde_json::Value`
/// (what `--format json` prints; several times faster on large frames).
pub fn write_contract(frame: &Frame, out: &mut Vec<u8>) {
    if let Some(mechanism) = frame.kind.sasl_mechanism() {
        return write_token_contract(frame, mechanism, out);
    }
    out.extend_from_slice(b"{\"kind\":");
    write_json_str(out, frame.direction.as_str());
    out.extend_from_slice(b",\"api_key\":");
    write_opt_int(out, frame.api_key);
    out.extend_from_slice(b",\"api_name\":");
    match api_name(frame.api_key) {
        Some(name) => write_json_str(out, name),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"api_version\":");
    write_opt_int(out, frame.api_version);
    match &frame.values {
        Some(values) => {
            let tape = Tape {
                values,
                frame: &frame.bytes,
                lossy: Cell::new(false),
            };
            for (label, slot) in [
                (&b",\"header\":"[..], values.header),
                (&b",\"body\":"[..], values.body),
            ] {
                out.extend_from_slice(label);
                match slot {
                    Some(i) => tape.write_struct(out, i),
                    None => out.extend_from_slice(b"null"),
                }
            }
            // Paths are worked out only when a value needed them: rare, and off the fast path.
            if tape.lossy.get() {
                write_raw(out, &tape.raw_entries());
            }
        }
        // No tape: the frame stopped before its header (its size prefix).
        None => {
            debug_assert!(
                frame.header().is_none() && frame.body().is_none(),
                "the contract is written from a values-only tape (DecodeOptions::values_only)"
            );
            out.extend_from_slice(b",\"header\":null,\"body\":null");
        }
    }
    write_redacted(out, frame);
    // Damage in record data, which the contract shows as bytes but checks.
    for (i, e) in frame.record_damage.iter().enumerate() {
        out.extend_from_slice(if i == 0 {
            b",\"record_errors\":[{\"offset\":"
        } else {
            b",{\"offset\":"
        });
        push_uint(out, e.offset as u64, 0);
        out.extend_from_slice(b",\"expected\":");
        write_json_str(out, &e.expected);
        out.push(b'}');
        if i + 1 == frame.record_damage.len() {
            out.push(b']');
        }
    }
    write_error(out, frame);
    out.push(b'}');
}

/// A values-only frame's tape ([`crate::decode::values`]), written as the
/// contract: fields by declaration, a repeated key once, unknown tags apart.
struct Tape<'a> {
    values: &'a Values,
    frame: &'a [u8],
    /// Set when a value was written that JSON cannot carry exactly.
    lossy: Cell<bool>,
}

impl Tape<'_> {
    fn write_struct(&self, out: &mut Vec<u8>, i: u32) {
        // Written as it comes, which is right for the usual struct: fields in
        // declaration order, no unknown tags. Anything else is written again.
        let start = out.len();
        out.push(b'{');
        let mut last: Option<u16> = None;
        for (at, s) in self.values.children(i) {
            let Some(decl) = s.decl().filter(|d| last.is_none_or(|l| *d > l)) else {
                out.truncate(start);
                return self.write_struct_sorted(out, i);
            };
            if last.is_some() {
                out.push(b',');
            }
            last = Some(decl);
            out.extend_from_slice(s.key.as_bytes());
            self.write_value(out, at, s);
        }
        out.push(b'}');
    }

    /// A struct with tagged fields out of declaration order, repeated keys or unknown tags.
    fn write_struct_sorted(&self, out: &mut Vec<u8>, i: u32) {
        out.push(b'{');
        let mut fields: Vec<(u32, &Slot)> = Vec::new();
        let mut unknown: Vec<(String, (u32, &Slot))> = Vec::new();
        for (at, s) in self.values.children(i) {
            match s.id {
                Id::Field(_) => fields.push((at, s)),
                Id::UnknownTag(tag) => unknown.push((tag.to_string(), (at, s))),
                _ => {}
            }
        }
        fields.sort_by_key(|(_, s)| s.decl());
        for (n, (key, (at, s))) in dedup_last(fields.iter().map(|f| (*f.1.key, f)))
            .into_iter()
            .enumerate()
        {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(key.as_bytes());
            self.write_value(out, *at, s);
        }
        if !unknown.is_empty() {
            if !fields.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"_unknown_tags\":{");
            for (n, (tag, (at, s))) in dedup_last(unknown.iter().map(|(t, s)| (t.as_str(), s)))
                .into_iter()
                .enumerate()
            {
                if n > 0 {
                    out.push(b',');
                }
                write_json_str(out, tag);
                out.push(b':');
                self.write_value(out, *at, s);
            }
            out.push(b'}');
        }
        out.push(b'}');
    }

    /// Slot `i`'s value (`s` is that slot).
    fn write_value(&self, out: &mut Vec<u8>, i: u32, s: &Slot) {
        if s.marks & REDACTED != 0 {
            return write_redacted_value(out, s);
        }
        match s.value {
            Val::Null => out.extend_from_slice(b"null"),
            Val::Int(v) => push_int(out, v),
            Val::Uint(v) => push_uint(out, v, 0),
            Val::Float(v) => {
                if float_needs_raw(v) {
                    self.lossy.set(true);
                }
                write_float(out, v)
            }
            Val::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Val::Str(span) => match std::str::from_utf8(span.of(self.frame)) {
                Ok(text) => write_json_str(out, text),
                Err(_) => {
                    self.lossy.set(true);
                    write_json_str(out, &String::from_utf8_lossy(span.of(self.frame)))
                }
            },
            Val::Bytes(span) => {
                out.push(b'"');
                super::digits::push_hex(out, span.of(self.frame));
                out.push(b'"');
            }
            Val::Uuid(at) => {
                let mut bytes = [0u8; 16];
                bytes.copy_from_slice(Span { at, len: 16 }.of(self.frame));
                write_uuid(out, &bytes);
            }
            Val::Array(_) => {
                out.push(b'[');
                for (n, (at, el)) in self.values.children(i).enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    self.write_value(out, at, el);
                }
                out.push(b']');
            }
            Val::Packed(packed) => {
                out.push(b'[');
                for (n, value) in packed.values(self.frame).enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    // A fixed-width value has no children: the slot index is not read.
                    self.write_value(out, i, &Slot { value, ..*s });
                }
                out.push(b']');
            }
            Val::Struct => self.write_struct(out, i),
        }
    }
}

/// A credential's value as the tree shows it (`crate::decode::secrets`):
/// `"<redacted, N bytes>"`, N the bytes masked (a string's or bytes' own, or
/// else the slot's).
fn write_redacted_value(out: &mut Vec<u8>, s: &Slot) {
    let masked = match s.value {
        Val::Str(span) | Val::Bytes(span) => span.len,
        _ => s.len,
    };
    out.extend_from_slice(b"\"<redacted, ");
    push_uint(out, u64::from(masked), 0);
    out.extend_from_slice(b" bytes>\"");
}

impl Tape<'_> {
    /// The `_raw` entries: the values [`Tape::write_value`] could not write
    /// exactly, with their paths, in the order they were written.
    fn raw_entries(&self) -> Vec<(String, Vec<u8>)> {
        let mut found = Vec::new();
        let mut path = Vec::new();
        for (root, slot) in [("header", self.values.header), ("body", self.values.body)] {
            if let Some(i) = slot {
                path.push(Seg::Name(root.into()));
                self.raw_in_struct(i, &mut path, &mut found);
                path.pop();
            }
        }
        found
    }

    /// The fields as the writer keeps them: by declaration, a repeated key once with its last value.
    fn raw_in_struct(&self, i: u32, path: &mut Vec<Seg<'_>>, found: &mut Vec<(String, Vec<u8>)>) {
        let mut fields: Vec<(u32, &Slot)> = self
            .values
            .children(i)
            .filter(|(_, s)| s.decl().is_some())
            .collect();
        fields.sort_by_key(|(_, s)| s.decl());
        for (key, (at, s)) in dedup_last(fields.iter().map(|f| (*f.1.key, f))) {
            path.push(Seg::Name(unquote_key(key).into()));
            self.raw_in_value(*at, s, path, found);
            path.pop();
        }
    }

    fn raw_in_value(
        &self,
        i: u32,
        s: &Slot,
        path: &mut Vec<Seg<'_>>,
        found: &mut Vec<(String, Vec<u8>)>,
    ) {
        match s.value {
            Val::Str(span) if std::str::from_utf8(span.of(self.frame)).is_err() => {
                found.push((path_text(path), span.of(self.frame).to_vec()))
            }
            Val::Float(v) if float_needs_raw(v) => {
                found.push((path_text(path), v.to_be_bytes().to_vec()))
            }
            Val::Array(_) => {
                for (n, (at, el)) in self.values.children(i).enumerate() {
                    path.push(Seg::Index(n));
                    self.raw_in_value(at, el, path, found);
                    path.pop();
                }
            }
            Val::Packed(packed) => {
                for (n, value) in packed.values(self.frame).enumerate() {
                    path.push(Seg::Index(n));
                    self.raw_in_value(i, &Slot { value, ..*s }, path, found);
                    path.pop();
                }
            }
            Val::Struct => self.raw_in_struct(i, path, found),
            _ => {}
        }
    }
}

/// One step of a field path.
enum Seg<'a> {
    Name(std::borrow::Cow<'a, str>),
    Index(usize),
}

/// `body.Topics[0].Name`: what `kwire encode` names fields by in its errors.
fn path_text(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Name(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Seg::Index(n) => out.push_str(&format!("[{n}]")),
        }
    }
    out
}

/// A tape key (`"GroupId":`, JSON-quoted with its colon) as the field's name.
fn unquote_key(key: &str) -> String {
    let quoted = key.strip_suffix(':').unwrap_or(key);
    serde_json::from_str(quoted).unwrap_or_else(|_| quoted.trim_matches('"').to_string())
}

/// `,"_raw":{"<path>":"<hex>",…}` when there is anything to put in it.
fn write_raw(out: &mut Vec<u8>, entries: &[(String, Vec<u8>)]) {
    if entries.is_empty() {
        return;
    }
    out.extend_from_slice(b",\"_raw\":{");
    for (n, (path, bytes)) in entries.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_json_str(out, path);
        out.push(b':');
        out.push(b'"');
        super::digits::push_hex(out, bytes);
        out.push(b'"');
    }
    out.push(b'}');
}

/// Map-insert semantics over a list: each key once, at its first place, with its last value.
fn dedup_last<'a, 'n, N>(items: impl Iterator<Item = (&'a str, &'n N)>) -> Vec<(&'a str, &'n N)> {
    let mut kept: Vec<(&str, &N)> = Vec::new();
    let mut index: Option<std::collections::HashMap<&str, usize>> = None;
    for (k, n) in items {
        // A linear search is fastest for the usual handful of fields; large structs get an index.
        if index.is_none() && kept.len() >= 16 {
            index = Some(kept.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect());
        }
        let found = match &index {
            Some(ix) => ix.get(k).copied(),
            None => kept.iter().position(|(kk, _)| *kk == k),
        };
        match found {
            Some(i) => kept[i].1 = n,
            None => {
                if let Some(ix) = &mut index {
                    ix.insert(k, kept.len());
                }
                kept.push((k, n));
            }
        }
    }
    kept
}

/// A value that is not a container's, as the contract writes it: what tree
/// JSON's `"value"` holds (an array's is its count, a struct has none, and a
/// container here is `null`).
pub(crate) fn write_scalar(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::None
        | Value::Array(_)
        | Value::Struct(_)
        | Value::Str(None)
        | Value::Bytes(None) => out.extend_from_slice(b"null"),
        Value::Int(v) => push_int(out, *v),
        Value::Uint(v) => push_uint(out, *v, 0),
        Value::Float(v) => write_float(out, *v),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Str(Some(s)) => write_json_str(out, s),
        Value::InvalidUtf8(b) => write_json_str(out, &String::from_utf8_lossy(b)),
        Value::Bytes(Some(b)) => {
            out.push(b'"');
            super::digits::push_hex(out, b);
            out.push(b'"');
        }
        Value::Uuid(u) => write_uuid(out, u),
    }
}

fn write_float(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        // serde_json's own float formatting, so the text matches `frame_contract`.
        let _ = serde_json::to_writer(&mut *out, &v);
    } else {
        write_json_str(out, &v.to_string());
    }
}

fn write_uuid(out: &mut Vec<u8>, u: &[u8; 16]) {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    write_json_str(
        out,
        uuid::Uuid::from_bytes(*u)
            .hyphenated()
            .encode_lower(&mut buf),
    );
}

pub(crate) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    // Plain ASCII needs no escapes: copy it; anything else goes through serde_json
    // with the terminal-safe escapes. A branch-free fold, so that the check runs
    // vectorised on long strings.
    if !s.bytes().fold(false, |bad, b| {
        bad | (b < 0x20) | (b == b'"') | (b == b'\\') | (b >= 0x80)
    }) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let mut ser = serde_json::Serializer::with_formatter(&mut *out, Safe(CompactFormatter));
        let _ = serde::Serialize::serialize(s, &mut ser);
    }
}

/// A value as compact JSON text, with the terminal-safe escapes of this module.
pub fn to_text(v: &Json) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(CompactFormatter));
    let _ = serde::Serialize::serialize(v, &mut ser);
    String::from_utf8(out).unwrap_or_default()
}

/// [`to_text`], indented like `serde_json::to_string_pretty`.
pub fn to_text_pretty(v: &impl serde::Serialize) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(PrettyFormatter::new()));
    let _ = v.serialize(&mut ser);
    String::from_utf8(out).unwrap_or_default()
}

/// A serde_json formatter that also writes C1 controls, bidi controls and
/// line/paragraph separators as `\uXXXX`; everything else is `F`'s.
pub(crate) struct Safe<F>(pub(crate) F);

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment
            .char_indices()
            .filter(|(_, c)| is_unsafe_in_json(*c))
        {
            w.write_all(&fragment.as_bytes()[start..at])?;
            write!(w, "\\u{:04x}", c as u32)?;
            start = at + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// An API's name by its key, as every JSON object that names an API carries
/// it beside `api_key` (names are the same in every release's definitions).
pub(crate) fn api_name(key: Option<i16>) -> Option<&'static str> {
    crate::schema::Catalogue::builtin().api_name(key?)
}

fn write_opt_int(out: &mut Vec<u8>, v: Option<i16>) {
    match v {
        Some(v) => push_int(out, v.into()),
        None => out.extend_from_slice(b"null"),
    }
}

/// A struct decoded inside other bytes (a record's key or value) as the
/// contract writes a struct: its fields by declaration, a credential as
/// `<redacted, N bytes>`.
pub fn write_struct_values(v: &crate::decode::payload::StructValues, out: &mut Vec<u8>) {
    let tape = Tape {
        values: &v.tape,
        frame: &v.bytes,
        lossy: Cell::new(false),
    };
    tape.write_struct(out, v.slot);
}

/// A standalone payload (`kwire decode --type`) as JSON: its type, the
/// version of the struct read, and the struct's values (null when none was read).
pub fn payload_json(payload: &crate::decode::payload::DecodedPayload) -> Json {
    let value = payload.values.as_ref().map(|v| {
        let mut out = Vec::new();
        write_struct_values(v, &mut out);
        read_back(&out)
    });
    json!({"type": payload.root.name.to_string(), "version": payload.version.map(i64::from), "value": value})
}

#[cfg(test)]
mod tests {
    use crate::render::digits::push_hex;

    #[test]
    fn hex_is_hex_encode_at_every_length_and_byte() {
        let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..all.len() {
            for start in [0, 3, 7] {
                let b = &all[start.min(len)..len];
                let mut out = b"x".to_vec();
                push_hex(&mut out, b);
                assert_eq!(
                    &out[1..],
                    hex::encode(b).as_bytes(),
                    "{len} bytes from {start}"
                );
            }
        }
    }
}
