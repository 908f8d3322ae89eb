//! `--tls-keylog FILE`, shared by every command that reads captures, and
//! what is said on stderr of TLS connections.

use super::exit;
use clap::Args;
use kwire::capture::tls::KeyLog;
use kwire::text::escape::sanitize;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug, Clone, Default)]
pub struct TlsArgs {
    /// Decrypt TLS connections with the session keys in this key log (NSS
    /// format: SSLKEYLOGFILE, Python's keylog_filename, Java key-log
    /// agents). Keys in a pcapng's Decryption Secrets Blocks are used without it.
    #[arg(long, value_name = "FILE")]
    pub tls_keylog: Option<PathBuf>,
}

impl TlsArgs {
    /// How a capture is read: the broker's port when given, and the key log
    /// read; or the exit status after saying why it could not be.
    pub fn capture_options(
        &self,
        port: Option<u16>,
    ) -> Result<kwire::capture::CaptureOptions, i32> {
        Ok(kwire::capture::CaptureOptions {
            port,
            tls_keylog: self.load()?,
            ..Default::default()
        })
    }

    /// The key log, read; or the exit status after saying why it could not be.
    pub fn load(&self) -> Result<Option<Arc<KeyLog>>, i32> {
        let Some(path) = &self.tls_keylog else {
            return Ok(None);
        };
        let shown = sanitize(&path.display().to_string());
        let log = match KeyLog::read_file(path) {
            Ok(k) => k,
            Err(e) => {
                kwire::stderr_line!("kwire: --tls-keylog {shown}: {}", sanitize(&e));
                return Err(exit::FAILURE);
            }
        };
        if let (n, Some(first)) = log.malformed() {
            let lines = if n == 1 { "line is" } else { "lines are" };
            kwire::stderr_line!("kwire: --tls-keylog {shown}: {n} {lines} not key log entries (the first: line {first}); they are passed over");
        }
        if let (n, Some(first), ignored) = log.duplicates() {
            let lines = if n == 1 { "line gives" } else { "lines give" };
            let over = if ignored > 0 {
                format!(
                    " ({ignored} over the {} values kept per secret are ignored)",
                    kwire::capture::tls::keylog::MAX_VALUES
                )
            } else {
                String::new()
            };
            kwire::stderr_line!("kwire: --tls-keylog {shown}: {n} {lines} a secret another value for the same session (the first: line {first}); each value is tried and the one that opens the records is used{over}");
        }
        if log.is_empty() {
            kwire::stderr_line!("kwire: --tls-keylog {shown}: no TLS secrets in it");
        }
        Ok(Some(Arc::new(log)))
    }
}

/// Say on stderr what the TLS connections of a capture were not decrypted
/// or decoded; whether anything was said.
pub fn report(tally: &kwire::capture::tls::TlsTally) -> bool {
    match tally.summary() {
        Some(text) => {
            kwire::stderr_line!("kwire: {text}");
            true
        }
        None => false,
    }
}

/// The line `stats` and `inventory` print when a capture has TLS connections.
pub fn text_line(tally: &kwire::capture::tls::TlsTally) -> Option<String> {
    if tally.connections == 0 {
        return None;
    }
    let mut line = format!(
        "tls connections {}: {} decrypted, {} not decrypted",
        tally.connections, tally.decrypted, tally.not_decrypted
    );
    if tally.not_decrypted > 0 {
        line.push_str(" (their traffic is not counted: give --tls-keylog FILE)");
    }
    if tally.stopped > 0 {
        let dirs = if tally.stopped == 1 {
            "direction"
        } else {
            "directions"
        };
        line.push_str(&format!(", {} {dirs} stopped part-way", tally.stopped));
    }
    if tally.skipped_records > 0 {
        let records = if tally.skipped_records == 1 {
            "record"
        } else {
            "records"
        };
        line.push_str(&format!(
            ", {} damaged {records} passed over",
            tally.skipped_records
        ));
    }
    Some(line)
}

/// `"tls_connections"` of `stats` and `inventory` JSON, when the capture has TLS connections.
pub fn json(tally: &kwire::capture::tls::TlsTally) -> Option<serde_json::Value> {
    (tally.connections > 0).then(|| serde_json::json!({"total": tally.connections, "decrypted": tally.decrypted, "not_decrypted": tally.not_decrypted, "stopped_directions": tally.stopped, "skipped_records": tally.skipped_records}))
}
