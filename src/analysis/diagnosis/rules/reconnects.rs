//! Which connection a client opened again after closing one: the tell of a
//! client that gave up waiting (its request timeout ran out) rather than
//! stopped, for `poll-abandoned` and `closed-unanswered`. A client that
//! stops does not open a new connection to the same broker within
//! [`RECONNECT_WITHIN`] of its close; one whose request timed out does,
//! within milliseconds (kafka-python, librdkafka), and goes on with its
//! work there: its first request after ApiVersions (and SASL) is a Fetch or
//! a Produce. A client started again with the same id looks up the cluster
//! first (Metadata, FindCoordinator), so it is not taken for one.

use super::super::{ClientKey, Req, FETCH, PRODUCE};
use super::closed::SHARE_FETCH;
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::protocol::sasl::{SASL_AUTHENTICATE_KEY, SASL_HANDSHAKE_KEY};
use foldhash::HashMap;
use std::net::SocketAddr;

/// How soon after its close a client's new connection reads as the reconnect.
pub(crate) const RECONNECT_WITHIN: f64 = 1.0;

/// A connection as the index knows it: who opened it, when, and the API of
/// its first request after ApiVersions and SASL.
struct Conn {
    client: ClientKey,
    broker: SocketAddr,
    opened: f64,
    first_work: Option<i16>,
}

/// What a reconnect must go on with.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum GoesOn {
    /// A long poll (Fetch, ShareFetch).
    Polling,
    /// A long poll or a Produce.
    Working,
}

/// A new connection found after a close: how soon, which one.
pub(crate) struct Reconnect {
    pub after: f64,
    pub conn: usize,
}

/// A client's connections to one broker by when they opened, each with the
/// API of its first work.
type Opened = HashMap<(ClientKey, SocketAddr), Vec<(f64, usize, Option<i16>)>>;

#[derive(Default)]
pub(crate) struct Reconnects {
    conns: HashMap<usize, Conn>,
    /// Each client's connections to each broker by when they opened (with
    /// their first work), built when first asked (at the capture's end).
    by_client: Option<Opened>,
}

impl Reconnects {
    /// A connection is opened when its SYN was seen (`syn`), else at its
    /// first request.
    pub(crate) fn request(&mut self, req: &Req<'_>, syn: &HashMap<usize, f64>) {
        let syn = syn.get(&req.conn).copied();
        let c = self.conns.entry(req.conn).or_insert_with(|| Conn {
            client: req.client.clone(),
            broker: req.broker,
            opened: syn.unwrap_or(req.at.time),
            first_work: None,
        });
        if c.first_work.is_none()
            && !matches!(
                req.api.0,
                API_VERSIONS_KEY | SASL_HANDSHAKE_KEY | SASL_AUTHENTICATE_KEY
            )
        {
            c.first_work = Some(req.api.0);
        }
    }

    /// The first connection other than `closed` that `client` opened to
    /// `broker` from `from` until [`RECONNECT_WITHIN`] after `when` and that
    /// `goes_on` with its work, and how soon after `when`.
    pub(crate) fn after(
        &mut self,
        (client, broker): (&ClientKey, SocketAddr),
        (closed, when): (usize, f64),
        from: f64,
        goes_on: GoesOn,
    ) -> Option<Reconnect> {
        let index = self.by_client.get_or_insert_with(|| {
            let mut index = Opened::default();
            for (&k, c) in &self.conns {
                (index.entry((c.client.clone(), c.broker)).or_default()).push((
                    c.opened,
                    k,
                    c.first_work,
                ));
            }
            for conns in index.values_mut() {
                conns.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            }
            index
        });
        let conns = index.get(&(client.clone(), broker))?;
        let start = conns.partition_point(|(t, ..)| *t < from);
        let &(opened, conn, _) = conns[start..]
            .iter()
            .take_while(|(t, ..)| *t <= when + RECONNECT_WITHIN)
            .find(|(_, k, work)| {
                *k != closed
                    && work
                        .is_some_and(|w| is_poll(w) || (goes_on == GoesOn::Working && w == PRODUCE))
            })?;
        Some(Reconnect {
            after: (opened - when).max(0.0),
            conn,
        })
    }
}

/// A long poll's API: Fetch, ShareFetch.
pub(crate) fn is_poll(key: i16) -> bool {
    key == FETCH || key == SHARE_FETCH
}
