//! `error-not-in-version`: an answer holding an error code that the API
//! cannot return at the request's version (`protocol::error_rules::ERROR_SINCE`),
//! or a producer-state error answered to a Produce request that carries no
//! producer id (below v3, message format v2, there is none to carry).

use super::super::{Ctx, Ex, Found, PRODUCE};
use super::error_text;
use crate::analysis::finding::Rule;
use crate::protocol::error_rules::{error_since, PRODUCER_STATE_ERRORS};

pub fn exchange(ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
    let (Some(resp), Some(response)) = (ex.resp, ex.response) else {
        return;
    };
    let (key, version) = ex.api;
    for &e in resp.error_set() {
        let why = match error_since(key, e) {
            Some(s) if version < s.since => format!("it exists only from v{}: {}", s.since, s.why),
            _ if key == PRODUCE && PRODUCER_STATE_ERRORS.contains(&e) => {
                if version < 3 {
                    format!("Produce v{version} cannot carry a producer id (message format v2 starts at Produce v3)")
                } else if produced_without_producer_id(ex) {
                    "none of the request's record batches has a producer id (producerId -1): the producer is neither idempotent nor transactional".into()
                } else {
                    continue;
                }
            }
            _ => continue,
        };
        out.push(Found::answer(
            Rule::ErrorNotInVersion,
            ex,
            response,
            format!(
                "{} answered {} to {}: {why}",
                ex.broker,
                error_text(e),
                ctx.api_text(ex.api),
            ),
        ));
    }
}

/// The request holds v2 batches and none of them names a producer.
fn produced_without_producer_id(ex: &Ex<'_>) -> bool {
    let mut batches = ex.req.partitions.iter().flat_map(|p| &p.batches).peekable();
    batches.peek().is_some() && batches.all(|b| !b.has_producer())
}
