//! Synthetic captures for tests: TCP conversations written as pcap or pcapng,
//! over Ethernet/IPv4, Linux cooked v2, or loopback/IPv6; many connections
//! apart by their client port.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    EthernetV4,
    Sll2V4,
    NullV6,
}

/// One TCP segment to write: direction (true = client → server), seq, flags, payload.
#[derive(Clone, Debug)]
pub struct Seg {
    pub from_client: bool,
    pub seq: u32,
    /// What the sender had received of the other direction.
    pub ack: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    /// The connection: the client's port (the server's is 9092).
    pub client_port: u16,
    pub payload: Vec<u8>,
}

pub const CLIENT_PORT: u16 = 50000;

impl Seg {
    /// A data segment of the first connection.
    pub fn data(from_client: bool, seq: u32, ack: u32, payload: Vec<u8>) -> Seg {
        Seg {
            from_client,
            seq,
            ack,
            syn: false,
            fin: false,
            rst: false,
            client_port: CLIENT_PORT,
            payload,
        }
    }
}

/// The same segments on the connection from `client_port`.
pub fn on_port(segs: Vec<Seg>, client_port: u16) -> Vec<Seg> {
    segs.into_iter().map(|s| Seg { client_port, ..s }).collect()
}

pub const CLIENT_ISN: u32 = 1000;
pub const SERVER_ISN: u32 = 0xffff_fff0; // wraps around during the test

/// A conversation: handshake, then frames cut into segments of `mss` bytes.
pub fn conversation(frames: &[(bool, Vec<u8>)], mss: usize) -> Vec<Seg> {
    let mut segs = vec![
        Seg {
            syn: true,
            ..Seg::data(true, CLIENT_ISN, 0, vec![])
        },
        Seg {
            syn: true,
            ..Seg::data(false, SERVER_ISN, CLIENT_ISN + 1, vec![])
        },
    ];
    let mut next = [SERVER_ISN.wrapping_add(1), CLIENT_ISN + 1];
    for (from_client, bytes) in frames {
        for chunk in bytes.chunks(mss) {
            let i = usize::from(*from_client);
            segs.push(Seg::data(
                *from_client,
                next[i],
                next[1 - i],
                chunk.to_vec(),
            ));
            next[i] = next[i].wrapping_add(chunk.len() as u32);
        }
    }
    segs
}

fn checksum_free_tcp(seg: &Seg, sport: u16, dport: u16) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seg.seq.to_be_bytes());
    t.extend_from_slice(&seg.ack.to_be_bytes());
    t.push(5 << 4);
    t.push(
        // A client's SYN opens the handshake: it acknowledges nothing yet.
        if seg.syn && seg.from_client { 0 } else { 0x10 }
            | if seg.syn { 0x02 } else { 0 }
            | if seg.fin { 0x01 } else { 0 }
            | if seg.rst { 0x04 } else { 0 },
    );
    t.extend_from_slice(&65535u16.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent
    t.extend_from_slice(&seg.payload);
    t
}

fn frame(link: Link, seg: &Seg) -> Vec<u8> {
    let (sport, dport) = if seg.from_client {
        (seg.client_port, 9092)
    } else {
        (9092, seg.client_port)
    };
    let tcp = checksum_free_tcp(seg, sport, dport);
    match link {
        Link::EthernetV4 | Link::Sll2V4 => {
            let (src, dst) = if seg.from_client {
                ([10, 0, 0, 1], [10, 0, 0, 2])
            } else {
                ([10, 0, 0, 2], [10, 0, 0, 1])
            };
            let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0];
            ip[2..4].copy_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
            ip.extend_from_slice(&src);
            ip.extend_from_slice(&dst);
            ip.extend_from_slice(&tcp);
            let mut out = if link == Link::EthernetV4 {
                let mut e = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
                e.extend_from_slice(&[0x08, 0x00]);
                e
            } else {
                // SLL2: protocol, reserved, ifindex, hatype, pkttype, addr len, addr[8]
                let mut s = vec![0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6];
                s.extend_from_slice(&[0; 8]);
                s
            };
            out.extend(ip);
            out
        }
        Link::NullV6 => {
            let (src, dst) = if seg.from_client {
                (1u8, 2u8)
            } else {
                (2u8, 1u8)
            };
            let mut out = 30u32.to_le_bytes().to_vec(); // AF_INET6 on BSD/macOS, host byte order
            let mut ip = vec![0x60, 0, 0, 0];
            ip.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
            ip.extend_from_slice(&[6, 64]);
            let mut a = [0u8; 16];
            a[15] = src;
            ip.extend_from_slice(&a);
            a[15] = dst;
            ip.extend_from_slice(&a);
            ip.extend_from_slice(&tcp);
            out.extend(ip);
            out
        }
    }
}

fn link_type(link: Link) -> u32 {
    match link {
        Link::EthernetV4 => 1,
        Link::Sll2V4 => 276,
        Link::NullV6 => 0,
    }
}

/// A pcap file's header for `link`, microsecond timestamps.
fn pcap_header(link: Link) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&link_type(link).to_le_bytes());
    out
}

pub fn pcap(link: Link, segs: &[Seg]) -> Vec<u8> {
    let mut out = pcap_header(link);
    for (i, s) in segs.iter().enumerate() {
        let f = frame(link, s);
        out.extend_from_slice(&(1_700_000_000u32 + i as u32 / 1000).to_le_bytes());
        out.extend_from_slice(&((i as u32 % 1000) * 1000).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend(f);
    }
    out
}

/// A pcap whose packets carry the times given: microseconds since the epoch, one per segment.
pub fn pcap_timed(link: Link, packets: &[(u64, Seg)]) -> Vec<u8> {
    let mut out = pcap_header(link);
    for (us, s) in packets {
        let f = frame(link, s);
        out.extend_from_slice(&((us / 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend(f);
    }
    out
}

pub fn pcapng(link: Link, segs: &[Seg]) -> Vec<u8> {
    fn block(t: u32, body: &[u8]) -> Vec<u8> {
        let pad = (4 - body.len() % 4) % 4;
        let total = (12 + body.len() + pad) as u32;
        let mut b = t.to_le_bytes().to_vec();
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(body);
        b.extend(std::iter::repeat_n(0, pad));
        b.extend_from_slice(&total.to_le_bytes());
        b
    }
    let mut shb = 0x1a2b3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut out = block(0x0a0d0d0a, &shb);
    let mut idb = (link_type(link) as u16).to_le_bytes().to_vec();
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&0u32.to_le_bytes());
    out.extend(block(1, &idb));
    for (i, s) in segs.iter().enumerate() {
        let f = frame(link, s);
        let ts = 1_700_000_000_000_000u64 + i as u64;
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend(f);
        out.extend(block(6, &epb));
    }
    out
}

/// A pcap of `segs` whose packets with a payload are sent as IP fragments of
/// at most `piece` bytes of IP payload (a multiple of 8), the fragments of
/// every other packet in reverse order; `drop` names (packet, fragment)
/// pairs left out of the capture.
pub fn pcap_fragmented(link: Link, segs: &[Seg], piece: usize, drop: &[(usize, usize)]) -> Vec<u8> {
    let mut packets = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let f = frame(link, s);
        if s.payload.is_empty() {
            packets.push(f);
            continue;
        }
        let ip_at = match link {
            Link::EthernetV4 => 14,
            Link::Sll2V4 => 20,
            Link::NullV6 => 4,
        };
        let (head, ip) = f.split_at(ip_at);
        let mut pieces = fragments(link, ip, piece, i as u32 + 77);
        if i % 2 == 1 {
            pieces.reverse();
        }
        for (k, p) in pieces.into_iter().enumerate() {
            if !drop.contains(&(i, k)) {
                packets.push([head, &p].concat());
            }
        }
    }
    let mut out = pcap_header(link);
    for (i, f) in packets.iter().enumerate() {
        out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        out.extend_from_slice(&(i as u32 * 10).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f);
    }
    out
}

/// An IP packet cut into fragments (in order) of at most `piece` payload bytes.
fn fragments(link: Link, ip: &[u8], piece: usize, id: u32) -> Vec<Vec<u8>> {
    let v6 = link == Link::NullV6;
    let header_len = if v6 { 40 } else { 20 };
    let payload = &ip[header_len..];
    let chunks: Vec<&[u8]> = payload.chunks(piece).collect();
    let last = chunks.len() - 1;
    chunks
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let offset = k * piece;
            let more = u16::from(k != last);
            let mut p = ip[..header_len].to_vec();
            if v6 {
                p[4..6].copy_from_slice(&((8 + c.len()) as u16).to_be_bytes());
                p[6] = 44;
                p.extend_from_slice(&[6, 0]);
                p.extend_from_slice(&((offset as u16) | more).to_be_bytes());
                p.extend_from_slice(&id.to_be_bytes());
            } else {
                p[2..4].copy_from_slice(&((20 + c.len()) as u16).to_be_bytes());
                p[4..6].copy_from_slice(&(id as u16).to_be_bytes());
                p[6..8].copy_from_slice(&(((offset / 8) as u16) | (more << 13)).to_be_bytes());
            }
            p.extend_from_slice(c);
            p
        })
        .collect()
}
