//! Live traffic as a capture: TCP connections synthesized packet by packet
//! (handshake, data segments with running sequence numbers, FIN) as raw IP,
//! written as pcapng. The proxy and interface capture hand what they see to
//! the same capture pipeline that reads files, so every `capture` format
//! works on live traffic, and `--write-pcap` files read back to the same frames.

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};

/// The link type of synthesized packets: raw IP (IPv4 or IPv6 by the version nibble).
pub use crate::capture::link::LINKTYPE_RAW;
/// Payload bytes per synthesized segment: IPv4's total length is 16 bits.
const MAX_SEGMENT: usize = 65_000;

/// Writes pcapng: one section, one interface of a given link type (raw IP
/// for synthesized packets, Ethernet for most live interfaces), enhanced
/// packet blocks.
pub struct PcapngWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapngWriter<W> {
    /// Start a file: the section header and the interface description with
    /// `link_type` (a `LINKTYPE_*` of [`crate::capture::link`]; pcapng holds 16 bits).
    pub fn new(mut out: W, link_type: u32) -> io::Result<Self> {
        let link_type = u16::try_from(link_type).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("link type {link_type} does not fit pcapng's 16 bits"),
            )
        })?;
        // Section Header Block: magic, version 1.0, section length unknown (-1).
        let mut shb = Vec::with_capacity(28);
        shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        write_block(&mut out, 0x0A0D_0D0A, &shb)?;
        // Interface Description Block: link type, snap length 0 (no limit); microsecond times by default.
        let mut idb = Vec::with_capacity(8);
        idb.extend_from_slice(&link_type.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&0u32.to_le_bytes());
        write_block(&mut out, 1, &idb)?;
        Ok(PcapngWriter { out })
    }

    /// One packet at `micros` since the epoch.
    pub fn packet(&mut self, micros: u64, data: &[u8]) -> io::Result<()> {
        self.packet_cut(micros, data, data.len())
    }

    /// One packet of which only `data` was kept, of `original` bytes on the
    /// wire (a live packet longer than the capture's buffer).
    pub(crate) fn packet_cut(
        &mut self,
        micros: u64,
        data: &[u8],
        original: usize,
    ) -> io::Result<()> {
        self.packet_with(micros, data, original, None)
    }

    /// One packet with a comment (`opt_comment`), which kwire's capture
    /// views and Wireshark show beside it.
    pub(crate) fn packet_commented(
        &mut self,
        micros: u64,
        data: &[u8],
        comment: &str,
    ) -> io::Result<()> {
        self.packet_with(micros, data, data.len(), Some(comment))
    }

    fn packet_with(
        &mut self,
        micros: u64,
        data: &[u8],
        original: usize,
        comment: Option<&str>,
    ) -> io::Result<()> {
        let mut epb = Vec::with_capacity(20 + data.len() + 3);
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((micros >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(micros as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(
            &(u32::try_from(original.max(data.len())).unwrap_or(u32::MAX)).to_le_bytes(),
        );
        epb.extend_from_slice(data);
        epb.resize(epb.len().next_multiple_of(4), 0);
        if let Some(text) = comment {
            // An option's length is 16 bits: a longer comment is cut at a character.
            let mut end = text.len().min(0xfff0);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            epb.extend_from_slice(&1u16.to_le_bytes());
            epb.extend_from_slice(&(end as u16).to_le_bytes());
            epb.extend_from_slice(&text.as_bytes()[..end]);
            epb.resize(epb.len().next_multiple_of(4), 0);
            epb.extend_from_slice(&[0; 4]); // opt_endofopt
        }
        write_block(&mut self.out, 6, &epb)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

fn write_block(out: &mut impl Write, kind: u32, body: &[u8]) -> io::Result<()> {
    let total = (12 + body.len()) as u32;
    out.write_all(&kind.to_le_bytes())?;
    out.write_all(&total.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&total.to_le_bytes())
}

/// One synthesized TCP connection: its endpoints and next sequence numbers.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Next sequence number of [client → server, server → client].
    next: [u32; 2],
}

const CLIENT_ISN: u32 = 1_000;
const SERVER_ISN: u32 = 5_000;

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const PSH: u8 = 0x08;
const FIN: u8 = 0x01;

impl TcpFlow {
    pub fn new(client: SocketAddr, server: SocketAddr) -> Self {
        TcpFlow {
            client,
            server,
            next: [CLIENT_ISN + 1, SERVER_ISN + 1],
        }
    }

    /// The three packets of the handshake.
    pub fn open(&self) -> Vec<Vec<u8>> {
        vec![
            self.segment(true, CLIENT_ISN, 0, SYN, &[]),
            self.segment(false, SERVER_ISN, CLIENT_ISN + 1, SYN | ACK, &[]),
            self.segment(true, CLIENT_ISN + 1, SERVER_ISN + 1, ACK, &[]),
        ]
    }

    /// `data` from one side as segments of at most 65,000 bytes.
    pub fn data(&mut self, from_client: bool, data: &[u8]) -> Vec<Vec<u8>> {
        let i = usize::from(!from_client);
        let mut out = Vec::with_capacity(data.len() / MAX_SEGMENT + 1);
        for chunk in data.chunks(MAX_SEGMENT) {
            let (seq, ack) = (self.next[i], self.next[1 - i]);
            out.push(self.segment(from_client, seq, ack, PSH | ACK, chunk));
            self.next[i] = seq.wrapping_add(chunk.len() as u32);
        }
        out
    }

    /// Both sides' FIN, the client's first or the server's first.
    pub fn close(&mut self, client_first: bool) -> Vec<Vec<u8>> {
        let [c, s] = self.next;
        self.next = [c.wrapping_add(1), s.wrapping_add(1)];
        if client_first {
            vec![
                self.segment(true, c, s, FIN | ACK, &[]),
                self.segment(false, s, c.wrapping_add(1), FIN | ACK, &[]),
            ]
        } else {
            vec![
                self.segment(false, s, c, FIN | ACK, &[]),
                self.segment(true, c, s.wrapping_add(1), FIN | ACK, &[]),
            ]
        }
    }

    fn segment(&self, from_client: bool, seq: u32, ack: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
        let (src, dst) = if from_client {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        let mut tcp = Vec::with_capacity(20 + payload.len());
        tcp.extend_from_slice(&src.port().to_be_bytes());
        tcp.extend_from_slice(&dst.port().to_be_bytes());
        tcp.extend_from_slice(&seq.to_be_bytes());
        tcp.extend_from_slice(&ack.to_be_bytes());
        tcp.push(5 << 4);
        tcp.push(flags);
        tcp.extend_from_slice(&65535u16.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0]); // checksum (not checked by readers of synthesized traffic), urgent pointer
        tcp.extend_from_slice(payload);
        ip_packet(src.ip(), dst.ip(), &tcp)
    }
}

/// `tcp` in an IPv4 or IPv6 header (mixed families are written as IPv6, IPv4 mapped).
fn ip_packet(src: IpAddr, dst: IpAddr, tcp: &[u8]) -> Vec<u8> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = (20 + tcp.len()) as u16;
            let mut p = Vec::with_capacity(total as usize);
            p.extend_from_slice(&[0x45, 0]);
            p.extend_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
            let sum = checksum(&p[..20]);
            p[10..12].copy_from_slice(&sum.to_be_bytes());
            p.extend_from_slice(tcp);
            p
        }
        (s, d) => {
            let v6 = |a: IpAddr| match a {
                IpAddr::V4(v) => v.to_ipv6_mapped(),
                IpAddr::V6(v) => v,
            };
            let mut p = Vec::with_capacity(40 + tcp.len());
            p.extend_from_slice(&[0x60, 0, 0, 0]);
            p.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
            p.extend_from_slice(&[6, 64]);
            p.extend_from_slice(&v6(s).octets());
            p.extend_from_slice(&v6(d).octets());
            p.extend_from_slice(tcp);
            p
        }
    }
}

fn checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet comment reaches every frame whose first byte the packet
    /// carried, and no other: two requests in one commented packet, then one
    /// in a plain packet.
    #[test]
    fn a_comment_goes_with_the_frames_that_start_in_its_packet() {
        let cat = crate::schema::Catalogue::builtin();
        let request = |corr: i32| {
            let mut header = serde_json::Map::new();
            header.insert("CorrelationId".into(), corr.into());
            header.insert("ClientId".into(), "c".into());
            let fs = crate::encode::FrameSpec {
                direction: crate::decode::Direction::Request,
                api_key: 18,
                version: 3,
                release: None,
            };
            let body = serde_json::json!({"ClientSoftwareName": "a", "ClientSoftwareVersion": "1"});
            crate::encode::encode_frame(cat, &fs, &header, body.as_object().unwrap()).unwrap()
        };
        let mut flow = TcpFlow::new(
            "127.0.0.1:40000".parse().unwrap(),
            "127.0.0.1:9092".parse().unwrap(),
        );
        let mut w = PcapngWriter::new(Vec::new(), crate::capture::link::LINKTYPE_RAW).unwrap();
        for p in flow.open() {
            w.packet(1, &p).unwrap();
        }
        let two = [request(1), request(2)].concat();
        for (i, p) in flow.data(true, &two).iter().enumerate() {
            assert_eq!(i, 0, "one packet");
            w.packet_commented(2, p, "both").unwrap();
        }
        for p in flow.data(true, &request(3)) {
            w.packet(3, &p).unwrap();
        }
        let bytes = w.get_mut().clone();
        let mut comments = Vec::new();
        let opts = crate::capture::CaptureOptions::default();
        crate::capture::for_each_captured(cat, &bytes[..], &opts, |c| {
            if let crate::capture::Captured::Frame(f) = c {
                comments.push((f.correlation_id, f.comment.as_deref().cloned()));
            }
            true
        })
        .unwrap();
        assert_eq!(
            comments,
            [
                (Some(1), Some("both".to_string())),
                (Some(2), Some("both".to_string())),
                (Some(3), None)
            ]
        );
    }

    #[test]
    fn a_packet_comment_reads_back_and_a_plain_packet_has_none() {
        let mut w = PcapngWriter::new(Vec::new(), 101).unwrap();
        w.packet(1, b"plain").unwrap();
        w.packet_commented(2, b"odd", "kwire proxy rule 1: made up, é")
            .unwrap();
        let long = "x".repeat(70_000);
        w.packet_commented(3, b"four", &long).unwrap();
        let bytes = w.get_mut().clone();
        let mut r = crate::capture::pcap::Reader::new(&bytes[..]).unwrap();
        let mut seen = Vec::new();
        while let Some(rec) = r.read_record().unwrap() {
            if let crate::capture::pcap::Record::Packet(p) = rec {
                seen.push((
                    p.data.to_vec(),
                    p.comment.map(|c| c.len()),
                    p.comment.map(<[u8]>::to_vec),
                ));
            }
        }
        assert_eq!(seen[0], (b"plain".to_vec(), None, None));
        assert_eq!(
            seen[1].2.as_deref(),
            Some("kwire proxy rule 1: made up, é".as_bytes())
        );
        assert_eq!(seen[1].0, b"odd");
        // An option holds at most 16 bits of length: a longer comment is cut.
        assert_eq!(
            (seen[2].0.as_slice(), seen[2].1),
            (&b"four"[..], Some(0xfff0))
        );
    }

    #[test]
    fn segments_carry_running_sequence_numbers_and_split_large_data() {
        let mut f = TcpFlow::new(
            "127.0.0.1:40000".parse().unwrap(),
            "127.0.0.1:9092".parse().unwrap(),
        );
        assert_eq!(f.open().len(), 3);
        let big = vec![7u8; 150_000];
        let segs = f.data(true, &big);
        assert_eq!(segs.len(), 3);
        let seq = |p: &[u8]| u32::from_be_bytes([p[24], p[25], p[26], p[27]]);
        assert_eq!(
            (seq(&segs[0]), seq(&segs[1]), seq(&segs[2])),
            (1001, 66_001, 131_001)
        );
        assert_eq!(
            u16::from_be_bytes([segs[0][2], segs[0][3]]) as usize,
            20 + 20 + 65_000
        );
        assert_eq!(
            checksum(&segs[0][..20]),
            0,
            "a header with its checksum sums to zero"
        );
    }
}
