//! TLS notes of a capture (`capture::tls::TlsNote`) as text and JSON. Names
//! from the handshake (server name, ALPN) come from the capture: they are
//! quoted with escapes, and JSON is written with the terminal-safe escapes.

use crate::capture::tls::{
    detect::version_name, suite_label, TlsEvent, TlsNote, TlsProblem, TlsSession,
};
use crate::decode::Direction;
use crate::text::escape::quote;
use serde_json::{json, Value as Json};

/// What a note says, after its time and connection: `decrypted 80B/95B
/// with keys from …; TLS 1.3 TLS_AES_128_GCM_SHA256 sni="b" records 9/7 …`.
pub fn describe(note: &TlsNote) -> String {
    match &note.event {
        TlsEvent::Stopped {
            direction,
            offset,
            problem,
        } => {
            format!(
                "TLS {} stream offset {offset}: {}",
                side(*direction),
                problem.describe()
            )
        }
        TlsEvent::Skipped {
            direction,
            offset,
            problem,
            lost,
        } => format!(
            "TLS {} stream offset {offset}: {} (up to {lost} bytes of plaintext lost)",
            side(*direction),
            problem.describe()
        ),
        TlsEvent::Session(s) => session_text(s),
    }
}

fn side(d: Direction) -> &'static str {
    match d {
        Direction::Request => "client",
        Direction::Response => "server",
    }
}

/// Whether the session was decrypted comes first (a line cut to the
/// terminal's width keeps it), then what its handshake said.
fn session_text(s: &TlsSession) -> String {
    let mut t = String::new();
    match s.decryption {
        Ok(source) => {
            t.push_str(&format!(
                "decrypted {}B/{}B with keys from {}",
                s.decrypted_bytes[0],
                s.decrypted_bytes[1],
                source.describe(),
            ));
            if s.not_kafka {
                t.push_str(", not Kafka");
            }
            for ((d, p), after) in ["client", "server"]
                .iter()
                .zip(s.stopped)
                .zip(s.bytes_after_stop)
            {
                if let Some(p) = p {
                    t.push_str(&format!(
                        "; the {d}'s stopped: {} ({after}B from there not decrypted)",
                        p.code()
                    ));
                }
            }
        }
        Err(why) => {
            t.push_str("not decrypted: ");
            t.push_str(&why.describe());
        }
    }
    t.push_str("; ");
    match s.version {
        Some(v) => t.push_str(&version_name(v)),
        None => t.push_str("TLS (version not seen)"),
    }
    if let Some(c) = s.cipher_suite {
        t.push(' ');
        t.push_str(&suite_label(c));
    }
    if let Some(n) = &s.sni {
        t.push_str(" sni=");
        t.push_str(&quote(n));
    }
    if !s.alpn.is_empty() {
        t.push_str(" alpn=");
        t.push_str(
            &s.alpn
                .iter()
                .map(|a| quote(a))
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    t.push_str(&format!(
        " records {}/{} app_data {}B/{}B",
        s.records[0], s.records[1], s.app_data_bytes[0], s.app_data_bytes[1]
    ));
    t
}

fn problem_json(p: TlsProblem) -> Json {
    json!({"reason": p.code(), "note": p.describe()})
}

/// A note as a JSON object of its own kind: `"kind":"tls"` (a connection's
/// summary), `"kind":"tls_stopped"` (where decryption of a direction
/// stopped) or `"kind":"tls_skipped"` (damaged records passed over).
pub fn json(note: &TlsNote) -> Json {
    let base = |kind: &str| json!({"kind": kind, "conn": note.conn, "client": note.client.to_string(), "server": note.server.to_string(), "time": crate::render::json::capture_time(note.timestamp)});
    match &note.event {
        TlsEvent::Stopped {
            direction,
            offset,
            problem,
        } => {
            let mut o = base("tls_stopped");
            o["direction"] = direction.as_str().into();
            o["offset"] = (*offset).into();
            o["reason"] = problem.code().into();
            o["note"] = problem.describe().into();
            o
        }
        TlsEvent::Skipped {
            direction,
            offset,
            problem,
            lost,
        } => {
            let mut o = base("tls_skipped");
            o["direction"] = direction.as_str().into();
            o["offset"] = (*offset).into();
            o["reason"] = problem.code().into();
            o["note"] = problem.describe().into();
            o["plaintext_lost"] = (*lost).into();
            if let TlsProblem::NotOpened { record, records } = problem {
                o["record"] = (*record).into();
                o["records"] = (*records).into();
            }
            o
        }
        TlsEvent::Session(s) => {
            let mut o = base("tls");
            let pair = |v: [u64; 2]| json!({"request": v[0], "response": v[1]});
            o["version"] = s.version.map(version_name).into();
            o["cipher_suite"] = s.cipher_suite.map(suite_label).into();
            o["cipher_suite_id"] = s.cipher_suite.into();
            o["client_random"] = s.client_random.map(hex::encode).into();
            o["sni"] = s.sni.clone().into();
            o["alpn"] = s.alpn.clone().into();
            o["records"] = pair(s.records);
            o["application_data_bytes"] = pair(s.app_data_bytes);
            o["decrypted_bytes"] = pair(s.decrypted_bytes);
            o["bytes_after_stop"] = pair(s.bytes_after_stop);
            o["decrypted"] = s.decrypted().into();
            o["key_source"] = s.decryption.ok().map(|k| k.code()).into();
            o["not_decrypted"] = match s.decryption {
                Ok(_) => Json::Null,
                Err(why) => json!({"reason": why.code(), "note": why.describe()}),
            };
            o["stopped"] = json!({"request": s.stopped[0].map(problem_json), "response": s.stopped[1].map(problem_json)});
            o["not_kafka"] = s.not_kafka.into();
            o
        }
    }
}
