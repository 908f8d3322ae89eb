//! TLS for the proxy, by rustls: towards clients (`--listen-tls CERT,KEY`)
//! and towards the broker (`--broker-tls [CA]`): the configurations; each
//! leg on the proxy's event loop drives its own rustls session
//! (`proxy::leg`), so the forwarding, the rules and the recorder see
//! plaintext. Session keys can be written in the NSS key log format
//! (`--tls-keylog-out FILE`), which `kwire capture --tls-keylog` and Wireshark read.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Appends each session's secrets to a file: `LABEL CLIENT_RANDOM SECRET`, hex.
#[derive(Debug)]
pub struct KeyLogFile(Mutex<std::fs::File>);

impl KeyLogFile {
    pub fn create(path: &str) -> Result<Arc<Self>, String> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{path}: {e}"))?;
        Ok(Arc::new(KeyLogFile(Mutex::new(f))))
    }
}

impl rustls::KeyLog for KeyLogFile {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        if let Ok(mut f) = self.0.lock() {
            let _ = writeln!(
                f,
                "{label} {} {}",
                hex::encode(client_random),
                hex::encode(secret)
            );
        }
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration from PEM files: the certificate chain and its private key.
pub(crate) fn server_config(
    cert: &str,
    key: &str,
    keylog: Option<Arc<KeyLogFile>>,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("{cert}: {e}"))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{cert}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{cert}: no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{key}: {e}"))?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("{cert}: {e}"))?;
    if let Some(k) = keylog {
        cfg.key_log = k;
    }
    Ok(Arc::new(cfg))
}

/// A client configuration trusting the certificates of `ca` (a PEM file).
pub fn client_config(
    ca: &str,
    keylog: Option<Arc<KeyLogFile>>,
) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).map_err(|e| format!("{ca}: {e}"))? {
        roots
            .add(c.map_err(|e| format!("{ca}: {e}"))?)
            .map_err(|e| format!("{ca}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("{ca}: no certificate in it"));
    }
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    if let Some(k) = keylog {
        cfg.key_log = k;
    }
    Ok(Arc::new(cfg))
}

/// The server name to check the broker's certificate against: HOST of HOST:PORT.
pub(crate) fn server_name(broker: &str) -> Result<ServerName<'static>, String> {
    let host = broker
        .rsplit_once(':')
        .map_or(broker, |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']');
    ServerName::try_from(host.to_string()).map_err(|e| format!("{broker}: {e}"))
}
