//! From link-layer frames to TCP segments: Ethernet (and VLAN tags), Linux
//! cooked captures (SLL, SLL2), BSD loopback, raw IP; IPv4 and IPv6.

use std::net::IpAddr;

/// One TCP segment with its addresses.
#[derive(Clone, Debug)]
pub struct Segment<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    /// The acknowledgement number, when the ACK flag is set.
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub payload: &'a [u8],
}

pub(crate) const LINKTYPE_NULL: u32 = 0;
pub(crate) const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub(crate) const LINKTYPE_LOOP: u32 = 108;
pub(crate) const LINKTYPE_LINUX_SLL: u32 = 113;
pub(crate) const LINKTYPE_IPV4: u32 = 228;
pub(crate) const LINKTYPE_IPV6: u32 = 229;
pub(crate) const LINKTYPE_LINUX_SLL2: u32 = 276;

/// The IP packet inside a link-layer frame, if it carries one.
pub(crate) fn ip_packet(link_type: u32, data: &[u8]) -> Option<&[u8]> {
    match link_type {
        LINKTYPE_ETHERNET => {
            let mut at = 12;
            let mut ethertype = u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]);
            // 802.1Q / 802.1ad tags
            while ethertype == 0x8100 || ethertype == 0x88a8 {
                at += 4;
                ethertype = u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]);
            }
            matches!(ethertype, 0x0800 | 0x86dd)
                .then(|| data.get(at + 2..))
                .flatten()
        }
        LINKTYPE_LINUX_SLL => data.get(16..),
        LINKTYPE_LINUX_SLL2 => data.get(20..),
        LINKTYPE_NULL | LINKTYPE_LOOP => data.get(4..),
        LINKTYPE_RAW | 12 | 14 | LINKTYPE_IPV4 | LINKTYPE_IPV6 => Some(data),
        _ => None,
    }
}

/// An IP packet's addresses, protocol and payload, and where its payload
/// goes in its datagram when it is a fragment.
pub(crate) struct Datagram<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub protocol: u8,
    pub payload: &'a [u8],
    pub fragment: Option<Fragment>,
}

/// A fragment's place: offset in the datagram's payload, more to come, and
/// the identification its pieces share.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fragment {
    pub offset: usize,
    pub more: bool,
    pub id: u32,
}

/// Read an IPv4 or IPv6 packet's header (IPv6 extension headers skipped).
pub(crate) fn ip_datagram(ip: &[u8]) -> Option<Datagram<'_>> {
    match ip.first()? >> 4 {
        4 => {
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
            let flags_frag = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]);
            let (offset, more) = (
                usize::from(flags_frag & 0x1fff) * 8,
                flags_frag & 0x2000 != 0,
            );
            let end = if total >= ihl && total <= ip.len() {
                total
            } else {
                ip.len()
            };
            let src: [u8; 4] = ip.get(12..16)?.try_into().ok()?;
            let dst: [u8; 4] = ip.get(16..20)?.try_into().ok()?;
            Some(Datagram {
                src: src.into(),
                dst: dst.into(),
                protocol: *ip.get(9)?,
                payload: ip.get(ihl..end)?,
                fragment: (offset > 0 || more).then(|| Fragment {
                    offset,
                    more,
                    id: u16::from_be_bytes([ip[4], ip[5]]).into(),
                }),
            })
        }
        6 => {
            let payload_len = usize::from(u16::from_be_bytes([*ip.get(4)?, *ip.get(5)?]));
            let src: [u8; 16] = ip.get(8..24)?.try_into().ok()?;
            let dst: [u8; 16] = ip.get(24..40)?.try_into().ok()?;
            let mut next = *ip.get(6)?;
            let end = (40 + payload_len).min(ip.len());
            let mut at = 40;
            // Skip extension headers: hop-by-hop, routing, destination options.
            while matches!(next, 0 | 43 | 60) {
                next = *ip.get(at)?;
                at += (usize::from(*ip.get(at + 1)?) + 1) * 8;
            }
            let mut fragment = None;
            if next == 44 {
                let h = ip.get(at..at + 8)?;
                let field = u16::from_be_bytes([h[2], h[3]]);
                fragment = Some(Fragment {
                    offset: usize::from(field & 0xfff8),
                    more: field & 1 != 0,
                    id: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
                });
                (next, at) = (h[0], at + 8);
            }
            Some(Datagram {
                src: src.into(),
                dst: dst.into(),
                protocol: next,
                payload: ip.get(at..end)?,
                fragment,
            })
        }
        _ => None,
    }
}

/// Parse a captured frame down to its TCP segment (none for a fragment:
/// [`super::ip_fragments`] puts fragments back together first).
pub fn tcp_segment(link_type: u32, data: &[u8]) -> Option<Segment<'_>> {
    let d = ip_datagram(ip_packet(link_type, data)?)?;
    if d.protocol != 6 || d.fragment.is_some() {
        return None;
    }
    let (src, dst, l4) = (d.src, d.dst, d.payload);
    let off = usize::from(l4.get(12)? >> 4) * 4;
    let flags = *l4.get(13)?;
    Some(Segment {
        src,
        dst,
        src_port: u16::from_be_bytes([l4[0], l4[1]]),
        dst_port: u16::from_be_bytes([l4[2], l4[3]]),
        seq: u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]),
        ack: (flags & 0x10 != 0).then(|| u32::from_be_bytes([l4[8], l4[9], l4[10], l4[11]])),
        syn: flags & 0x02 != 0,
        fin: flags & 0x01 != 0,
        rst: flags & 0x04 != 0,
        payload: l4.get(off..)?,
    })
}
