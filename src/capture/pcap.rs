//! Streaming readers for pcap and pcapng: one packet at a time, bounded by the
//! file's own limits, never trusting a length beyond what a packet can be.

use std::io::Read;

/// Largest packet accepted; anything longer is a corrupt length field.
pub const MAX_PACKET: usize = 256 * 1024;

#[derive(Clone, Debug)]
pub struct Packet {
    /// Seconds since the epoch, with sub-second precision.
    pub timestamp: f64,
    /// LINKTYPE_* of the interface that captured it.
    pub link_type: u32,
    pub data: Vec<u8>,
}

/// Which capture format a file is, from its first four bytes.
pub fn sniff(head: &[u8]) -> Option<Format> {
    match head.get(..4)? {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4] | [0x4d, 0x3c, 0xb2, 0xa1] | [0xa1, 0xb2, 0x3c, 0x4d] => Some(Format::Pcap),
        [0x0a, 0x0d, 0x0d, 0x0a] => Some(Format::Pcapng),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pcap,
    Pcapng,
}

pub enum Reader<R: Read> {
    Pcap(PcapReader<R>),
    Pcapng(PcapngReader<R>),
}

impl<R: Read> Reader<R> {
    pub fn new(mut r: R) -> Result<Self, String> {
        let mut head = [0u8; 4];
        r.read_exact(&mut head).map_err(|e| format!("not a capture file: {e}"))?;
        match sniff(&head) {
            Some(Format::Pcap) => Ok(Reader::Pcap(PcapReader::new(r, head)?)),
            Some(Format::Pcapng) => Ok(Reader::Pcapng(PcapngReader::new(r, head)?)),
            None => Err("not a pcap or pcapng file".into()),
        }
    }

    /// The next packet; `Ok(None)` at the end; an error on a corrupt file
    /// (packets read so far remain valid).
    pub fn next_packet(&mut self) -> Result<Option<Packet>, String> {
        match self {
            Reader::Pcap(p) => p.next_packet(),
            Reader::Pcapng(p) => p.next_packet(),
        }
    }
}

fn read_exact_or_eof<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<bool, String> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) if n == 0 => return Ok(false),
            Ok(0) => return Err(format!("capture ends inside a record ({n} of {} bytes)", buf.len())),
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(true)
}

fn u32_at(b: &[u8], at: usize, le: bool) -> u32 {
    let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if le {
        u32::from_le_bytes(a)
    } else {
        u32::from_be_bytes(a)
    }
}

fn u16_at(b: &[u8], at: usize, le: bool) -> u16 {
    let a = [b[at], b[at + 1]];
    if le {
        u16::from_le_bytes(a)
    } else {
        u16::from_be_bytes(a)
    }
}

pub struct PcapReader<R: Read> {
    r: R,
    le: bool,
    nanos: bool,
    link_type: u32,
}

impl<R: Read> PcapReader<R> {
    fn new(mut r: R, magic: [u8; 4]) -> Result<Self, String> {
        let le = magic[0] == 0xd4 || magic[0] == 0x4d;
        let nanos = magic == [0x4d, 0x3c, 0xb2, 0xa1] || magic == [0xa1, 0xb2, 0x3c, 0x4d];
        let mut rest = [0u8; 20];
        if !read_exact_or_eof(&mut r, &mut rest)? {
            return Err("pcap header cut short".into());
        }
        let link_type = u32_at(&rest, 16, le) & 0x0fff_ffff;
        Ok(PcapReader { r, le, nanos, link_type })
    }

    fn next_packet(&mut self) -> Result<Option<Packet>, String> {
        let mut h = [0u8; 16];
        if !read_exact_or_eof(&mut self.r, &mut h)? {
            return Ok(None);
        }
        let secs = u32_at(&h, 0, self.le);
        let frac = u32_at(&h, 4, self.le);
        let incl = u32_at(&h, 8, self.le) as usize;
        if incl > MAX_PACKET {
            return Err(format!("packet length {incl} exceeds {MAX_PACKET}: corrupt capture"));
        }
        let mut data = vec![0u8; incl];
        if !read_exact_or_eof(&mut self.r, &mut data)? && incl > 0 {
            return Err("capture ends inside a packet".into());
        }
        let timestamp = f64::from(secs) + f64::from(frac) / if self.nanos { 1e9 } else { 1e6 };
        Ok(Some(Packet { timestamp, link_type: self.link_type, data }))
    }
}

struct Interface {
    link_type: u32,
    /// Units per second of this interface's timestamps.
    resolution: f64,
}

pub struct PcapngReader<R: Read> {
    r: R,
    le: bool,
    interfaces: Vec<Interface>,
    /// The first block header was consumed while sniffing.
    pending_shb: Option<[u8; 4]>,
}

impl<R: Read> PcapngReader<R> {
    fn new(r: R, magic: [u8; 4]) -> Result<Self, String> {
        Ok(PcapngReader { r, le: true, interfaces: Vec::new(), pending_shb: Some(magic) })
    }

    fn next_packet(&mut self) -> Result<Option<Packet>, String> {
        loop {
            let mut head = [0u8; 8];
            match self.pending_shb.take() {
                Some(t) => {
                    head[..4].copy_from_slice(&t);
                    if !read_exact_or_eof(&mut self.r, &mut head[4..])? {
                        return Err("pcapng header cut short".into());
                    }
                }
                None => {
                    if !read_exact_or_eof(&mut self.r, &mut head)? {
                        return Ok(None);
                    }
                }
            }
            let block_type = u32_at(&head, 0, self.le);
            if block_type == 0x0a0d_0d0a {
                // The section header's byte-order magic decides endianness for the section.
                let mut bom = [0u8; 4];
                if !read_exact_or_eof(&mut self.r, &mut bom)? {
                    return Err("pcapng section header cut short".into());
                }
                self.le = bom == [0x4d, 0x3c, 0x2b, 0x1a];
                if !self.le && bom != [0x1a, 0x2b, 0x3c, 0x4d] {
                    return Err("pcapng: bad byte-order magic".into());
                }
                let total = u32_at(&head, 4, self.le) as usize;
                if !(16..=MAX_PACKET).contains(&total) || total % 4 != 0 {
                    return Err(format!("pcapng: bad section header length {total}"));
                }
                let mut rest = vec![0u8; total - 12];
                if !read_exact_or_eof(&mut self.r, &mut rest)? {
                    return Err("pcapng section header cut short".into());
                }
                self.interfaces.clear();
                continue;
            }
            let total = u32_at(&head, 4, self.le) as usize;
            if total < 12 || total > MAX_PACKET + 64 || total % 4 != 0 {
                return Err(format!("pcapng: bad block length {total}"));
            }
            let mut body = vec![0u8; total - 8];
            if !read_exact_or_eof(&mut self.r, &mut body)? {
                return Err("pcapng block cut short".into());
            }
            let body = &body[..total - 12]; // without the trailing length
            match block_type {
                1 if body.len() >= 8 => {
                    let link_type = u32::from(u16_at(body, 0, self.le));
                    let resolution = if_tsresol(&body[8..], self.le);
                    self.interfaces.push(Interface { link_type, resolution });
                }
                6 if body.len() >= 20 => {
                    let iface = u32_at(body, 0, self.le) as usize;
                    let ts = (u64::from(u32_at(body, 4, self.le)) << 32) | u64::from(u32_at(body, 8, self.le));
                    let cap = (u32_at(body, 12, self.le) as usize).min(body.len() - 20);
                    let Some(i) = self.interfaces.get(iface) else { return Err(format!("pcapng: packet on undeclared interface {iface}")) };
                    return Ok(Some(Packet { timestamp: ts as f64 / i.resolution, link_type: i.link_type, data: body[20..20 + cap].to_vec() }));
                }
                3 if body.len() >= 4 => {
                    let Some(i) = self.interfaces.first() else { return Err("pcapng: simple packet before any interface".into()) };
                    let orig = u32_at(body, 0, self.le) as usize;
                    let cap = orig.min(body.len() - 4);
                    return Ok(Some(Packet { timestamp: 0.0, link_type: i.link_type, data: body[4..4 + cap].to_vec() }));
                }
                _ => {} // statistics, name resolution, custom blocks: not packets
            }
        }
    }
}

/// The `if_tsresol` option (code 9): a power of ten, or of two when the high bit is set.
fn if_tsresol(mut opts: &[u8], le: bool) -> f64 {
    while opts.len() >= 4 {
        let code = u16_at(opts, 0, le);
        let len = u16_at(opts, 2, le) as usize;
        let padded = (len + 3) & !3;
        if code == 0 || opts.len() < 4 + len {
            break;
        }
        if code == 9 && len >= 1 {
            let v = opts[4];
            let exp = i32::from(v & 0x7f);
            return if v & 0x80 != 0 { 2f64.powi(exp) } else { 10f64.powi(exp) };
        }
        opts = &opts[(4 + padded).min(opts.len())..];
    }
    1e6
}
