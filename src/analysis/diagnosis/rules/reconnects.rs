//! Which connection a client opened again after closing one: the tell of a
//! client that gave up waiting (its request timed out) rather than stopped,
//! for `poll-abandoned` and `closed-unanswered`. A client whose request
//! timed out drops that one connection, keeps its others (the group
//! coordinator's: kafka-python and librdkafka go on heartbeating there),
//! and opens a new one to the same broker within milliseconds, where it
//! goes on polling or producing (after a Metadata request, as kafka-python
//! does, or the one it queued, as librdkafka does). A client that stops
//! closes all its connections at once; started again under the same id
//! (the default `rdkafka` of every librdkafka application, too), it is a
//! new set of connections, so it is not taken for one that gave up.

use super::super::{ClientKey, Req, FETCH, PRODUCE};
use super::closed::SHARE_FETCH;
use foldhash::HashMap;
use std::net::SocketAddr;

/// How soon after its close a client's new connection reads as the reconnect.
pub(crate) const RECONNECT_WITHIN: f64 = 1.0;
/// How long after the close another connection of the client must still be
/// open for the close to be one connection given up, not the client
/// stopping: a client that stops closes its connections within
/// milliseconds of each other (kafka-python after its LeaveGroup's answer,
/// librdkafka at once), while a timed-out poll's siblings stay open, unless
/// the application happens to stop soon after.
pub(crate) const OTHERS_OPEN_FOR: f64 = 0.25;

/// A connection as the index knows it: whose, to which broker, when it
/// opened and began to close, and what work it did.
struct Conn {
    client: ClientKey,
    broker: SocketAddr,
    opened: f64,
    closed: Option<f64>,
    polled: bool,
    produced: bool,
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

/// A client's connections by when they opened (with the connection's
/// number), built when first asked (at the capture's end).
type ByClient = HashMap<ClientKey, Vec<(f64, usize)>>;

#[derive(Default)]
pub(crate) struct Reconnects {
    conns: HashMap<usize, Conn>,
    by_client: Option<ByClient>,
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
            closed: None,
            polled: false,
            produced: false,
        });
        c.polled |= is_poll(req.api.0);
        c.produced |= req.api.0 == PRODUCE;
    }

    /// Connection `conn` began to close (its first FIN, or an RST).
    pub(crate) fn closing(&mut self, conn: usize, when: f64) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.closed.get_or_insert(when);
        }
    }

    /// The first connection other than `closed` that `client` opened to
    /// `broker` from `from` until [`RECONNECT_WITHIN`] after `when` and on
    /// which it `goes_on` with its work, and how soon after `when`; none
    /// unless another connection of the client opened before the close
    /// stayed open [`OTHERS_OPEN_FOR`] after it.
    pub(crate) fn after(
        &mut self,
        on: (&ClientKey, SocketAddr),
        (closed, when): (usize, f64),
        from: f64,
        goes_on: GoesOn,
    ) -> Option<Reconnect> {
        match self.around(on.0, (closed, when)).others_stay_open {
            true => self.reopened(on, (closed, when), from, goes_on),
            false => None,
        }
    }

    /// The first connection other than `closed` that `client` opened to
    /// `broker` from `from` until [`RECONNECT_WITHIN`] after `when` and on
    /// which it `goes_on` with its work, and how soon after `when`, whatever
    /// became of its other connections.
    pub(crate) fn reopened(
        &mut self,
        (client, broker): (&ClientKey, SocketAddr),
        (closed, when): (usize, f64),
        from: f64,
        goes_on: GoesOn,
    ) -> Option<Reconnect> {
        let conns = &self.conns;
        let list = index(&mut self.by_client, conns).get(client)?;
        let start = list.partition_point(|(t, _)| *t < from);
        let &(opened, conn) = list[start..]
            .iter()
            .take_while(|(t, _)| *t <= when + RECONNECT_WITHIN)
            .find(|(_, k)| {
                *k != closed
                    && conns.get(k).is_some_and(|c| {
                        c.broker == broker
                            && (c.polled || (goes_on == GoesOn::Working && c.produced))
                    })
            })?;
        Some(Reconnect {
            after: (opened - when).max(0.0),
            conn,
        })
    }

    /// What became of `client`'s other connections, opened before it closed
    /// connection `closed` at `when`.
    pub(crate) fn around(&mut self, client: &ClientKey, (closed, when): (usize, f64)) -> Around {
        let mut around = Around {
            others_stay_open: false,
            closed_alone: true,
        };
        let conns = &self.conns;
        let Some(list) = index(&mut self.by_client, conns).get(client) else {
            return around;
        };
        let others = list
            .iter()
            .take_while(|(t, _)| *t < when)
            .filter(|(_, k)| *k != closed)
            .filter_map(|(_, k)| conns.get(k));
        for c in others {
            match c.closed {
                None => around.others_stay_open = true,
                Some(t) if t > when + OTHERS_OPEN_FOR => around.others_stay_open = true,
                Some(t) if t >= when - OTHERS_OPEN_FOR => around.closed_alone = false,
                Some(_) => {}
            }
        }
        around
    }
}

/// Each client's connections by when they opened, built when first asked
/// (at the capture's end, when every connection is known).
fn index<'a>(by_client: &'a mut Option<ByClient>, conns: &HashMap<usize, Conn>) -> &'a ByClient {
    by_client.get_or_insert_with(|| {
        let mut index = ByClient::default();
        for (&k, c) in conns {
            (index.entry(c.client.clone()).or_default()).push((c.opened, k));
        }
        for list in index.values_mut() {
            list.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        }
        index
    })
}

/// What became of a client's other connections when it closed one.
#[derive(Clone, Copy)]
pub(crate) struct Around {
    /// One stayed open [`OTHERS_OPEN_FOR`] after the close (a client that
    /// stops closes them all).
    pub others_stay_open: bool,
    /// None began to close within [`OTHERS_OPEN_FOR`] of it, before or after.
    pub closed_alone: bool,
}

/// A long poll's API: Fetch, ShareFetch.
pub(crate) fn is_poll(key: i16) -> bool {
    key == FETCH || key == SHARE_FETCH
}
