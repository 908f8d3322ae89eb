//! A capture read for replay: its client connections, each request with
//! the answer the capture holds for it.

use super::{Captured, Conversation, Request};
use crate::capture::{
    for_each_captured, CaptureOptions, CaptureStats, Captured as Item, CapturedFrame,
};
use crate::decode::{Direction, FrameKind};
use crate::schema::Catalogue;
use std::collections::{BTreeMap, HashMap};

/// What [`read`] found.
#[derive(Debug)]
pub struct Read {
    /// Each client connection with a request, in connection order.
    pub conversations: Vec<Conversation>,
    /// The frames held went over the limit: the rest of the capture was not read.
    pub cut_short: bool,
    pub stats: CaptureStats,
}

/// The client connections of the capture `input`, holding at most
/// `max_held` bytes of frames (requests and answers): past it the reading
/// stops and says so (`cut_short`). A request is matched with its answer by
/// correlation id, a SASL token from the server with the client's last.
pub fn read(
    cat: &Catalogue,
    input: impl std::io::Read,
    opts: &CaptureOptions,
    max_held: usize,
) -> Result<Read, String> {
    let mut by_conn: BTreeMap<usize, Conversation> = BTreeMap::new();
    // (connection, correlation id) → the request's place in its conversation.
    let mut open: HashMap<(usize, i32), usize> = HashMap::new();
    // A SASL token from the server answers the client's last token.
    let mut last_token: HashMap<usize, usize> = HashMap::new();
    let mut held = 0usize;
    let mut cut_short = false;
    let stats = for_each_captured(cat, input, opts, |c| {
        let Item::Frame(f) = c else {
            return true;
        };
        held += f.bytes.len();
        if held > max_held {
            cut_short = true;
            return false;
        }
        take(f, &mut by_conn, &mut open, &mut last_token);
        true
    })?;
    let conversations = by_conn
        .into_values()
        .filter(|c| !c.requests.is_empty())
        .collect();
    Ok(Read {
        conversations,
        cut_short,
        stats,
    })
}

fn take(
    f: CapturedFrame,
    by_conn: &mut BTreeMap<usize, Conversation>,
    open: &mut HashMap<(usize, i32), usize>,
    last_token: &mut HashMap<usize, usize>,
) {
    let conv = by_conn.entry(f.conn).or_insert_with(|| Conversation {
        conn: f.conn,
        requests: Vec::new(),
    });
    let captured = Captured {
        frame: f.index,
        time: f.timestamp,
        bytes: f.bytes.clone(),
    };
    let token = match &f.kind {
        FrameKind::SaslToken { mechanism } => Some(mechanism.name.clone()),
        _ => None,
    };
    match f.direction {
        Direction::Request => {
            let i = conv.requests.len();
            if let Some(c) = f.correlation_id {
                open.insert((f.conn, c), i);
            }
            if token.is_some() {
                last_token.insert(f.conn, i);
            }
            conv.requests.push(Request {
                sent: captured,
                api_key: f.api_key.unwrap_or(-1),
                version: f.api_version.unwrap_or(-1),
                answer: None,
                sasl_token: token.map(|m| m.to_string()),
            });
        }
        Direction::Response => {
            let at = match (&token, f.correlation_id) {
                (Some(_), _) => last_token.remove(&f.conn),
                (None, Some(c)) => open.remove(&(f.conn, c)),
                _ => None,
            };
            if let Some(r) = at.and_then(|i| conv.requests.get_mut(i)) {
                r.answer = Some(captured);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client_capture() -> std::fs::File {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/captures/confluent-kafka.pcap"
        );
        std::fs::File::open(path).unwrap()
    }

    #[test]
    fn every_frame_of_a_client_capture_is_a_request_or_its_answer() {
        let cat = Catalogue::builtin();
        let read = read(cat, client_capture(), &CaptureOptions::default(), 1 << 30).unwrap();
        assert!(!read.cut_short);
        assert!(read.conversations.len() > 1, "{read:?}");
        let requests: usize = read.conversations.iter().map(|c| c.requests.len()).sum();
        let answered = (read.conversations.iter())
            .flat_map(|c| &c.requests)
            .filter(|r| r.answer.is_some())
            .count();
        assert!(requests > 50);
        assert_eq!(requests + answered, read.stats.frames);
    }

    #[test]
    fn a_limit_on_what_is_held_cuts_the_reading_short() {
        let cat = Catalogue::builtin();
        let read = read(cat, client_capture(), &CaptureOptions::default(), 2_000).unwrap();
        assert!(read.cut_short);
        let held: usize = (read.conversations.iter())
            .flat_map(|c| &c.requests)
            .map(|r| r.sent.bytes.len() + r.answer.as_ref().map_or(0, |a| a.bytes.len()))
            .sum();
        assert!(held <= 2_000, "{held}");
    }
}
