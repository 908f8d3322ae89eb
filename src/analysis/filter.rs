//! The selection `capture` and `stats` share: `--api`, `--topic`,
//! `--client-id`, `--conn`, `--error [NAME]`, `--min-latency MS`. Every
//! criterion given must hold. An exchange is decided once its response came
//! (or will not come); a frame is selected when its exchange is.
//!
//! - `--api`, `--conn`: a response without its request has no API, so it
//!   passes `--conn` only.
//! - `--client-id`: the request's client id, exactly (a null one never matches).
//! - `--topic`: a topic the request or the response names (by name; by id,
//!   hyphenated or as Kafka prints it, when the capture never tied the id to a name).
//! - `--error`: the response carries a non-zero error code (that one, given a
//!   name or number). A request never answered has no error.
//! - `--min-latency MS`: an answered exchange whose latency is at least MS; a
//!   request never answered when it waited at least MS without an answer (to
//!   the end of the capture, or to the request that reused its correlation id).

use super::exchange::{Exchange, Needs, Outcome};
use crate::protocol::error_codes::error_name;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub api: Option<i16>,
    pub topic: Option<String>,
    pub client_id: Option<String>,
    pub conn: Option<usize>,
    pub error: Option<ErrorWanted>,
    pub min_latency_us: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorWanted {
    /// Any non-zero error code.
    Any,
    Code(i16),
}

/// An error code by its name (any case) or number.
pub fn error_code(text: &str) -> Option<i16> {
    if let Ok(n) = text.parse::<i16>() {
        return Some(n);
    }
    (i16::MIN..=i16::MAX).find(|&c| error_name(c).is_some_and(|n| n.eq_ignore_ascii_case(text)))
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    /// What deciding needs read from the frames.
    pub fn needs(&self) -> Needs {
        Needs { client_id: self.client_id.is_some(), topics: self.topic.is_some(), errors: self.error.is_some() }
    }

    /// Whether deciding takes more than a frame's own api and connection.
    pub fn needs_exchanges(&self) -> bool {
        self.topic.is_some() || self.client_id.is_some() || self.error.is_some() || self.min_latency_us.is_some()
    }

    /// Whether the exchange is selected; `None` while it depends on a
    /// response still to come.
    pub fn decide(&self, ex: &Exchange<'_>) -> Option<bool> {
        let pending = ex.outcome == Outcome::Pending;
        let answers = [
            self.api.map(|a| Some(ex.api.is_some_and(|(k, _)| k == a))),
            self.conn.map(|c| Some(ex.conn == c)),
            self.client_id.as_ref().map(|want| Some(ex.client_id.and_then(|c| ex.names.client_id(c)).is_some_and(|c| c == want.as_bytes()))),
            self.topic.as_ref().map(|want| {
                let named = ex.topics.iter().any(|&t| ex.names.topic(t).is_some_and(|t| t.is(want)));
                // The response may name it yet.
                if named || !pending {
                    Some(named)
                } else {
                    None
                }
            }),
            self.error.map(|want| match ex.outcome {
                Outcome::Pending => None,
                _ => Some(match want {
                    ErrorWanted::Any => !ex.errors.is_empty(),
                    ErrorWanted::Code(c) => ex.errors.contains(&c),
                }),
            }),
            self.min_latency_us.map(|min| match ex.outcome {
                Outcome::Pending => None,
                Outcome::Answered { latency_us } => Some(latency_us >= min),
                Outcome::Unanswered { waited_us } => Some(waited_us >= min),
                Outcome::Unmatched => Some(false),
            }),
        ];
        let mut all = Some(true);
        for a in answers.into_iter().flatten() {
            match a {
                Some(false) => return Some(false),
                None => all = None,
                Some(true) => {}
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names_and_numbers_resolve() {
        assert_eq!(error_code("NOT_COORDINATOR"), Some(16));
        assert_eq!(error_code("not_coordinator"), Some(16));
        assert_eq!(error_code("16"), Some(16));
        assert_eq!(error_code("-1"), Some(-1));
        assert_eq!(error_code("NO_SUCH_ERROR"), None);
    }
}
