//! Streaming readers for pcap and pcapng: one packet at a time, bounded by the
//! file's own limits, never trusting a length beyond what a packet can be.
//! Packets are handed out as slices of one reused read buffer (no allocation
//! or copy per packet); `next_packet` gives an owned copy for callers that keep them.

use std::io::Read;

/// Largest packet accepted; anything longer is a corrupt length field.
pub const MAX_PACKET: usize = 256 * 1024;

/// The read buffer: large reads, records handed out in place; small enough to
/// stay in the CPU cache between the read and the parsing.
const READ_BUFFER: usize = 256 << 10;

#[derive(Clone, Debug)]
pub struct Packet {
    /// Seconds since the epoch, with sub-second precision.
    pub timestamp: f64,
    /// LINKTYPE_* of the interface that captured it.
    pub link_type: u32,
    pub data: Vec<u8>,
}

/// A packet borrowed from the reader's buffer, valid until the next read.
#[derive(Clone, Copy, Debug)]
pub struct PacketRef<'a> {
    pub timestamp: f64,
    pub link_type: u32,
    pub data: &'a [u8],
    /// A pcapng packet's comment (`opt_comment`): what `kwire proxy --inject`
    /// says of an answer it made, delayed or repeated; Wireshark shows it too.
    pub comment: Option<&'a [u8]>,
}

impl PacketRef<'_> {
    pub(crate) fn to_owned(self) -> Packet {
        Packet {
            timestamp: self.timestamp,
            link_type: self.link_type,
            data: self.data.to_vec(),
        }
    }
}

/// Which capture format a file is, from its first four bytes.
pub fn sniff(head: &[u8]) -> Option<Format> {
    match head.get(..4)? {
        [0xd4, 0xc3, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0xc3, 0xd4]
        | [0x4d, 0x3c, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0x3c, 0x4d] => Some(Format::Pcap),
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
        r.read_exact(&mut head)
            .map_err(|e| format!("not a capture file: {e}"))?;
        match sniff(&head) {
            Some(Format::Pcap) => Ok(Reader::Pcap(PcapReader::new(Source::new(r), head)?)),
            Some(Format::Pcapng) => Ok(Reader::Pcapng(PcapngReader::new(Source::new(r), head)?)),
            None => Err("not a pcap or pcapng file".into()),
        }
    }

    /// The next packet, borrowed from the read buffer; `Ok(None)` at the end; an
    /// error on a corrupt file (packets read so far remain valid).
    pub(crate) fn read_packet(&mut self) -> Result<Option<PacketRef<'_>>, String> {
        match self {
            Reader::Pcap(p) => p.read_packet(),
            Reader::Pcapng(p) => p.read_packet(),
        }
    }

    /// Whether the next record is whole in the read buffer: reading it will
    /// not wait for the input (a live stream's next read may wait indefinitely).
    pub(crate) fn next_is_buffered(&self) -> bool {
        match self {
            // A packet record: 16 bytes of header, then as many as its third field says.
            Reader::Pcap(p) => p.src.holds_record(8, 16, p.le),
            // A block: its second field is its whole length.
            Reader::Pcapng(p) => p.pending_shb.is_none() && p.src.holds_record(4, 0, p.le),
        }
    }

    /// The next packet as an owned copy.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, String> {
        Ok(self.read_packet()?.map(|p| p.to_owned()))
    }

    /// The next packet or TLS key log (a pcapng Decryption Secrets Block),
    /// borrowed from the read buffer; `Ok(None)` at the end.
    pub(crate) fn read_record(&mut self) -> Result<Option<Record<'_>>, String> {
        match self {
            Reader::Pcap(p) => Ok(p.read_packet()?.map(Record::Packet)),
            Reader::Pcapng(p) => p.read_record(),
        }
    }
}

/// What a capture holds, in order: packets, and session secrets.
#[derive(Clone, Copy, Debug)]
pub enum Record<'a> {
    Packet(PacketRef<'a>),
    /// The text of a TLS key log (NSS format) from a Decryption Secrets Block.
    TlsKeyLog(&'a [u8]),
}

/// A Decryption Secrets Block's secrets type: a TLS key log ("TLSK").
pub(crate) const SECRETS_TLS_KEY_LOG: u32 = 0x544c_534b;

/// The input behind one large buffer; records are taken as slices of it.
struct Source<R: Read> {
    r: R,
    buf: Vec<u8>,
    /// Unread bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    eof: bool,
}

impl<R: Read> Source<R> {
    fn new(r: R) -> Self {
        Source {
            r,
            buf: Vec::new(),
            pos: 0,
            end: 0,
            eof: false,
        }
    }

    /// The next `len` bytes: `Ok(None)` when the input ended before any of them,
    /// an error when it ends inside them.
    fn take(&mut self, len: usize) -> Result<Option<&[u8]>, String> {
        Ok(self.take_at(len)?.map(|at| &self.buf[at..at + len]))
    }

    /// `take`, giving where the bytes are in `buf`.
    fn take_at(&mut self, len: usize) -> Result<Option<usize>, String> {
        while self.end - self.pos < len && !self.eof {
            if self.buf.len() - self.pos < len {
                // Move what is left to the front (records are small next to the buffer).
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
                if self.buf.len() < len.max(READ_BUFFER) {
                    self.buf.resize(len.max(READ_BUFFER), 0);
                }
            }
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        let have = self.end - self.pos;
        if have < len {
            if have == 0 {
                return Ok(None);
            }
            // What was there is consumed, as a short read would have.
            self.pos = self.end;
            return Err(format!(
                "capture ends inside a record ({have} of {len} bytes)"
            ));
        }
        let at = self.pos;
        self.pos += len;
        Ok(Some(at))
    }

    /// Whether the unread bytes hold a whole record: `header` bytes and as
    /// many more as the u32 at `len_at` says.
    fn holds_record(&self, len_at: usize, header: usize, le: bool) -> bool {
        let unread = &self.buf[self.pos..self.end];
        unread.len() >= len_at + 4 && unread.len() >= header + u32_at(unread, len_at, le) as usize
    }

    /// `take` for a fixed-size header.
    fn take_array<const N: usize>(&mut self) -> Result<Option<[u8; N]>, String> {
        Ok(self.take(N)?.map(|b| {
            let mut a = [0u8; N];
            a.copy_from_slice(b);
            a
        }))
    }
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
    src: Source<R>,
    le: bool,
    nanos: bool,
    link_type: u32,
}

impl<R: Read> PcapReader<R> {
    fn new(mut src: Source<R>, magic: [u8; 4]) -> Result<Self, String> {
        let le = magic[0] == 0xd4 || magic[0] == 0x4d;
        let nanos = magic == [0x4d, 0x3c, 0xb2, 0xa1] || magic == [0xa1, 0xb2, 0x3c, 0x4d];
        let Some(rest) = src.take_array::<20>()? else {
            return Err("pcap header cut short".into());
        };
        let link_type = u32_at(&rest, 16, le) & 0x0fff_ffff;
        Ok(PcapReader {
            src,
            le,
            nanos,
            link_type,
        })
    }

    fn read_packet(&mut self) -> Result<Option<PacketRef<'_>>, String> {
        let Some(h) = self.src.take_array::<16>()? else {
            return Ok(None);
        };
        let secs = u32_at(&h, 0, self.le);
        let frac = u32_at(&h, 4, self.le);
        let incl = u32_at(&h, 8, self.le) as usize;
        if incl > MAX_PACKET {
            return Err(format!(
                "packet length {incl} exceeds {MAX_PACKET}: corrupt capture"
            ));
        }
        let timestamp = f64::from(secs) + f64::from(frac) / if self.nanos { 1e9 } else { 1e6 };
        let data = match self.src.take(incl)? {
            Some(d) => d,
            None if incl > 0 => return Err("capture ends inside a packet".into()),
            None => &[],
        };
        Ok(Some(PacketRef {
            timestamp,
            link_type: self.link_type,
            data,
            comment: None,
        }))
    }
}

struct Interface {
    link_type: u32,
    /// Units per second of this interface's timestamps.
    resolution: f64,
}

pub struct PcapngReader<R: Read> {
    src: Source<R>,
    le: bool,
    interfaces: Vec<Interface>,
    /// The first block header was consumed while sniffing.
    pending_shb: Option<[u8; 4]>,
}

impl<R: Read> PcapngReader<R> {
    fn new(src: Source<R>, magic: [u8; 4]) -> Result<Self, String> {
        Ok(PcapngReader {
            src,
            le: true,
            interfaces: Vec::new(),
            pending_shb: Some(magic),
        })
    }

    fn read_packet(&mut self) -> Result<Option<PacketRef<'_>>, String> {
        loop {
            match self.next_block()? {
                None => return Ok(None),
                Some(Block::Secrets { .. }) => continue,
                Some(Block::Packet {
                    timestamp,
                    link_type,
                    start,
                    len,
                    comment,
                }) => {
                    return Ok(Some(PacketRef {
                        timestamp,
                        link_type,
                        data: &self.src.buf[start..start + len],
                        comment: comment.map(|(s, l)| &self.src.buf[s..s + l]),
                    }))
                }
            }
        }
    }

    fn read_record(&mut self) -> Result<Option<Record<'_>>, String> {
        Ok(self.next_block()?.map(|b| match b {
            Block::Packet {
                timestamp,
                link_type,
                start,
                len,
                comment,
            } => Record::Packet(PacketRef {
                timestamp,
                link_type,
                data: &self.src.buf[start..start + len],
                comment: comment.map(|(s, l)| &self.src.buf[s..s + l]),
            }),
            Block::Secrets { start, len } => Record::TlsKeyLog(&self.src.buf[start..start + len]),
        }))
    }

    /// The next block that is a packet or TLS secrets, as places in the read buffer.
    fn next_block(&mut self) -> Result<Option<Block>, String> {
        loop {
            let mut head = [0u8; 8];
            match self.pending_shb.take() {
                Some(t) => {
                    head[..4].copy_from_slice(&t);
                    let Some(len) = self.src.take_array::<4>()? else {
                        return Err("pcapng header cut short".into());
                    };
                    head[4..].copy_from_slice(&len);
                }
                None => match self.src.take_array::<8>()? {
                    Some(h) => head = h,
                    None => return Ok(None),
                },
            }
            let block_type = u32_at(&head, 0, self.le);
            if block_type == 0x0a0d_0d0a {
                // The section header's byte-order magic decides endianness for the section.
                let Some(bom) = self.src.take_array::<4>()? else {
                    return Err("pcapng section header cut short".into());
                };
                self.le = bom == [0x4d, 0x3c, 0x2b, 0x1a];
                if !self.le && bom != [0x1a, 0x2b, 0x3c, 0x4d] {
                    return Err("pcapng: bad byte-order magic".into());
                }
                let total = u32_at(&head, 4, self.le) as usize;
                if !(16..=MAX_PACKET).contains(&total) || !total.is_multiple_of(4) {
                    return Err(format!("pcapng: bad section header length {total}"));
                }
                if self.src.take(total - 12)?.is_none() {
                    return Err("pcapng section header cut short".into());
                }
                self.interfaces.clear();
                continue;
            }
            let total = u32_at(&head, 4, self.le) as usize;
            if !(12..=MAX_PACKET + 64).contains(&total) || !total.is_multiple_of(4) {
                return Err(format!("pcapng: bad block length {total}"));
            }
            let le = self.le;
            let Some(at) = self.src.take_at(total - 8)? else {
                return Err("pcapng block cut short".into());
            };
            let body = &self.src.buf[at..at + total - 12]; // without the trailing length
                                                           // A packet: its timestamp, link type and where its data is in the block.
            let packet = match block_type {
                1 if body.len() >= 8 => {
                    let link_type = u32::from(u16_at(body, 0, le));
                    let resolution = if_tsresol(&body[8..], le);
                    self.interfaces.push(Interface {
                        link_type,
                        resolution,
                    });
                    None
                }
                6 if body.len() >= 20 => {
                    let iface = u32_at(body, 0, le) as usize;
                    let ts =
                        (u64::from(u32_at(body, 4, le)) << 32) | u64::from(u32_at(body, 8, le));
                    let cap = (u32_at(body, 12, le) as usize).min(body.len() - 20);
                    let Some(i) = self.interfaces.get(iface) else {
                        return Err(format!("pcapng: packet on undeclared interface {iface}"));
                    };
                    // Options follow the data, padded to 32 bits.
                    let options = (20 + cap.next_multiple_of(4)).min(body.len());
                    let comment =
                        option_comment(&body[options..], le).map(|(s, l)| (at + options + s, l));
                    Some((ts as f64 / i.resolution, i.link_type, at + 20, cap, comment))
                }
                3 if body.len() >= 4 => {
                    let Some(i) = self.interfaces.first() else {
                        return Err("pcapng: simple packet before any interface".into());
                    };
                    let orig = u32_at(body, 0, le) as usize;
                    let cap = orig.min(body.len() - 4);
                    Some((0.0, i.link_type, at + 4, cap, None))
                }
                10 if body.len() >= 8 && u32_at(body, 0, le) == SECRETS_TLS_KEY_LOG => {
                    // A Decryption Secrets Block: secrets type, length, the secrets.
                    let len = (u32_at(body, 4, le) as usize).min(body.len() - 8);
                    return Ok(Some(Block::Secrets { start: at + 8, len }));
                }
                _ => None, // statistics, name resolution, custom blocks, other secrets: not packets
            };
            if let Some((timestamp, link_type, start, len, comment)) = packet {
                return Ok(Some(Block::Packet {
                    timestamp,
                    link_type,
                    start,
                    len,
                    comment,
                }));
            }
        }
    }
}

/// A block found, by where its data is in the read buffer.
enum Block {
    Packet {
        timestamp: f64,
        link_type: u32,
        start: usize,
        len: usize,
        /// Where its first comment is in the block's options, and its length.
        comment: Option<(usize, usize)>,
    },
    Secrets {
        start: usize,
        len: usize,
    },
}
/// The first `opt_comment` (code 1) among a block's options: its place in
/// `opts` and its length.
fn option_comment(opts: &[u8], le: bool) -> Option<(usize, usize)> {
    let mut at = 0;
    while opts.len() >= at + 4 {
        let code = u16_at(opts, at, le);
        let len = u16_at(opts, at + 2, le) as usize;
        if code == 0 || opts.len() < at + 4 + len {
            return None;
        }
        if code == 1 {
            return Some((at + 4, len));
        }
        at += 4 + len.next_multiple_of(4);
    }
    None
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
            return if v & 0x80 != 0 {
                2f64.powi(exp)
            } else {
                10f64.powi(exp)
            };
        }
        opts = &opts[(4 + padded).min(opts.len())..];
    }
    1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian pcap of Ethernet packets of these lengths (each filled with its index).
    fn pcap(lens: &[usize]) -> Vec<u8> {
        let mut f = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        f.extend([0u8; 8]);
        f.extend(65535u32.to_le_bytes());
        f.extend(1u32.to_le_bytes());
        for (i, &len) in lens.iter().enumerate() {
            f.extend((1_700_000_000 + i as u32).to_le_bytes());
            f.extend(250_000u32.to_le_bytes());
            f.extend((len as u32).to_le_bytes());
            f.extend((len as u32).to_le_bytes());
            f.extend(std::iter::repeat_n(i as u8, len));
        }
        f
    }

    /// Reads at most a few bytes at a time.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 = self.1 % 5 + 1;
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn all<R: Read>(r: R) -> (Vec<(f64, Vec<u8>)>, Option<String>) {
        let mut reader = Reader::new(r).unwrap();
        let mut out = Vec::new();
        loop {
            match reader.next_packet() {
                Ok(Some(p)) => out.push((p.timestamp, p.data)),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn packets_come_whole_whatever_the_reads_and_buffer_refills() {
        // Larger than the read buffer, with packets straddling each refill.
        let lens: Vec<usize> = (0..400)
            .map(|i| [0, 60, 1514, 9000, 65_535][i % 5])
            .collect();
        let file = pcap(&lens);
        assert!(file.len() > 3 * READ_BUFFER);
        let (whole, err) = all(&file[..]);
        assert_eq!(err, None);
        assert_eq!(whole.len(), lens.len());
        for (i, (ts, data)) in whole.iter().enumerate() {
            assert_eq!(*ts, 1_700_000_000.0 + i as f64 + 0.25);
            assert_eq!(data.len(), lens[i]);
            assert!(data.iter().all(|&b| b == i as u8));
        }
        assert_eq!(all(Trickle(&file[..30_000], 0)), all(&file[..30_000]));
    }

    #[test]
    fn a_cut_file_ends_with_the_packets_before_the_cut() {
        let file = pcap(&[100, 200, 300]);
        // Inside the third packet's data, inside its record header, and at its start.
        let third = 24 + 16 + 100 + 16 + 200;
        let (p, e) = all(&file[..third + 16 + 50]);
        assert_eq!(
            (p.len(), e.as_deref()),
            (2, Some("capture ends inside a record (50 of 300 bytes)"))
        );
        let (p, e) = all(&file[..third + 5]);
        assert_eq!(
            (p.len(), e.as_deref()),
            (2, Some("capture ends inside a record (5 of 16 bytes)"))
        );
        let (p, e) = all(&file[..third + 16]);
        assert_eq!(
            (p.len(), e.as_deref()),
            (2, Some("capture ends inside a packet"))
        );
        let (p, e) = all(&file[..third]);
        assert_eq!((p.len(), e), (2, None));
    }
}
