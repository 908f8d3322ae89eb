//! Session keys in the NSS key log format (`SSLKEYLOGFILE`, Python's
//! `SSLContext.keylog_filename`, Java key-log agents, and the `TLSK`
//! Decryption Secrets Blocks of pcapng files): one secret a line,
//! `LABEL <client random, 64 hex digits> <secret, hex>`, keyed by the client
//! random of the session's ClientHello.

use std::collections::HashMap;

/// The secrets of one TLS session that kwire uses. Each label keeps every
/// distinct value the log gives it, in the log's order (at most
/// [`MAX_VALUES`]): a key log written by several processes, or appended to
/// across runs, can hold more than one line for a client random and label,
/// and the session tries each; the value that opens its records wins.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// TLS 1.2: `CLIENT_RANDOM`, the 48-byte master secret.
    pub master: Vec<Vec<u8>>,
    /// TLS 1.3: `CLIENT_HANDSHAKE_TRAFFIC_SECRET`.
    pub client_handshake: Vec<Vec<u8>>,
    /// TLS 1.3: `SERVER_HANDSHAKE_TRAFFIC_SECRET`.
    pub server_handshake: Vec<Vec<u8>>,
    /// TLS 1.3: `CLIENT_TRAFFIC_SECRET_0`.
    pub client_traffic: Vec<Vec<u8>>,
    /// TLS 1.3: `SERVER_TRAFFIC_SECRET_0`.
    pub server_traffic: Vec<Vec<u8>>,
}

/// Values kept per client random and label; more are counted as ignored.
pub const MAX_VALUES: usize = 4;

/// Secrets never appear in debug output: only how many values each label has.
impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let has = |s: &Vec<Vec<u8>>| s.len();
        f.debug_struct("Secrets")
            .field("master", &has(&self.master))
            .field("client_handshake", &has(&self.client_handshake))
            .field("server_handshake", &has(&self.server_handshake))
            .field("client_traffic", &has(&self.client_traffic))
            .field("server_traffic", &has(&self.server_traffic))
            .finish()
    }
}

/// A key log: secrets by client random.
#[derive(Clone, Default)]
pub struct KeyLog {
    sessions: HashMap<[u8; 32], Secrets>,
    /// Lines that are not comments, not blank and not a well-formed entry.
    malformed: usize,
    /// The first of them (its number, from 1).
    first_malformed: Option<usize>,
    /// Lines giving a label a second (or later) value for a client random,
    /// the first of them, and how many were over [`MAX_VALUES`] and ignored.
    duplicates: usize,
    first_duplicate: Option<usize>,
    ignored: usize,
    lines: usize,
}

impl std::fmt::Debug for KeyLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyLog")
            .field("sessions", &self.sessions.len())
            .field("malformed", &self.malformed)
            .finish()
    }
}

/// Longest secret accepted (SHA-384 secrets are 48 bytes).
const MAX_SECRET: usize = 64;

fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    s.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

impl KeyLog {
    pub fn new() -> KeyLog {
        KeyLog::default()
    }

    /// A key log from its text.
    pub fn parse(text: &[u8]) -> KeyLog {
        let mut k = KeyLog::new();
        k.add(text);
        k
    }

    /// Read a key log file.
    pub fn read_file(path: &std::path::Path) -> Result<KeyLog, String> {
        std::fs::read(path)
            .map(|t| KeyLog::parse(&t))
            .map_err(|e| e.to_string())
    }

    /// Add the entries of a key log's text (a file, or a Decryption Secrets
    /// Block). Labels kwire does not use (early traffic and exporter
    /// secrets) are passed over; lines that are no entry are counted.
    pub fn add(&mut self, text: &[u8]) {
        for line in text.split(|&b| b == b'\n') {
            self.lines += 1;
            let line = line.trim_ascii();
            if line.is_empty() || line.starts_with(b"#") {
                continue;
            }
            if !self.entry(line) {
                self.malformed += 1;
                self.first_malformed.get_or_insert(self.lines);
            }
        }
    }

    fn entry(&mut self, line: &[u8]) -> bool {
        let mut parts = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|p| !p.is_empty());
        let (Some(label), Some(random), Some(secret), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        if label == b"RSA" {
            // An RSA pre-master secret, keyed by its ciphertext's first bytes: not used.
            return true;
        }
        let Some(random) = unhex(random).and_then(|r| <[u8; 32]>::try_from(r).ok()) else {
            return false;
        };
        let Some(secret) = unhex(secret).filter(|s| !s.is_empty() && s.len() <= MAX_SECRET) else {
            return false;
        };
        fn field<'s>(s: &'s mut Secrets, label: &[u8]) -> Option<&'s mut Vec<Vec<u8>>> {
            Some(match label {
                b"CLIENT_RANDOM" => &mut s.master,
                b"CLIENT_HANDSHAKE_TRAFFIC_SECRET" => &mut s.client_handshake,
                b"SERVER_HANDSHAKE_TRAFFIC_SECRET" => &mut s.server_handshake,
                b"CLIENT_TRAFFIC_SECRET_0" => &mut s.client_traffic,
                b"SERVER_TRAFFIC_SECRET_0" => &mut s.server_traffic,
                _ => return None,
            })
        }
        if field(&mut Secrets::default(), label).is_some() {
            let s = self.sessions.entry(random).or_default();
            let Some(values) = field(s, label) else {
                return true;
            };
            if values.contains(&secret) {
                return true;
            }
            if !values.is_empty() {
                self.duplicates += 1;
                self.first_duplicate.get_or_insert(self.lines);
            }
            if values.len() < MAX_VALUES {
                values.push(secret);
            } else {
                self.ignored += 1;
            }
            return true;
        }
        // Labels kwire has no use for: early data, exporters, and the traffic
        // secrets after KeyUpdates (OpenSSL logs them as `..._N`; kwire derives them).
        matches!(
            label,
            b"CLIENT_EARLY_TRAFFIC_SECRET" | b"EARLY_EXPORTER_SECRET" | b"EXPORTER_SECRET"
        ) || label.starts_with(b"CLIENT_TRAFFIC_SECRET_")
            || label.starts_with(b"SERVER_TRAFFIC_SECRET_")
    }

    /// The secrets logged for the session with this client random.
    pub fn get(&self, client_random: &[u8; 32]) -> Option<&Secrets> {
        self.sessions.get(client_random)
    }

    /// Sessions with at least one secret.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Lines that were no entry, and the first of them.
    pub fn malformed(&self) -> (usize, Option<usize>) {
        (self.malformed, self.first_malformed)
    }

    /// Lines that gave a label another value for a session it already had
    /// one for, the first of them, and how many of those were ignored (over
    /// [`MAX_VALUES`]).
    pub fn duplicates(&self) -> (usize, Option<usize>, usize) {
        (self.duplicates, self.first_duplicate, self.ignored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_comments_and_malformed_lines() {
        let r = "ab".repeat(32);
        let text = format!(
            "# a comment\n\nCLIENT_RANDOM {r} {}\r\nCLIENT_TRAFFIC_SECRET_0 {r} {}\nEXPORTER_SECRET {r} 00\nCLIENT_RANDOM zz 00\nCLIENT_RANDOM {r}\nCLIENT_RANDOM {r} 0\n",
            "11".repeat(48),
            "22".repeat(32)
        );
        let k = KeyLog::parse(text.as_bytes());
        let s = k.get(&[0xab; 32]).unwrap();
        assert_eq!(s.master, vec![vec![0x11; 48]]);
        assert_eq!(s.client_traffic, vec![vec![0x22; 32]]);
        assert!(s.server_traffic.is_empty());
        assert_eq!(k.malformed(), (3, Some(6)));
        assert!(
            !format!("{s:?}{k:?}").contains("11"),
            "no secret in debug output"
        );
        assert!(k.get(&[0; 32]).is_none());
    }

    #[test]
    fn every_value_of_a_label_is_kept_and_duplicates_counted() {
        let r = "cd".repeat(32);
        let mut text = String::new();
        for v in ["01", "02", "01", "03", "04", "05", "06"] {
            text.push_str(&format!("CLIENT_TRAFFIC_SECRET_0 {r} {}\n", v.repeat(32)));
        }
        let k = KeyLog::parse(text.as_bytes());
        let s = k.get(&[0xcd; 32]).unwrap();
        let firsts: Vec<u8> = s.client_traffic.iter().map(|v| v[0]).collect();
        assert_eq!(
            firsts,
            vec![1, 2, 3, 4],
            "in the log's order, at most MAX_VALUES"
        );
        // Lines 2, 4, 5, 6, 7 give another value (line 3 repeats one); 6 and 7 are ignored.
        assert_eq!(k.duplicates(), (5, Some(2), 2));
        assert_eq!(k.malformed(), (0, None));
    }
}
