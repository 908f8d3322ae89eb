//! `retry-loop`: one client's request to one API answered with the same
//! error three or more times in a row, or with an answer that does not
//! decode (the client cannot read it either, and asks again). Errors that
//! usually pass by themselves (a leader or coordinator moving, a rebalance:
//! `protocol::error_rules::is_transient`) are normal for a few tries, so
//! their streaks count only from ten answers or ten seconds on.

use super::super::{duration_text, ClientKey, Ctx, Ex, Found};
use super::{errors_text, push_frame};
use crate::analysis::finding::Rule;
use crate::protocol::error_rules::is_transient;
use crate::protocol::headers::API_VERSIONS_KEY;
use foldhash::HashMap;

/// Answers in a row that make a loop.
pub(crate) const MIN_LOOP: u64 = 3;
/// For errors that usually pass: answers, or seconds, that make a loop.
pub(crate) const MIN_TRANSIENT_LOOP: u64 = 10;
pub(crate) const MIN_TRANSIENT_SECONDS: f64 = 10.0;

/// What an answer said, as a loop compares answers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// Its non-zero error codes (none: a success).
    Errors(Vec<i16>),
    /// It did not decode by the definitions.
    Undecodable,
}

impl Outcome {
    fn failed(&self) -> bool {
        !matches!(self, Outcome::Errors(e) if e.is_empty())
    }

    fn text(&self) -> String {
        match self {
            Outcome::Errors(e) => errors_text(e),
            Outcome::Undecodable => "with a response that does not decode".into(),
        }
    }

    fn transient(&self) -> bool {
        match self {
            Outcome::Errors(e) => e.iter().all(|&c| is_transient(c)),
            Outcome::Undecodable => false,
        }
    }
}

struct Streak {
    outcome: Outcome,
    api: (i16, i16),
    conn: usize,
    frames: Vec<usize>,
    first: f64,
    last: f64,
    /// The time of each try's request, first and last: the loop's period.
    first_request: f64,
    last_request: f64,
    count: u64,
}

#[derive(Default)]
pub(crate) struct RetryLoop {
    streaks: HashMap<(ClientKey, i16), Streak>,
}

impl RetryLoop {
    pub fn exchange(&mut self, ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
        let (Some(resp), Some(response)) = (ex.resp, ex.response) else {
            return;
        };
        let key = (ex.client.clone(), ex.api.0);
        // ApiVersions' v0 fallback answer is not read for facts (and is legal).
        let outcome = if !resp.decoded && ex.api.0 != API_VERSIONS_KEY {
            Outcome::Undecodable
        } else {
            Outcome::Errors(resp.error_set().to_vec())
        };
        if let Some(s) = self.streaks.get_mut(&key) {
            if outcome.failed() && s.outcome == outcome {
                push_frame(&mut s.frames, ex.request.index);
                push_frame(&mut s.frames, response.index);
                s.last = response.time;
                s.last_request = ex.request.time;
                s.count += 1;
                s.api = ex.api;
                return;
            }
            let ended = self.streaks.remove(&key);
            if let Some(s) = ended {
                let then = if !outcome.failed() {
                    "then it succeeded"
                } else {
                    "then the answer changed"
                };
                report(ctx, &key.0, s, then, out);
            }
        }
        if !outcome.failed() {
            return;
        }
        self.streaks.insert(
            key,
            Streak {
                outcome,
                api: ex.api,
                conn: ex.conn,
                frames: vec![ex.request.index, response.index],
                first: ex.request.time,
                last: response.time,
                first_request: ex.request.time,
                last_request: ex.request.time,
                count: 1,
            },
        );
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut left: Vec<((ClientKey, i16), Streak)> = self.streaks.drain().collect();
        left.sort_by(|a, b| a.1.first.total_cmp(&b.1.first));
        for (key, s) in left {
            report(ctx, &key.0, s, "until the end of the capture", out);
        }
    }
}

fn report(ctx: &Ctx<'_>, client: &ClientKey, s: Streak, then: &str, out: &mut Vec<Found>) {
    let long_enough = match s.outcome.transient() {
        false => s.count >= MIN_LOOP,
        true => s.count >= MIN_TRANSIENT_LOOP || s.last - s.first >= MIN_TRANSIENT_SECONDS,
    };
    if !long_enough {
        return;
    }
    let period = (s.last_request - s.first_request) / (s.count - 1).max(1) as f64;
    let message = format!(
        "{} from {} answered {} {} times in a row, every {} over {}, {then}",
        ctx.api_text(s.api),
        client.describe(),
        s.outcome.text(),
        s.count,
        duration_text(period),
        duration_text(s.last - s.first),
    );
    out.push(Found {
        rule: Rule::RetryLoop,
        frames: s.frames,
        time: s.first,
        until: s.last,
        conn: Some(s.conn),
        client: Some(client.clone()),
        api: Some(s.api),
        count: s.count,
        message,
    });
}
