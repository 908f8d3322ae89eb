//! Listing lines (`capture --list`, and the explorer's frame list): one line
//! a frame, `{index} {time} conn {n} {client} {arrow} {server} {api} v{version}
//! corr={id} {size}B {summary}`, written into byte buffers without `format!`
//! (a listing writes millions of them). What the line says of the frame comes
//! from [`crate::analysis::listing`].

use super::digits::{push_int, push_six_digits, push_uint};
use crate::analysis::listing::{ListEntry, Summary};
use crate::capture::CapturedFrame;
use crate::decode::Direction;
use crate::protocol::error_codes::error_name;
use crate::schema::Catalogue;
use crate::text::escape::{quote, sanitize};
use std::io::Write;

/// What the line of a frame needs besides the frame: API names, endpoint
/// texts and the last client id quoted, each made once.
pub struct LineWriter<'c> {
    /// Times as seconds since this one (the explorer's `t`), instead of UTC date-times.
    pub relative_to: Option<f64>,
    api_names: ApiNames<'c>,
    endpoints: Endpoints,
    quoted: QuotedCache,
    /// The last whole second written as a date-time (`2026-12-01T16:24:01`):
    /// frames come many to a second, and formatting a date costs more than a line.
    second: Option<(u64, String)>,
    /// Connections already named in a line of their own
    /// ([`Self::naming_connections`]); `None`: rows carry the addresses.
    named: Option<Vec<u64>>,
}

impl<'c> LineWriter<'c> {
    pub fn new(cat: &'c Catalogue) -> Self {
        LineWriter {
            relative_to: None,
            api_names: ApiNames::new(cat),
            endpoints: Endpoints::new(),
            quoted: QuotedCache::default(),
            second: None,
            named: None,
        }
    }

    /// Each connection's addresses said once, in a line of their own before
    /// its first row (`conn 3 = 10.0.0.5:52012 → 10.0.0.2:9092`), and rows
    /// as `conn 3 → …`: the addresses were half of every line.
    pub fn naming_connections(mut self) -> Self {
        self.named = Some(Vec::new());
        self.without_addresses()
    }

    /// Rows without the addresses (`conn 3 → …`), for a view that names
    /// connections in lines of its own ([`conn_name`]).
    pub(crate) fn without_addresses(mut self) -> Self {
        self.endpoints.addresses = false;
        self
    }

    /// `conn {n} = {client} → {broker}` and a newline, when connections are
    /// named and this one has not been yet.
    fn push_name(
        &mut self,
        line: &mut Vec<u8>,
        conn: usize,
        client: std::net::SocketAddr,
        broker: std::net::SocketAddr,
    ) {
        let Some(named) = &mut self.named else {
            return;
        };
        let (word, bit) = (conn / 64, 1u64 << (conn % 64));
        if named.len() <= word {
            named.resize(word + 1, 0);
        }
        if named[word] & bit == 0 {
            named[word] |= bit;
            line.extend_from_slice(conn_name(conn, client, broker).as_bytes());
            line.push(b'\n');
        }
    }

    /// The start of every line: `{index:>5} {time} conn {n} {client} {arrow} {server} `
    /// (`conn {n} {arrow} ` when connections are named).
    pub(crate) fn push_lead(&mut self, line: &mut Vec<u8>, f: &CapturedFrame) {
        let (client, broker) = match f.direction {
            Direction::Request => (f.from, f.to),
            Direction::Response => (f.to, f.from),
        };
        self.push_name(line, f.conn, client, broker);
        push_uint(line, f.index as u64, 5);
        line.push(b' ');
        self.push_time(line, f.timestamp);
        line.push(b' ');
        line.extend_from_slice(self.endpoints.get(f).as_bytes());
    }

    /// A time as a UTC date-time, or as seconds since [`Self::relative_to`].
    fn push_time(&mut self, line: &mut Vec<u8>, x: f64) {
        match self.relative_to {
            Some(t0) => {
                let _ = write!(line, "{:>+14.6}s", x - t0);
            }
            None => self.push_date_time(line, x),
        }
    }

    /// A connection's open or close as a row of the listing (without its
    /// newline): the TCP flag in the frame number's column, the time, the
    /// connection, and who did it.
    pub(crate) fn push_conn_event(&mut self, line: &mut Vec<u8>, e: &crate::capture::ConnEvent) {
        use crate::capture::ConnEventKind;
        let arrow = match e.kind.side() {
            crate::capture::Side::Client => "→",
            crate::capture::Side::Broker => "←",
        };
        let what = match e.kind {
            ConnEventKind::Open => "opened by the client".to_string(),
            ConnEventKind::Fin(side) => format!("closed by the {} (FIN)", side.as_str()),
            ConnEventKind::Reset(side) => format!("reset by the {} (RST)", side.as_str()),
        };
        let place = ConnPlace {
            conn: e.conn,
            client: e.client,
            broker: e.broker,
            arrow,
        };
        self.push_conn_row(line, e.kind.flag(), e.timestamp, place, &what);
    }

    /// A row of what happened on a connection besides a frame (an open or
    /// close, a TLS session, skipped bytes): `{flag:>5} {time} conn {n}
    /// {arrow} {what}`, with the addresses unless connections are named.
    pub fn push_conn_row(
        &mut self,
        line: &mut Vec<u8>,
        flag: &str,
        time: f64,
        place: ConnPlace,
        what: &str,
    ) {
        self.push_name(line, place.conn, place.client, place.broker);
        let _ = write!(line, "{flag:>5} ");
        self.push_time(line, time);
        let ConnPlace {
            conn,
            client,
            broker,
            arrow,
        } = place;
        let _ = match self.endpoints.addresses {
            false => write!(line, " conn {conn} {arrow} {what}"),
            true => write!(line, " conn {conn} {client} {arrow} {broker} {what}"),
        };
    }

    /// [`push_timestamp`], the date-time to the second made once per second.
    fn push_date_time(&mut self, line: &mut Vec<u8>, x: f64) {
        let Some(us) = micros_exact(x) else {
            return push_timestamp(line, x);
        };
        let second = us / 1_000_000;
        if self.second.as_ref().is_none_or(|(s, _)| *s != second) {
            match crate::protocol::meanings::utc_micros(us) {
                Some(text) => self.second = Some((second, text[..19].to_string())),
                None => return push_timestamp(line, x),
            }
        }
        if let Some((_, text)) = &self.second {
            line.extend_from_slice(text.as_bytes());
            line.push(b'.');
            push_six_digits(line, us % 1_000_000);
            line.push(b'Z');
        }
    }

    /// A frame's line (without its newline): a response's latency, when its
    /// request is known, between its size and its summary; `red` wraps a
    /// malformed frame's summary in the terminal's bold red.
    pub(crate) fn push_frame(
        &mut self,
        line: &mut Vec<u8>,
        f: &CapturedFrame,
        entry: &ListEntry,
        latency_us: Option<u64>,
        red: bool,
    ) {
        self.push_head(line, f, entry);
        if let Some(us) = latency_us {
            push_latency(line, us);
        }
        let red = red && entry.is_malformed();
        if red {
            line.extend_from_slice(b"\x1b[1;31m");
        }
        self.push_summary(line, &entry.summary);
        if red {
            line.extend_from_slice(b"\x1b[0m");
        }
        if let Some(c) = &f.comment {
            // The packet's comment: what `kwire proxy --inject` did to the frame.
            line.extend_from_slice(b"  # ");
            line.extend_from_slice(sanitize(c).as_bytes());
        }
    }

    /// A frame's line up to its summary: lead, API and version, correlation
    /// id, size, and a space.
    pub(crate) fn push_head(&mut self, line: &mut Vec<u8>, f: &CapturedFrame, entry: &ListEntry) {
        self.push_lead(line, f);
        self.push_api(line, entry);
        line.extend_from_slice(b" corr=");
        match f.correlation_id {
            Some(c) => push_int(line, c.into()),
            None => line.push(b'?'),
        }
        line.push(b' ');
        push_size(line, f);
        line.push(b' ');
    }

    /// `{api} v{version}`, `?` for what is not known; `guessed` before a
    /// guess (`--guess`).
    pub(crate) fn push_api(&mut self, line: &mut Vec<u8>, entry: &ListEntry) {
        if entry.guessed {
            line.extend_from_slice(b"guessed ");
        }
        line.extend_from_slice(
            entry
                .api_key
                .and_then(|k| self.api_names.get(k))
                .unwrap_or("?")
                .as_bytes(),
        );
        line.extend_from_slice(b" v");
        match entry.api_version {
            Some(v) => push_int(line, v.into()),
            None => line.push(b'?'),
        }
    }

    /// A SASL token's line: `SASL token ({mechanism}) {size}B auth_bytes={n}B`;
    /// the token's bytes (a password, for PLAIN) are not shown.
    pub(crate) fn push_token(&mut self, line: &mut Vec<u8>, f: &CapturedFrame, mechanism: &str) {
        self.push_lead(line, f);
        line.extend_from_slice(b"SASL token (");
        line.extend_from_slice(sanitize(mechanism).as_bytes());
        line.extend_from_slice(b") ");
        push_size(line, f);
        line.extend_from_slice(b" auth_bytes=");
        push_uint(line, f.len.saturating_sub(4) as u64, 0);
        line.push(b'B');
    }

    /// The summary at the end of a line.
    pub(crate) fn push_summary(&mut self, line: &mut Vec<u8>, summary: &Summary) {
        match summary {
            Summary::Malformed(e) => {
                line.extend_from_slice(b"!! ");
                line.extend_from_slice(sanitize(&e.to_string()).as_bytes());
            }
            Summary::Request { client_id: Some(c) } => {
                line.extend_from_slice(b"client_id=");
                line.extend_from_slice(self.quoted.get(c).as_bytes());
            }
            Summary::Request { client_id: None } => {}
            Summary::LargeBody => line.extend_from_slice(
                b"(large: body not decoded in the listing; select it with --frame)",
            ),
            Summary::Unmatched => line.extend_from_slice(
                b"unmatched response (its request is not in the capture; --guess)",
            ),
            Summary::Ok => line.extend_from_slice(b"ok"),
            Summary::Errors(codes) => {
                line.extend_from_slice(b"errors: ");
                line.extend_from_slice(error_names(codes).join(", ").as_bytes());
            }
        }
    }
}

/// The line that names a connection: `conn 3 = 10.0.0.5:52012 → 10.0.0.2:9092`.
pub fn conn_name(
    conn: usize,
    client: std::net::SocketAddr,
    broker: std::net::SocketAddr,
) -> String {
    format!("conn {conn} = {client} → {broker}")
}

/// A connection and which way something went on it, for [`LineWriter::push_conn_row`].
#[derive(Clone, Copy, Debug)]
pub struct ConnPlace {
    pub conn: usize,
    pub client: std::net::SocketAddr,
    pub broker: std::net::SocketAddr,
    /// `→` from the client, `←` from the broker.
    pub arrow: &'static str,
}

/// `{size}B`, and its marks ([`push_marks`]).
fn push_size(line: &mut Vec<u8>, f: &CapturedFrame) {
    push_uint(line, f.len as u64, 0);
    line.push(b'B');
    push_marks(line, f);
}

/// What a frame's place in its stream says, as every text view marks it:
/// ` [after gap]` when bytes before it are in no frame, ` [duplicate of
/// #N]` when it is a second response to a request frame N answered.
pub(crate) fn push_marks(line: &mut Vec<u8>, f: &CapturedFrame) {
    if f.after_gap {
        line.extend_from_slice(b" [after gap]");
    }
    if let Some(first) = f.repeats {
        line.extend_from_slice(b" [duplicate of #");
        push_uint(line, first as u64, 0);
        line.push(b']');
    }
}

/// A response's latency and a space, as every text view writes it
/// ([`crate::text::duration_us`]).
pub(crate) fn push_latency(line: &mut Vec<u8>, us: u64) {
    line.extend_from_slice(crate::text::duration_us(us).as_bytes());
    line.push(b' ');
}

/// Error names of a summary, each run of the same name once.
pub(crate) fn error_names(codes: &[i16]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = codes
        .iter()
        .map(|&c| error_name(c).unwrap_or("unknown error code"))
        .collect();
    names.dedup();
    names
}

/// The last client id quoted (clients send the same one every time).
#[derive(Default)]
struct QuotedCache {
    raw: String,
    quoted: String,
}

impl QuotedCache {
    fn get(&mut self, s: &str) -> &str {
        if self.raw != s || self.quoted.is_empty() {
            self.raw.clear();
            self.raw.push_str(s);
            self.quoted = quote(s);
        }
        &self.quoted
    }
}

/// `{:>17.6}` of a timestamp: exact, as `format!` rounds it (the value's exact
/// binary expansion to the nearest sixth decimal), with `format!` itself for the
/// cases it does not cover (ties, negative, huge or tiny values).
pub fn push_timestamp(line: &mut Vec<u8>, x: f64) {
    // People read a date-time; scripts take `"capture": {"time"}` from the JSON.
    if let Some(text) = micros_exact(x).and_then(crate::protocol::meanings::utc_micros) {
        line.extend_from_slice(text.as_bytes());
        return;
    }
    if let Some(micros) = micros_exact(x) {
        let int = micros / 1_000_000;
        let frac = micros % 1_000_000;
        let int_digits = if int == 0 {
            1
        } else {
            int.ilog10() as usize + 1
        };
        for _ in int_digits + 7..17 {
            line.push(b' ');
        }
        push_uint(line, int, 0);
        line.push(b'.');
        push_six_digits(line, frac);
    } else {
        let _ = write!(line, "{x:>17.6}");
    }
}

/// `x` × 10⁶ rounded to the nearest integer, computed exactly; `None` for a tie
/// or a value outside the plain range.
pub(crate) fn micros_exact(x: f64) -> Option<u64> {
    if !x.is_finite() || x.is_sign_negative() || x >= 1e12 {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        return None; // subnormal
    }
    let mantissa = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    // x = mantissa × 2^shift
    let shift = exp - 1075;
    let n = mantissa * 1_000_000;
    if shift >= 0 {
        return u64::try_from(n << shift).ok();
    }
    let down = (-shift) as u32;
    if down >= 120 {
        return None;
    }
    let q = n >> down;
    let r = n & ((1u128 << down) - 1);
    let half = 1u128 << (down - 1);
    let q = match r.cmp(&half) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => return None,
    };
    u64::try_from(q).ok()
}

/// API names by key, looked up once.
struct ApiNames<'c> {
    cat: &'c Catalogue,
    names: Vec<Option<Option<&'c str>>>,
}

impl<'c> ApiNames<'c> {
    fn new(cat: &'c Catalogue) -> Self {
        ApiNames {
            cat,
            names: vec![None; 256],
        }
    }

    fn get(&mut self, key: i16) -> Option<&'c str> {
        let cat = self.cat;
        match usize::try_from(key)
            .ok()
            .and_then(|k| self.names.get_mut(k))
        {
            Some(slot) => *slot.get_or_insert_with(|| cat.api_name(key)),
            None => cat.api_name(key),
        }
    }
}

/// The middle of listing lines, `conn 3 10.0.0.1:50000 → 10.0.0.2:9092 `, made
/// once per connection and direction (a small direct-mapped cache: bounded).
struct Endpoints {
    slots: Vec<Option<EndpointsSlot>>,
    /// The addresses in the text (`conn 3 → ` without).
    addresses: bool,
}

/// Connection, direction, source and destination, and the text for them.
type EndpointsSlot = (
    usize,
    Direction,
    std::net::SocketAddr,
    std::net::SocketAddr,
    String,
);

impl Endpoints {
    const SLOTS: usize = 512;

    fn new() -> Self {
        Endpoints {
            slots: vec![None; Self::SLOTS],
            addresses: true,
        }
    }

    fn get(&mut self, f: &CapturedFrame) -> &str {
        let slot = &mut self.slots
            [(f.conn * 2 + usize::from(f.direction == Direction::Response)) % Self::SLOTS];
        let hit = matches!(slot, Some((c, d, from, to, _)) if *c == f.conn && *d == f.direction && *from == f.from && *to == f.to);
        if !hit {
            let arrow = f.direction.arrow();
            let (client, server) = f.client_and_server();
            let text = match self.addresses {
                true => format!("conn {} {client} {arrow} {server} ", f.conn),
                false => format!("conn {} {arrow} ", f.conn),
            };
            *slot = Some((f.conn, f.direction, f.from, f.to, text));
        }
        slot.as_ref().map_or("", |s| s.4.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_as_format_does() {
        let mut rng: u64 = 0x1234_5678_9abc_def1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // The microseconds are those `format!` rounds to; the listing writes
        // them as a UTC date-time, or as `format!` does past what it can date.
        let check = |x: f64| {
            let mut line = Vec::new();
            push_timestamp(&mut line, x);
            let line = String::from_utf8(line).unwrap();
            match micros_exact(x).and_then(crate::protocol::meanings::utc_micros) {
                Some(date) => {
                    let us = micros_exact(x).unwrap_or_default();
                    assert_eq!(
                        format!("{}.{:06}", us / 1_000_000, us % 1_000_000),
                        format!("{x:.6}"),
                        "{x:e}"
                    );
                    assert_eq!(line, date, "{x:e}");
                }
                None => assert_eq!(line, format!("{x:>17.6}"), "{x:e}"),
            }
        };
        for _ in 0..20_000 {
            let r = next();
            check(f64::from((r >> 32) as u32) + f64::from(r as u32 % 1_000_000) / 1e6);
            check(f64::from((r >> 32) as u32) + f64::from(r as u32 % 1_000_000_000) / 1e9);
            check(f64::from_bits(next() >> 2));
            check((next() % 10_000_000) as f64 / 8.0 / 1e6); // ties
        }
        for x in [
            0.0,
            0.5,
            5e-7,
            1700000000.04,
            999999.9999995,
            1e11,
            123456789012.5,
            1e300,
            5e-324,
        ] {
            check(x);
        }
    }

    #[test]
    fn cached_seconds_write_what_push_timestamp_writes() {
        let cat = crate::schema::Catalogue::builtin();
        let mut w = LineWriter::new(cat);
        for x in [
            1700000000.0,
            1700000000.000001,
            1700000000.5,
            1700000000.999999,
            1700000001.25,
            1699999999.75,
            0.0,
            5e-7,
            1e300,
        ] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            w.push_date_time(&mut a, x);
            push_timestamp(&mut b, x);
            assert_eq!(
                String::from_utf8(a).unwrap(),
                String::from_utf8(b).unwrap(),
                "{x}"
            );
        }
    }

    #[test]
    fn numbers_print_as_format_does() {
        for n in [0u64, 7, 42, 12345, 123456, u64::MAX] {
            let mut line = Vec::new();
            push_uint(&mut line, n, 5);
            assert_eq!(String::from_utf8(line).unwrap(), format!("{n:>5}"));
        }
        for n in [0i64, -1, 2147483647, -2147483648, i64::MIN] {
            let mut line = Vec::new();
            push_int(&mut line, n);
            assert_eq!(String::from_utf8(line).unwrap(), n.to_string());
        }
    }
}
