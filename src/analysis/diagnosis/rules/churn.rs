//! `connection-churn`: a client that opens connections far faster than its
//! exchanges need. A healthy client keeps one connection per broker (plus a
//! bootstrap one and, for groups, one to the coordinator) and sends many
//! requests on each; one that connects for nearly every exchange spends a
//! handshake, ApiVersions and often TLS and SASL each time.

use super::super::{duration_text, ClientKey, Ex, Found};
use crate::analysis::finding::Rule;
use foldhash::{HashMap, HashSet};

/// Connections opened in the capture before a client can churn.
pub(crate) const MIN_CONNECTIONS: usize = 20;
/// Exchanges per connection below which its connections are churn.
pub(crate) const MAX_EXCHANGES_PER_CONNECTION: f64 = 3.0;

#[derive(Default)]
struct Client {
    /// Connections opened in the capture (SYN seen), each with its first
    /// frame and its exchanges.
    opened: HashMap<usize, (usize, u64)>,
    exchanges: u64,
    first: f64,
    last: f64,
}

#[derive(Default)]
pub(crate) struct Churn {
    clients: HashMap<ClientKey, Client>,
    seen: HashSet<usize>,
}

impl Churn {
    /// `syn`: when each connection whose SYN was seen opened.
    pub fn exchange(&mut self, ex: &Ex<'_>, syn: &HashMap<usize, f64>) {
        let c = self
            .clients
            .entry(ex.client.clone())
            .or_insert_with(|| Client {
                first: ex.request.time,
                ..Client::default()
            });
        c.exchanges += 1;
        c.last = c.last.max(ex.response.map_or(ex.request.time, |r| r.time));
        if self.seen.insert(ex.conn) {
            if let Some(&t) = syn.get(&ex.conn) {
                c.opened.insert(ex.conn, (ex.request.index, 0));
                c.first = c.first.min(t);
            }
        }
        if let Some(on) = c.opened.get_mut(&ex.conn) {
            on.1 += 1;
        }
    }

    /// `explained`: connections another finding accounts for (a reconnect
    /// after an abandoned poll), not counted.
    pub fn finish(&mut self, explained: &HashSet<usize>, out: &mut Vec<Found>) {
        let mut clients: Vec<(&ClientKey, &Client)> = self.clients.iter().collect();
        clients.sort_by(|a, b| a.1.first.total_cmp(&b.1.first));
        for (key, c) in clients {
            let conns = c.opened.keys().filter(|k| !explained.contains(k)).count();
            let exchanges = c.exchanges
                - (c.opened.iter())
                    .filter(|(k, _)| explained.contains(k))
                    .map(|(_, on)| on.1)
                    .sum::<u64>();
            if conns < MIN_CONNECTIONS {
                continue;
            }
            let per_conn = exchanges as f64 / conns as f64;
            if per_conn >= MAX_EXCHANGES_PER_CONNECTION {
                continue;
            }
            let span = (c.last - c.first).max(0.0);
            let rate = if span > 0.0 {
                format!(", {:.1} a second", conns as f64 / span)
            } else {
                String::new()
            };
            let mut frames: Vec<usize> = c
                .opened
                .iter()
                .filter(|(k, _)| !explained.contains(k))
                .map(|(_, on)| on.0)
                .collect();
            frames.sort_unstable();
            out.push(Found {
                rule: Rule::ConnectionChurn,
                frames,
                time: c.first,
                until: c.last,
                conn: None,
                client: Some(key.clone()),
                api: None,
                count: conns as u64,
                message: format!(
                    "{} opened {conns} connections in {}{rate}, for {} exchanges ({per_conn:.1} a connection)",
                    key.describe(),
                    duration_text(span),
                    exchanges,
                ),
            });
        }
    }
}
