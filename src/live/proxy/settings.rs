//! The proxy's settings as a user writes them (`kwire proxy`'s options):
//! addresses as text, `--map` pairs, TLS files, fault rules. [`Settings::config`]
//! checks them and makes the [`Config`] a [`super::Proxy`] runs by, so that
//! the command line only parses its arguments.

use super::Config;
use crate::live::faults::{self, Faults};
use crate::schema::Catalogue;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

/// What `kwire proxy` is given, as text.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Where clients connect, HOST:PORT.
    pub listen: String,
    /// The bootstrap broker, HOST:PORT.
    pub broker: String,
    /// A broker's own listener: BROKER_HOST:PORT=LOCAL_HOST:PORT.
    pub maps: Vec<String>,
    /// The host name rewritten responses give clients (default: `listen`'s address).
    pub advertise_host: Option<String>,
    /// TLS towards clients: `CERT,KEY`, PEM files.
    pub listen_tls: Option<String>,
    /// TLS towards the broker, trusting this PEM file's certificates.
    pub broker_tls: Option<String>,
    /// A file to append the proxy's own TLS session keys to (NSS key log format).
    pub tls_keylog_out: Option<String>,
    /// Seconds to wait for a broker to accept a connection.
    pub connect_timeout: f64,
    /// Largest response held whole to rewrite its endpoints.
    pub rewrite_max: u64,
    /// Client connections served at once.
    pub max_connections: u32,
    /// Fault rules (`faults::parse_rule`), numbered from 1 in this order.
    pub inject: Vec<String>,
    /// Seed of the rules' `rate=P` draws.
    pub seed: u64,
}

/// Why settings make no [`Config`].
#[derive(Debug, PartialEq, Eq)]
pub enum SettingsError {
    /// A setting written wrong: an address, a `--map`, a TLS pair, a rule.
    Usage(String),
    /// A file named in a setting that cannot be used (a certificate, a key log).
    Unusable(String),
}

/// Seconds to wait for a broker when the setting is not a duration.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

impl Settings {
    /// The proxy's configuration: every address resolved, every rule parsed
    /// (against `cat`), the TLS files read.
    pub fn config(&self, cat: &Catalogue, release: Option<&str>) -> Result<Config, SettingsError> {
        let listen = socket_addr(&self.listen, "--listen")?;
        let mut maps = Vec::with_capacity(self.maps.len());
        for m in &self.maps {
            let Some((broker, local)) = m.split_once('=') else {
                return Err(SettingsError::Usage(format!(
                    "--map {m}: expected BROKER_HOST:PORT=LOCAL_HOST:PORT"
                )));
            };
            // Each broker has one local address: the bootstrap broker's is --listen.
            if broker == self.broker {
                return Err(SettingsError::Usage(format!(
                    "--map {m}: {broker} is --broker, whose local address is --listen {}",
                    self.listen
                )));
            }
            if maps.iter().any(|(b, _): &(String, _)| b == broker) {
                return Err(SettingsError::Usage(format!(
                    "--map {m}: {broker} is mapped twice"
                )));
            }
            maps.push((broker.to_string(), socket_addr(local, "--map")?));
        }
        let mut rules = Vec::with_capacity(self.inject.len());
        for (i, text) in self.inject.iter().enumerate() {
            rules.push(
                faults::parse_rule(cat, text, i + 1, self.seed).map_err(SettingsError::Usage)?,
            );
        }
        let (client_tls, broker_tls) = self.tls()?;
        Ok(Config {
            listen,
            advertise_host: self
                .advertise_host
                .clone()
                .unwrap_or_else(|| listen.ip().to_string()),
            broker: self.broker.clone(),
            maps,
            connect_timeout: Duration::try_from_secs_f64(self.connect_timeout)
                .unwrap_or(DEFAULT_CONNECT_TIMEOUT),
            rewrite_max: usize::try_from(self.rewrite_max).unwrap_or(usize::MAX),
            max_connections: self.max_connections as usize,
            release: release.map(str::to_string),
            client_tls,
            broker_tls,
            faults: (!rules.is_empty()).then(|| Arc::new(Faults { rules })),
        })
    }

    /// The TLS configurations towards clients and towards the broker, both
    /// writing their session keys to the key log when one is named.
    fn tls(&self) -> Result<TlsConfigs, SettingsError> {
        let unusable = |what: &str, e: String| SettingsError::Unusable(format!("{what}: {e}"));
        let client_pair = match &self.listen_tls {
            Some(pair) => Some(pair.split_once(',').ok_or_else(|| {
                SettingsError::Usage(format!("--listen-tls {pair}: expected CERT,KEY"))
            })?),
            None => None,
        };
        let keylog = match &self.tls_keylog_out {
            Some(path) => Some(
                crate::live::tls::KeyLogFile::create(path)
                    .map_err(|e| unusable("--tls-keylog-out", e))?,
            ),
            None => None,
        };
        let client = match client_pair {
            Some((cert, key)) => Some(
                crate::live::tls::server_config(cert, key, keylog.clone())
                    .map_err(|e| unusable("--listen-tls", e))?,
            ),
            None => None,
        };
        let broker = match &self.broker_tls {
            Some(ca) => Some(
                crate::live::tls::client_config(ca, keylog)
                    .map_err(|e| unusable("--broker-tls", e))?,
            ),
            None => None,
        };
        Ok((client, broker))
    }
}

type TlsConfigs = (
    Option<Arc<rustls::ServerConfig>>,
    Option<Arc<rustls::ClientConfig>>,
);

fn socket_addr(text: &str, what: &str) -> Result<SocketAddr, SettingsError> {
    let usage = |e: String| SettingsError::Usage(format!("{what} {text}: {e}"));
    text.to_socket_addrs()
        .map_err(|e| usage(e.to_string()))?
        .next()
        .ok_or_else(|| usage("no address".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            listen: "127.0.0.1:19092".into(),
            broker: "kafka-1:9092".into(),
            maps: vec!["kafka-2:9092=127.0.0.1:19200".into()],
            advertise_host: None,
            listen_tls: None,
            broker_tls: None,
            tls_keylog_out: None,
            connect_timeout: 2.5,
            rewrite_max: 1 << 20,
            max_connections: 8,
            inject: vec!["Produce:error=NOT_LEADER_OR_FOLLOWER:every=3".into()],
            seed: 7,
        }
    }

    #[test]
    fn settings_make_the_config_the_proxy_runs_by() {
        let cat = Catalogue::builtin();
        let cfg = settings().config(cat, Some("4.0")).unwrap();
        assert_eq!(cfg.listen, "127.0.0.1:19092".parse().unwrap());
        assert_eq!(
            cfg.advertise_host, "127.0.0.1",
            "the listen address by default"
        );
        assert_eq!(cfg.broker, "kafka-1:9092");
        assert_eq!(
            cfg.maps,
            vec![(
                "kafka-2:9092".to_string(),
                "127.0.0.1:19200".parse().unwrap()
            )]
        );
        assert_eq!(cfg.connect_timeout, Duration::from_millis(2500));
        assert_eq!((cfg.rewrite_max, cfg.max_connections), (1 << 20, 8));
        assert_eq!(cfg.release.as_deref(), Some("4.0"));
        assert!(cfg.client_tls.is_none() && cfg.broker_tls.is_none());
        let rules = &cfg.faults.as_ref().expect("a rule").rules;
        assert_eq!((rules.len(), rules[0].number), (1, 1));
        assert_eq!(
            rules[0].text,
            "Produce:error=NOT_LEADER_OR_FOLLOWER:every=3"
        );
        let cfg = Settings {
            advertise_host: Some("proxy.local".into()),
            inject: vec![],
            connect_timeout: f64::NAN,
            ..settings()
        }
        .config(cat, None)
        .unwrap();
        assert_eq!(cfg.advertise_host, "proxy.local");
        assert!(cfg.faults.is_none(), "no rules, no faults");
        assert_eq!(cfg.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
    }

    #[test]
    fn settings_written_wrong_are_usage_errors_and_bad_files_unusable() {
        let cat = Catalogue::builtin();
        let wrong = |s: Settings| s.config(cat, None).map(|_| ()).unwrap_err();
        assert_eq!(
            wrong(Settings {
                maps: vec!["kafka-2:9092".into()],
                ..settings()
            }),
            SettingsError::Usage(
                "--map kafka-2:9092: expected BROKER_HOST:PORT=LOCAL_HOST:PORT".into()
            )
        );
        let bootstrap = settings();
        assert_eq!(
            wrong(Settings {
                maps: vec![format!("{}=127.0.0.1:19860", bootstrap.broker)],
                ..settings()
            }),
            SettingsError::Usage(format!(
                "--map {}=127.0.0.1:19860: {} is --broker, whose local address is --listen {}",
                bootstrap.broker, bootstrap.broker, bootstrap.listen
            ))
        );
        assert!(matches!(
            wrong(Settings {
                maps: vec!["kafka-2:9092=127.0.0.1:19200".into(), "kafka-2:9092=127.0.0.1:19201".into()],
                ..settings()
            }),
            SettingsError::Usage(e) if e.ends_with("kafka-2:9092 is mapped twice")
        ));
        assert!(matches!(
            wrong(Settings { listen: "no-port".into(), ..settings() }),
            SettingsError::Usage(e) if e.starts_with("--listen no-port: ")
        ));
        assert!(matches!(
            wrong(Settings {
                inject: vec!["Produce:explode".into()],
                ..settings()
            }),
            SettingsError::Usage(_)
        ));
        assert_eq!(
            wrong(Settings {
                listen_tls: Some("cert.pem".into()),
                ..settings()
            }),
            SettingsError::Usage("--listen-tls cert.pem: expected CERT,KEY".into())
        );
        assert!(matches!(
            wrong(Settings {
                broker_tls: Some("/nonexistent/ca.pem".into()),
                ..settings()
            }),
            SettingsError::Unusable(e) if e.starts_with("--broker-tls: /nonexistent/ca.pem")
        ));
    }
}
