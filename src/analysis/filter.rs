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

    /// Whether connection `conn`'s open and close show as rows among the
    /// frames this filter selects: when it names no more than a connection
    /// (that one), as `capture --list` shows them.
    pub fn shows_conn_events(&self, conn: usize) -> bool {
        self.conn.is_none_or(|c| c == conn)
            && Filter {
                conn: None,
                ..self.clone()
            }
            .is_empty()
    }

    /// What deciding needs read from the frames.
    pub fn needs(&self) -> Needs {
        Needs {
            client_id: self.client_id.is_some(),
            topics: self.topic.is_some(),
            errors: self.error.is_some(),
        }
    }

    /// Whether deciding takes more than a frame's own api and connection.
    pub fn needs_exchanges(&self) -> bool {
        self.topic.is_some()
            || self.client_id.is_some()
            || self.error.is_some()
            || self.min_latency_us.is_some()
    }

    /// Whether the exchange is selected; `None` while it depends on a
    /// response still to come.
    pub fn decide(&self, ex: &Exchange<'_>) -> Option<bool> {
        let pending = ex.outcome == Outcome::Pending;
        let answers = [
            self.api.map(|a| Some(ex.api.is_some_and(|(k, _)| k == a))),
            self.conn.map(|c| Some(ex.conn == c)),
            self.client_id.as_ref().map(|want| {
                Some(
                    ex.client_id
                        .and_then(|c| ex.names.client_id(c))
                        .is_some_and(|c| c == want.as_bytes()),
                )
            }),
            self.topic.as_ref().map(|want| {
                let named = ex
                    .topics
                    .iter()
                    .any(|&t| ex.names.topic(t).is_some_and(|t| t.is(want)));
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

impl Filter {
    /// The filter as [`parse_terms`] reads it back.
    pub fn terms(&self, cat: &crate::schema::Catalogue) -> String {
        let mut t = Vec::new();
        if let Some(a) = self.api {
            t.push(format!(
                "api={}",
                cat.api_name(a)
                    .map_or_else(|| a.to_string(), str::to_string)
            ));
        }
        if let Some(x) = &self.topic {
            t.push(format!("topic={x}"));
        }
        if let Some(x) = &self.client_id {
            t.push(format!("client-id={x}"));
        }
        if let Some(c) = self.conn {
            t.push(format!("conn={c}"));
        }
        match self.error {
            Some(ErrorWanted::Any) => t.push("error".into()),
            Some(ErrorWanted::Code(c)) => t.push(format!(
                "error={}",
                error_name(c).map_or_else(|| c.to_string(), str::to_string)
            )),
            None => {}
        }
        if let Some(us) = self.min_latency_us {
            t.push(format!("min-latency={}", us as f64 / 1000.0));
        }
        t.join(" ")
    }
}

/// The explorer's filter (`f`), in the command line's words: terms
/// `api=NAME`, `topic=NAME`, `client-id=ID`, `conn=N`, `error` or
/// `error=NAME`, `min-latency=MS`, separated by spaces; every term must hold.
pub fn parse_terms<'t>(cat: &crate::schema::Catalogue, text: &'t str) -> Result<Filter, String> {
    let mut f = Filter::default();
    for term in text.split_whitespace() {
        let (name, value) = match term.split_once('=') {
            Some((n, v)) => (n.trim_start_matches("--"), Some(v)),
            None => (term.trim_start_matches("--"), None),
        };
        let need = |v: Option<&'t str>| -> Result<&'t str, String> {
            v.filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value: {name}=…"))
        };
        match name {
            "api" => {
                let v = need(value)?;
                f.api = Some(cat.resolve_api(v).ok_or_else(|| format!("unknown API {v}"))?);
            }
            "topic" => f.topic = Some(need(value)?.to_string()),
            "client-id" | "client" => f.client_id = Some(need(value)?.to_string()),
            "conn" => f.conn = Some(need(value)?.parse().map_err(|_| format!("conn={}: give a connection number", value.unwrap_or("")))?),
            "error" => {
                f.error = Some(match value {
                    None | Some("") => ErrorWanted::Any,
                    Some(v) => ErrorWanted::Code(error_code(v).ok_or_else(|| format!("unknown error {v}"))?),
                })
            }
            "min-latency" => {
                let v = need(value)?;
                let ms: f64 = v.trim_end_matches("ms").parse().map_err(|_| format!("min-latency={v}: give milliseconds"))?;
                if !ms.is_finite() || ms < 0.0 {
                    return Err(format!("min-latency={v}: give milliseconds, 0 or more"));
                }
                f.min_latency_us = Some((ms * 1000.0).round() as u64);
            }
            _ => return Err(format!("unknown term {term}: use api=, topic=, client-id=, conn=, error[=NAME], min-latency=MS")),
        }
    }
    Ok(f)
}

#[cfg(test)]
mod term_tests {
    use super::*;

    #[test]
    fn terms_read_as_the_options_do() {
        let cat = crate::schema::Catalogue::builtin();
        let f = parse_terms(
            cat,
            "api=Produce topic=orders client-id=app conn=3 error=NOT_COORDINATOR min-latency=2.5ms",
        )
        .unwrap();
        assert_eq!(
            f,
            Filter {
                api: Some(0),
                topic: Some("orders".into()),
                client_id: Some("app".into()),
                conn: Some(3),
                error: Some(ErrorWanted::Code(16)),
                min_latency_us: Some(2500)
            }
        );
        assert_eq!(
            parse_terms(cat, "error").unwrap().error,
            Some(ErrorWanted::Any)
        );
        assert!(parse_terms(cat, "api=Nope")
            .unwrap_err()
            .contains("unknown API"));
        assert!(parse_terms(cat, "colour=red")
            .unwrap_err()
            .contains("unknown term"));
        assert!(parse_terms(cat, "").unwrap().is_empty());
        assert_eq!(parse_terms(cat, &f.terms(cat)).unwrap(), f);
    }
}
