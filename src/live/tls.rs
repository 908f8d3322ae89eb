//! TLS for the proxy, by rustls: towards clients (`--listen-tls CERT,KEY`)
//! and towards the broker (`--broker-tls [CA]`). On the event loop a leg
//! drives its rustls session itself (`proxy::leg`); a connection under
//! `--inject` rules, on threads, is bridged here to a plaintext loopback
//! pair, so its pumps and rules see plaintext. Either way the recorded
//! traffic is the plaintext. Session keys can be written in the NSS key log format
//! (`--tls-keylog-out FILE`), which `kwire capture --tls-keylog` and Wireshark read.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
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
pub fn server_config(
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
pub fn server_name(broker: &str) -> Result<ServerName<'static>, String> {
    let host = broker
        .rsplit_once(':')
        .map_or(broker, |(h, _)| h)
        .trim_start_matches('[')
        .trim_end_matches(']');
    ServerName::try_from(host.to_string()).map_err(|e| format!("{broker}: {e}"))
}

/// A connected loopback pair: what one end writes, the other reads.
fn loopback_pair() -> std::io::Result<(TcpStream, TcpStream)> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let a = TcpStream::connect(l.local_addr()?)?;
    let (b, _) = l.accept()?;
    a.set_nodelay(true)?;
    b.set_nodelay(true)?;
    Ok((a, b))
}

/// Bridge TLS on `outer` to plaintext: returns the plaintext end; two threads
/// carry bytes both ways until either side closes.
pub fn bridge(conn: rustls::Connection, outer: TcpStream) -> std::io::Result<TcpStream> {
    let (inner, plain) = loopback_pair()?;
    let mut conn = conn;
    // A client speaks first: its hello goes out before any byte is asked for.
    let mut first = &outer;
    while conn.wants_write() {
        conn.write_tls(&mut first)?;
    }
    let conn = Arc::new(Mutex::new(conn));
    let (outer_read, outer_write) = (outer.try_clone()?, outer);
    let (inner_read, inner_write) = (inner.try_clone()?, inner);
    {
        let (conn, mut outer_write) = (Arc::clone(&conn), outer_write.try_clone()?);
        std::thread::Builder::new()
            .name("kwire-tls-in".into())
            .spawn(move || {
                decrypting(&conn, outer_read, inner_write, &mut outer_write);
            })?;
    }
    std::thread::Builder::new()
        .name("kwire-tls-out".into())
        .spawn(move || {
            encrypting(&conn, inner_read, outer_write);
        })?;
    Ok(plain)
}

/// TLS bytes from `outer` → plaintext to `inner` (and whatever TLS the
/// connection answers with, such as handshake messages, back to `outer`).
fn decrypting(
    conn: &Mutex<rustls::Connection>,
    mut outer: TcpStream,
    mut inner: TcpStream,
    outer_write: &mut TcpStream,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut plain = vec![0u8; 64 * 1024];
    'read: loop {
        let n = match outer.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut data = &buf[..n];
        let mut out = Vec::new();
        {
            let Ok(mut c) = conn.lock() else { break };
            while !data.is_empty() {
                match c.read_tls(&mut data) {
                    Ok(_) => {}
                    Err(_) => break 'read,
                }
                if let Err(e) = c.process_new_packets() {
                    crate::stderr_line!("kwire: proxy: TLS: {e}");
                    let _ = c.write_tls(outer_write);
                    break 'read;
                }
                loop {
                    match c.reader().read(&mut plain) {
                        Ok(0) => break,
                        Ok(k) => out.extend_from_slice(&plain[..k]),
                        Err(_) => break,
                    }
                }
            }
            while c.wants_write() {
                if c.write_tls(outer_write).is_err() {
                    break 'read;
                }
            }
        }
        if !out.is_empty() && inner.write_all(&out).is_err() {
            break;
        }
    }
    let _ = inner.shutdown(Shutdown::Write);
}

/// Plaintext from `inner` → TLS records to `outer`.
fn encrypting(conn: &Mutex<rustls::Connection>, mut inner: TcpStream, mut outer: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match inner.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let Ok(mut c) = conn.lock() else { break };
        if c.writer().write_all(&buf[..n]).is_err() {
            break;
        }
        while c.wants_write() {
            if c.write_tls(&mut outer).is_err() {
                return;
            }
        }
    }
    if let Ok(mut c) = conn.lock() {
        c.send_close_notify();
        while c.wants_write() {
            if c.write_tls(&mut outer).is_err() {
                break;
            }
        }
    }
    let _ = outer.shutdown(Shutdown::Write);
}

/// Start TLS as the client of `broker` on `tcp` (the handshake runs as bytes flow).
pub fn client_side(
    cfg: &Arc<rustls::ClientConfig>,
    broker: &str,
    tcp: TcpStream,
) -> Result<TcpStream, String> {
    let name = server_name(broker)?;
    let conn = rustls::ClientConnection::new(Arc::clone(cfg), name).map_err(|e| e.to_string())?;
    bridge(rustls::Connection::Client(conn), tcp).map_err(|e| e.to_string())
}

/// Accept TLS from a client on `tcp`.
pub fn server_side(cfg: &Arc<rustls::ServerConfig>, tcp: TcpStream) -> Result<TcpStream, String> {
    let conn = rustls::ServerConnection::new(Arc::clone(cfg)).map_err(|e| e.to_string())?;
    bridge(rustls::Connection::Server(conn), tcp).map_err(|e| e.to_string())
}
