//! Synthetic Kafka conversations for the analysis tests (`stats`,
//! `inventory`, `report`): frames encoded by kwire, packets with set times
//! over connections told apart by the client port, and captures written to
//! temporary files.

use super::pcap_writer::{pcap_timed, Link, Seg, CLIENT_ISN, SERVER_ISN};
use kwire::decode::Direction;
use kwire::encode::{encode_frame, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;

/// 2023-11-14T22:13:20Z, in microseconds.
pub const T0: u64 = 1_700_000_000_000_000;

/// A frame encoded by kwire; requests carry `client_id`.
pub fn frame(
    direction: Direction,
    api: &str,
    version: i16,
    corr: i32,
    client_id: &str,
    body: Value,
) -> Vec<u8> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction,
        api_key: cat.resolve_api(api).unwrap(),
        version,
        release: None,
    };
    let mut header = Map::new();
    header.insert("CorrelationId".into(), json!(corr));
    if direction == Direction::Request {
        header.insert("ClientId".into(), json!(client_id));
    }
    encode_frame(cat, &fs, &header, body.as_object().unwrap()).unwrap()
}

/// One client's connection on a [`Timeline`]: what it sends and is answered.
pub struct Conn<'t> {
    timeline: &'t mut Timeline,
    port: u16,
    client_id: &'t str,
}

impl Conn<'_> {
    /// A request and its response (the bodies as `req` and `resp` give them).
    pub fn pair(&mut self, corr: i32, api: &str, version: i16, req: Value, resp: Value) {
        let request = frame(Direction::Request, api, version, corr, self.client_id, req);
        self.timeline.send(self.port, true, &request);
        let response = frame(Direction::Response, api, version, corr, "", resp);
        self.timeline.send(self.port, false, &response);
    }
}

/// Packets over connections told apart by the client port, 1 ms apart.
#[derive(Default)]
pub struct Timeline {
    pub packets: Vec<(u64, Seg)>,
    next: HashMap<u16, [u32; 2]>,
    now: u64,
}

impl Timeline {
    pub fn send(&mut self, port: u16, from_client: bool, bytes: &[u8]) {
        self.now += 1000;
        let t = T0 + self.now;
        let next = self.next.entry(port).or_insert_with(|| {
            self.packets.push((
                t,
                Seg {
                    syn: true,
                    client_port: port,
                    ..Seg::data(true, CLIENT_ISN, 0, vec![])
                },
            ));
            self.packets.push((
                t,
                Seg {
                    syn: true,
                    client_port: port,
                    ..Seg::data(false, SERVER_ISN, CLIENT_ISN + 1, vec![])
                },
            ));
            [SERVER_ISN.wrapping_add(1), CLIENT_ISN + 1]
        });
        let i = usize::from(from_client);
        let seg = Seg {
            client_port: port,
            ..Seg::data(from_client, next[i], next[1 - i], bytes.to_vec())
        };
        next[i] = next[i].wrapping_add(bytes.len() as u32);
        self.packets.push((t, seg));
    }

    /// The connection from client port `port`, whose requests carry `client_id`.
    pub fn on<'t>(&'t mut self, port: u16, client_id: &'t str) -> Conn<'t> {
        Conn {
            timeline: self,
            port,
            client_id,
        }
    }

    /// Let `seconds` pass before the next packet (each packet adds 1 ms more).
    pub fn wait(&mut self, seconds: f64) {
        self.now += (seconds * 1e6) as u64;
    }

    /// The time of the next packet, in seconds since the epoch.
    pub fn next_time(&self) -> f64 {
        (T0 + self.now + 1000) as f64 / 1e6
    }

    /// A FIN from one side of an open connection.
    pub fn fin(&mut self, port: u16, from_client: bool) {
        self.flag(port, from_client, true, false);
    }

    /// An RST from one side of an open connection.
    pub fn rst(&mut self, port: u16, from_client: bool) {
        self.flag(port, from_client, false, true);
    }

    fn flag(&mut self, port: u16, from_client: bool, fin: bool, rst: bool) {
        self.now += 1000;
        let t = T0 + self.now;
        let next = self
            .next
            .get_mut(&port)
            .expect("a connection that sent something");
        let i = usize::from(from_client);
        let seg = Seg {
            client_port: port,
            fin,
            rst,
            ..Seg::data(from_client, next[i], next[1 - i], vec![])
        };
        if fin {
            next[i] = next[i].wrapping_add(1);
        }
        self.packets.push((t, seg));
    }

    pub fn pcap(&self) -> Vec<u8> {
        pcap_timed(Link::EthernetV4, &self.packets)
    }
}

/// A capture written to a temporary file, removed when dropped.
pub struct TempCapture(PathBuf);

impl TempCapture {
    pub fn new(name: &str, bytes: &[u8]) -> TempCapture {
        let path = std::env::temp_dir().join(format!("kwire-{name}-{}.pcap", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempCapture(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempCapture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The smallest frame of an API and version (`kwire example`), with its
/// correlation id, and `pad` bytes after its body that its size counts.
pub fn smallest(
    direction: Direction,
    api_key: i16,
    version: i16,
    corr: i32,
    pad: usize,
) -> Vec<u8> {
    let mut f = kwire::encode::example::example_frame(
        Catalogue::builtin(),
        &FrameSpec {
            direction,
            api_key,
            version,
            release: None,
        },
    )
    .unwrap();
    let at = if direction == Direction::Request {
        8
    } else {
        4
    };
    f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
    f.extend(std::iter::repeat_n(0x5a, pad));
    let size = (f.len() - 4) as i32;
    f[..4].copy_from_slice(&size.to_be_bytes());
    f
}
