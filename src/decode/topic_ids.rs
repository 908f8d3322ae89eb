//! Topic names that a capture tied to topic ids, handed to the decoder in
//! [`super::fields::Context`]: a TopicId field (`FieldMeaning::TopicId`)
//! whose id is known gets the note `(topic "orders")`, and records after it
//! belong to that topic. Learned by `analysis::exchange::Names`; shared, so
//! that a frame's context costs a reference count.

use crate::text::escape::{quote, quote_bytes};
use crate::text::Text;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct TopicIds(Arc<HashMap<[u8; 16], Named>>);

#[derive(Clone, Debug)]
struct Named {
    /// The name (invalid UTF-8 replaced), for records' payloads.
    name: Box<str>,
    /// `(topic "orders")`, escaped; shared by every node that shows it.
    note: Text,
}

impl TopicIds {
    /// Tie `id` to the topic name `name` (its bytes as on the wire). Copies
    /// the map only when a decoder still holds it.
    pub fn insert(&mut self, id: [u8; 16], name: &[u8]) {
        let quoted = match std::str::from_utf8(name) {
            Ok(s) => quote(s),
            Err(_) => quote_bytes(name),
        };
        let note: Arc<str> = format!("(topic {quoted})").into();
        let named = Named {
            name: String::from_utf8_lossy(name).into(),
            note: note.into(),
        };
        Arc::make_mut(&mut self.0).insert(id, named);
    }

    /// The name tied to `id`.
    pub fn name(&self, id: &[u8; 16]) -> Option<&str> {
        self.0.get(id).map(|n| &*n.name)
    }

    /// The note for a TopicId field holding `id`.
    pub fn note(&self, id: &[u8; 16]) -> Option<Text> {
        self.0.get(id).map(|n| n.note.clone())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_noted_escaped() {
        let mut ids = TopicIds::default();
        ids.insert([1; 16], b"orders");
        ids.insert([2; 16], b"evil\x1b[31m\"x");
        ids.insert([3; 16], b"bad\xff");
        assert_eq!(ids.note(&[1; 16]).as_deref(), Some("(topic \"orders\")"));
        assert_eq!(
            ids.note(&[2; 16]).as_deref(),
            Some("(topic \"evil\\u{1b}[31m\\\"x\")")
        );
        assert_eq!(ids.note(&[3; 16]).as_deref(), Some("(topic b\"bad\\xff\")"));
        assert_eq!(ids.name(&[3; 16]), Some("bad\u{fffd}"));
        assert_eq!(ids.note(&[4; 16]), None);
        // A clone held elsewhere keeps what it saw.
        let held = ids.clone();
        ids.insert([1; 16], b"renamed");
        assert_eq!(
            (held.name(&[1; 16]), ids.name(&[1; 16])),
            (Some("orders"), Some("renamed"))
        );
    }
}
