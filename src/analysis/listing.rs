//! What `capture --list` and the explorer's frame list say of each frame
//! after its time and endpoints: the API and version, and a summary (a
//! request's client id; a response's error names, `ok`, or why its body was
//! not read; a frame that does not decode, with its error).
//!
//! Read from the values-only tape ([`super::exchange`]'s fact reader): the
//! header for the client id, the body for error codes by their spec
//! (`FieldMeaning::ErrorCode`) and for whether it decodes; record data stays
//! a range of the frame. Only a frame that does not decode is decoded again
//! into a tree, for its error at its offset. Clients send the same small
//! frames again and again (heartbeats, metadata, offset commits), so entries
//! of small frames are remembered by their bytes (bounded).

use super::captured::decode_captured;
use super::exchange::{FactReader, Names, Wanted};
use crate::capture::{complete_prefix, CapturedFrame};
use crate::decode::{DecodeError, DecodeOptions, Direction};
use crate::schema::{Catalogue, MessageKind};
use foldhash::{HashMap, HashMapExt};

/// Frames above this size are listed from their header alone (a listing
/// reads only a prefix of them: [`crate::capture::CutBodies`]).
pub const LIST_BODY_LIMIT: usize = 16 * 1024;

/// A frame's entry in a listing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListEntry {
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub summary: Summary,
    /// The topics the frame names, as indexes into the lister's
    /// [`Names`] (only when asked: [`Lister::with_topics`]).
    pub topics: Box<[u32]>,
    /// The API and version are `--guess`'s best guess for a response whose
    /// request is not in the capture, not a fact the capture states.
    pub guessed: bool,
}

/// What a listing says of a frame after its API, version, correlation id and size.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Summary {
    /// A request, with its client id when the header holds a non-null one.
    Request { client_id: Option<Box<str>> },
    /// A response without an error code other than 0.
    #[default]
    Ok,
    /// A response's non-zero error codes, in the order of their fields.
    Errors(Vec<i16>),
    /// A response over [`LIST_BODY_LIMIT`]: its body was not read.
    LargeBody,
    /// A response whose request is not in the capture (it started
    /// mid-connection): not malformed, but nothing names its API.
    Unmatched,
    /// The frame does not decode (boxed: rare, and a row per frame is kept by the explorer).
    Malformed(Box<DecodeError>),
}

impl ListEntry {
    /// The frame did not decode (the exit status says so, the explorer shows it red).
    pub(crate) fn is_malformed(&self) -> bool {
        matches!(self.summary, Summary::Malformed(_))
    }

    /// Any error: malformed, or a response with error codes.
    pub(crate) fn has_error(&self) -> bool {
        matches!(self.summary, Summary::Malformed(_) | Summary::Errors(_))
    }
}

/// What decoding a frame into a tree gave: its API, version and error.
type TreeOutcome = (Option<i16>, Option<i16>, Option<DecodeError>);

/// Makes listing entries, one frame at a time, with a tape and a memo reused.
pub struct Lister<'c> {
    cat: &'c Catalogue,
    release: Option<String>,
    guess: bool,
    with_topics: bool,
    facts: FactReader,
    memo: HashMap<Vec<u8>, ListEntry>,
    key: Vec<u8>,
    last: ListEntry,
}

impl<'c> Lister<'c> {
    /// Frames up to this size are remembered.
    const MEMO_FRAME: usize = 512;
    const MEMO_ENTRIES: usize = 4096;

    /// `guess`: name an unpaired response's API by the best guess (`--guess`).
    pub fn new(cat: &'c Catalogue, release: Option<&str>, guess: bool) -> Self {
        Lister {
            cat,
            release: release.map(str::to_string),
            guess,
            with_topics: false,
            facts: FactReader::default(),
            memo: HashMap::new(),
            key: Vec::with_capacity(Self::MEMO_FRAME + 8),
            last: ListEntry::default(),
        }
    }

    /// Entries also list the topics each frame names (the explorer's filter).
    pub fn with_topics(mut self) -> Self {
        self.with_topics = true;
        self
    }

    /// Client ids and topics seen: [`ListEntry::topics`] index them.
    pub fn names(&self) -> &Names {
        &self.facts.names
    }

    /// The entry of `f` (not a SASL token: a token has no API).
    pub fn entry(&mut self, f: &CapturedFrame) -> &ListEntry {
        let memo = !f.is_cut() && f.bytes.len() <= Self::MEMO_FRAME;
        if memo {
            // The key: direction, the paired request, the bytes with the correlation id blanked.
            self.key.clear();
            self.key.push(u8::from(f.direction == Direction::Request));
            for v in [f.api_key, f.api_version] {
                self.key.push(u8::from(v.is_some()));
                self.key.extend_from_slice(&v.unwrap_or(0).to_be_bytes());
            }
            self.key.extend_from_slice(&f.bytes);
            let corr_at = 8 + if f.direction == Direction::Request {
                8
            } else {
                4
            };
            if let Some(c) = self.key.get_mut(corr_at..corr_at + 4) {
                c.fill(0);
            }
            // (Looked up twice: a returned borrow inside `if let` keeps `memo` borrowed below.)
            if self.memo.contains_key(&self.key[..]) {
                return &self.memo[&self.key[..]];
            }
        }
        self.last = self.make(f);
        if !memo {
            return &self.last;
        }
        if self.memo.len() >= Self::MEMO_ENTRIES {
            self.memo.clear();
        }
        self.memo
            .entry(self.key.clone())
            .or_insert_with(|| self.last.clone())
    }

    fn make(&mut self, f: &CapturedFrame) -> ListEntry {
        let mut entry = self.make_unmarked(f);
        entry.guessed =
            f.direction == Direction::Response && f.api_key.is_none() && entry.api_key.is_some();
        entry
    }

    fn make_unmarked(&mut self, f: &CapturedFrame) -> ListEntry {
        let large = f.len > LIST_BODY_LIMIT;
        let request = f.direction == Direction::Request;
        let mut api = f.api_key.zip(f.api_version);
        if !request && api.is_none() {
            if !self.guess {
                return ListEntry {
                    api_key: None,
                    api_version: None,
                    summary: Summary::Unmatched,
                    ..Default::default()
                };
            }
            // The guess decodes the frame as each candidate: its choice names the API.
            let frame = self.decode_tree(f, large);
            match (frame.0, frame.1, frame.2) {
                (_, _, Some(e)) => {
                    return ListEntry {
                        api_key: frame.0,
                        api_version: frame.1,
                        summary: Summary::Malformed(Box::new(e)),
                        ..Default::default()
                    }
                }
                (Some(k), Some(v), None) => api = Some((k, v)),
                _ => {
                    return ListEntry {
                        api_key: None,
                        api_version: None,
                        summary: Summary::Unmatched,
                        ..Default::default()
                    }
                }
            }
        }
        let Some((key, version)) = api else {
            // A request whose header does not name a known API: its error.
            let (k, v, error) = self.decode_tree(f, large);
            let summary = error.map_or(Summary::Request { client_id: None }, |e| {
                Summary::Malformed(Box::new(e))
            });
            return ListEntry {
                api_key: k,
                api_version: v,
                summary,
                ..Default::default()
            };
        };
        // Large frames: the header only (a listing keeps only a prefix of them).
        let whole = !large && !f.is_cut();
        let want = Wanted {
            client_id: request,
            topics: self.with_topics && whole,
            errors: !request && whole,
            whole,
        };
        let kind = if request {
            MessageKind::Request
        } else {
            MessageKind::Response
        };
        let head;
        let frame = if f.is_cut() {
            head = CapturedFrame {
                bytes: complete_prefix(&f.bytes),
                ..f.clone()
            };
            &head
        } else {
            f
        };
        self.facts.errors.clear();
        self.facts.topics.clear();
        let found = self.facts.read(
            self.cat,
            self.release.as_deref(),
            frame,
            kind,
            (key, version),
            want,
        );
        let client_id = found
            .client_id
            .flatten()
            .map(|c| match std::str::from_utf8(&c) {
                Ok(text) => Ok(Box::from(text)),
                Err(_) => Err(lossless_text(&c)),
            });
        if !found.decoded || matches!(client_id, Some(Err(_))) {
            // Decoded again into a tree, for the error at its offset.
            let (k, v, error) = self.decode_tree(f, large);
            if let Some(e) = error {
                return ListEntry {
                    api_key: k,
                    api_version: v,
                    summary: Summary::Malformed(Box::new(e)),
                    ..Default::default()
                };
            }
        }
        let summary = match (request, client_id) {
            (true, Some(Ok(c))) => Summary::Request { client_id: Some(c) },
            // Not UTF-8 (a client's bug): its bytes shown, the invalid ones as `\xNN`.
            (true, Some(Err(shown))) => Summary::Request {
                client_id: Some(shown),
            },
            (true, _) => Summary::Request { client_id: None },
            (false, _) if !whole => Summary::LargeBody,
            (false, _) if self.facts.errors.is_empty() => Summary::Ok,
            (false, _) => Summary::Errors(self.facts.errors.clone()),
        };
        self.facts.topics.sort_unstable();
        self.facts.topics.dedup();
        ListEntry {
            api_key: Some(key),
            api_version: Some(version),
            summary,
            topics: self.facts.topics.as_slice().into(),
            guessed: false,
        }
    }

    /// The frame decoded into a tree (its header alone when `large`): the
    /// API, version and error it decodes with.
    fn decode_tree(&self, f: &CapturedFrame, large: bool) -> TreeOutcome {
        let opts = DecodeOptions {
            header_only: large,
            ..Default::default()
        };
        let (frame, _) = if f.is_cut() {
            let head = CapturedFrame {
                bytes: complete_prefix(&f.bytes),
                ..f.clone()
            };
            decode_captured(self.cat, self.release.as_deref(), &head, self.guess, opts)
        } else {
            decode_captured(self.cat, self.release.as_deref(), f, self.guess, opts)
        };
        (frame.api_key, frame.api_version, frame.error.clone())
    }
}

/// Bytes as text: UTF-8 as it is, every other byte as `\xNN`.
fn lossless_text(bytes: &[u8]) -> Box<str> {
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.into()
}
