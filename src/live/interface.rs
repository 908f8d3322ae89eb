//! Live capture from a network interface: a Linux AF_PACKET socket bound to
//! the interface (or to every interface, `any`), a classic BPF filter in the
//! kernel for TCP (to or from one port), each packet taken once, timestamped
//! by the kernel and written as pcapng ([`super::synth::PcapngWriter`]) into
//! the sinks: a file (`--write-pcap`) and the in-process pipe
//! ([`super::recorder::pipe`]) that the capture pipeline reads, as it reads
//! a file. One data flow: what `kwire capture FILE` decodes is what the
//! interface delivered, byte for byte.
//!
//! Loopback on Linux delivers Ethernet-shaped frames (zero MACs) and shows
//! every packet twice, as sent (`PACKET_OUTGOING`) and as received; only the
//! received copy is kept ([`keep`]). Other interfaces show a packet this host
//! sends only as sent, so there the sent copy is kept. Interfaces that are
//! not Ethernet-like (tun, ppp, `any`) are read from the network layer and
//! written as raw IP ([`Framing`]).
//!
//! Bounded: one receive buffer of [`MAX_PACKET`] bytes (a longer packet is
//! kept cut, with its length on the wire), a kernel socket buffer of
//! [`SOCKET_BUFFER`] bytes (what overflows it the kernel drops, and counts:
//! [`Counts::dropped`]), and the pipeline's own reassembly cap. The socket
//! code is Linux only; elsewhere [`LiveCapture::open`] says so.

use crate::capture::link::{tcp_segment, LINKTYPE_ETHERNET, LINKTYPE_RAW};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The largest packet kept whole; longer ones (GSO packets beyond 64 KiB)
/// are kept cut to it. The same bound as the capture reader's.
pub const MAX_PACKET: usize = crate::capture::pcap::MAX_PACKET;

/// The kernel's receive queue for the socket (as root, set beyond
/// `net.core.rmem_max`); packets that arrive while it is full are dropped
/// by the kernel and counted.
pub const SOCKET_BUFFER: usize = 8 << 20;

/// How long the capture waits for a packet before looking whether it was
/// asked to stop.
const POLL: Duration = Duration::from_millis(100);

/// Packets written before the sinks are flushed even while more are queued,
/// so that a busy interface still reaches the pipeline as it goes.
const FLUSH_EVERY: usize = 256;

// Linux ABI values (`<linux/if_packet.h>`, `<linux/if_arp.h>`), here so that
// the rules below build and are tested on every platform.
/// `sll_pkttype`: sent by this host.
pub const PACKET_OUTGOING: u8 = 4;
/// `sll_hatype` of Ethernet devices.
pub(crate) const ARPHRD_ETHER: u16 = 1;
/// `sll_hatype` of the loopback device.
pub(crate) const ARPHRD_LOOPBACK: u16 = 772;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;

/// How an interface's packets are read and written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Link-layer frames as they are (`SOCK_RAW`), written as Ethernet:
    /// Ethernet devices and loopback (which has Ethernet's header, zero MACs).
    Ethernet,
    /// The network-layer packet alone (`SOCK_DGRAM`), written as raw IP:
    /// every other device (tun, ppp, tunnels) and `any`, whose devices differ.
    RawIp,
}

impl Framing {
    /// The framing for a device of this hardware type (`ARPHRD_*`).
    pub(crate) fn for_hardware(hatype: u16) -> Framing {
        match hatype {
            ARPHRD_ETHER | ARPHRD_LOOPBACK => Framing::Ethernet,
            _ => Framing::RawIp,
        }
    }

    /// The pcapng link type the packets are written with.
    pub fn link_type(self) -> u32 {
        match self {
            Framing::Ethernet => LINKTYPE_ETHERNET,
            Framing::RawIp => LINKTYPE_RAW,
        }
    }

    /// How the link type is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Framing::Ethernet => "Ethernet",
            Framing::RawIp => "raw IP",
        }
    }
}

/// Whether a packet the socket saw is taken: loopback shows each packet
/// twice, as sent (`PACKET_OUTGOING`) and as received, and only the received
/// copy is taken. On other devices a packet this host sends is seen only as
/// sent, and is taken. `hatype` is the device's hardware type as the packet
/// reports it (with `any`, packets of several devices come through one socket).
pub fn keep(pkttype: u8, hatype: u16) -> bool {
    !(pkttype == PACKET_OUTGOING && hatype == ARPHRD_LOOPBACK)
}

/// Whether a packet is a TCP segment to or from `port` (any TCP segment
/// without a port): the same test as the kernel filter ([`filter_program`]),
/// made again on what the socket delivers, which holds packets queued before
/// the filter applied and those of kernels that refuse it.
pub fn wanted(framing: Framing, data: &[u8], port: Option<u16>) -> bool {
    tcp_segment(framing.link_type(), data)
        .is_some_and(|s| port.is_none_or(|p| s.src_port == p || s.dst_port == p))
}

/// One classic BPF instruction (`struct sock_filter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BpfInsn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

// Classic BPF opcodes (`<linux/filter.h>`).
const LD_W_ABS: u16 = 0x20;
const LD_H_ABS: u16 = 0x28;
const LD_B_ABS: u16 = 0x30;
const LD_H_IND: u16 = 0x48;
const LDX_B_MSH: u16 = 0xb1;
const JEQ_K: u16 = 0x15;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

/// Loads at this offset plus k read the network-layer header at k, whatever
/// the framing (`SKF_NET_OFF`).
const NET: u32 = (-0x10_0000i32) as u32;
/// The packet's protocol, an Ethertype in host order (`SKF_AD_OFF + SKF_AD_PROTOCOL`).
const AD_PROTOCOL: u32 = (-0x1000i32) as u32;

/// The kernel filter: IPv4 TCP (whole packets: fragments are not
/// reassembled, as in [`crate::capture::link`]) and IPv6
/// TCP (next header TCP, no extension headers), to or from `port` when one
/// is given. Loads are relative to the network header and the protocol is
/// the packet's own, so one program serves both framings.
pub fn filter_program(port: Option<u16>) -> Vec<BpfInsn> {
    // Built with absolute targets, then made relative.
    #[derive(Clone, Copy)]
    enum To {
        Next,
        At(usize),
        Accept,
        Drop,
    }
    let mut prog: Vec<(u16, To, To, u32)> = Vec::new();
    let mut op = |code: u16, k: u32| prog.push((code, To::Next, To::Next, k));
    op(LD_W_ABS, AD_PROTOCOL);
    // 1: IPv4? 2: IPv6? (targets fixed below)
    op(JEQ_K, u32::from(ETHERTYPE_IPV4));
    op(JEQ_K, u32::from(ETHERTYPE_IPV6));
    let v4 = prog.len();
    prog.push((LD_B_ABS, To::Next, To::Next, NET + 9));
    prog.push((JEQ_K, To::Next, To::Drop, 6));
    prog.push((LD_H_ABS, To::Next, To::Next, NET + 6));
    prog.push((JSET_K, To::Drop, To::Next, 0x3fff));
    match port {
        Some(p) => {
            prog.push((LDX_B_MSH, To::Next, To::Next, NET));
            prog.push((LD_H_IND, To::Next, To::Next, NET));
            prog.push((JEQ_K, To::Accept, To::Next, u32::from(p)));
            prog.push((LD_H_IND, To::Next, To::Next, NET + 2));
            prog.push((JEQ_K, To::Accept, To::Drop, u32::from(p)));
        }
        None => prog.push((RET_K, To::Next, To::Next, u32::MAX)),
    }
    let v6 = prog.len();
    prog.push((LD_B_ABS, To::Next, To::Next, NET + 6));
    match port {
        Some(p) => {
            prog.push((JEQ_K, To::Next, To::Drop, 6));
            prog.push((LD_H_ABS, To::Next, To::Next, NET + 40));
            prog.push((JEQ_K, To::Accept, To::Next, u32::from(p)));
            prog.push((LD_H_ABS, To::Next, To::Next, NET + 42));
            prog.push((JEQ_K, To::Accept, To::Drop, u32::from(p)));
        }
        None => prog.push((JEQ_K, To::Accept, To::Drop, 6)),
    }
    prog[1].1 = To::At(v4);
    prog[1].2 = To::Next;
    prog[2].1 = To::At(v6);
    prog[2].2 = To::Drop;
    let accept = prog.len();
    let drop = accept + 1;
    let mut out = Vec::with_capacity(drop + 1);
    for (i, &(code, jt, jf, k)) in prog.iter().enumerate() {
        let rel = |t: To| -> u8 {
            let target = match t {
                To::Next => i + 1,
                To::At(a) => a,
                To::Accept => accept,
                To::Drop => drop,
            };
            u8::try_from(target - i - 1).expect("a short program: every jump fits")
        };
        out.push(BpfInsn {
            code,
            jt: rel(jt),
            jf: rel(jf),
            k,
        });
    }
    out.push(BpfInsn {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: u32::MAX,
    });
    out.push(BpfInsn {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: 0,
    });
    out
}

/// Why an interface could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// No interface has this name.
    NoSuchInterface(String),
    /// Raw sockets need CAP_NET_RAW (root has it).
    Permission,
    /// Not Linux.
    Unsupported,
    /// Something else went wrong: what was being done, and the error.
    Io(&'static str, io::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::NoSuchInterface(name) => write!(f, "no network interface is named {} (`ip link` lists them; `any` captures on all)", crate::text::escape::quote(name)),
            OpenError::Permission => write!(
                f,
                "capturing from an interface needs the CAP_NET_RAW capability (raw sockets): run kwire as root, \
                 or give the binary the capability: sudo setcap cap_net_raw+ep \"$(command -v kwire)\""
            ),
            OpenError::Unsupported => write!(f, "capturing from an interface (-i) is supported on Linux only; capture with tcpdump or Wireshark and read the file (or `tcpdump -U -w - | kwire capture -`)"),
            OpenError::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

/// What a capture took and what the kernel dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets written to the sinks.
    pub packets: u64,
    /// Of them, packets longer than [`MAX_PACKET`], written cut.
    pub cut: u64,
    /// Packets the kernel dropped because the socket's queue was full.
    pub dropped: u64,
}

/// Where captured packets go: pcapng writers (a file, the capture pipeline).
pub use super::recorder::Sink;

/// Read packets from `cap` into `sinks` until `stop` is set, then take what
/// the kernel still holds for the socket, flush and return. The sinks are
/// flushed whenever no packet waits (and every `FLUSH_EVERY` packets), so
/// each frame reaches the pipeline as soon as its last packet arrives. A
/// failed write (the pipeline stopped, a full disk) ends the capture with
/// the error, after flushing the sinks that still take it.
pub fn capture(cap: &mut LiveCapture, sinks: &mut [Sink], stop: &AtomicBool) -> io::Result<Counts> {
    let mut counts = Counts::default();
    let mut unflushed = 0usize;
    let result = loop {
        let stopping = stop.load(Ordering::SeqCst);
        // Queued packets are taken at once; an idle socket is waited on a little at a time.
        let wait = if stopping || unflushed > 0 {
            Duration::ZERO
        } else {
            POLL
        };
        match cap.next(wait) {
            Ok(Some(p)) => {
                counts.packets += 1;
                counts.cut += u64::from(p.original > p.data.len());
                if let Err(e) = sinks
                    .iter_mut()
                    .try_for_each(|s| s.packet_cut(p.micros, p.data, p.original))
                {
                    break Err(e);
                }
                unflushed += 1;
                if unflushed >= FLUSH_EVERY {
                    if let Err(e) = sinks.iter_mut().try_for_each(|s| s.flush()) {
                        break Err(e);
                    }
                    unflushed = 0;
                }
            }
            Ok(None) => {
                if unflushed > 0 {
                    if let Err(e) = sinks.iter_mut().try_for_each(|s| s.flush()) {
                        break Err(e);
                    }
                    unflushed = 0;
                }
                if stopping {
                    break Ok(());
                }
            }
            Err(e) => break Err(e),
        }
    };
    for s in sinks.iter_mut() {
        let _ = s.flush();
    }
    counts.dropped = cap.dropped();
    result.map(|()| counts)
}

/// A packet as the capture takes it.
#[derive(Clone, Copy, Debug)]
pub struct LivePacket<'a> {
    /// When the kernel received it, in microseconds since the epoch.
    pub micros: u64,
    /// The frame (or IP packet) as kept: at most [`MAX_PACKET`] bytes.
    pub data: &'a [u8],
    /// Its length on the wire.
    pub original: usize,
}

#[cfg(target_os = "linux")]
pub use linux::LiveCapture;

#[cfg(not(target_os = "linux"))]
pub use other::LiveCapture;

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// An AF_PACKET socket bound to one interface (or to all, `any`).
    pub struct LiveCapture {
        fd: OwnedFd,
        framing: Framing,
        port: Option<u16>,
        buf: Vec<u8>,
        /// Drops the kernel counted so far (its counter resets when read).
        dropped: u64,
    }

    fn last_error(what: &'static str) -> OpenError {
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => OpenError::Permission,
            _ => OpenError::Io(what, e),
        }
    }

    fn set_option<T>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &T) -> bool {
        // SAFETY: `value` points to a live T of the size given.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                level,
                name,
                (value as *const T).cast(),
                std::mem::size_of::<T>() as libc::socklen_t,
            ) == 0
        }
    }

    /// The hardware type (`ARPHRD_*`) of the interface `name`.
    fn hardware_type(name: &CString) -> Result<u16, OpenError> {
        // An ordinary datagram socket answers the question without privileges.
        // SAFETY: plain system calls on a socket this function owns; `ifreq`
        // is zeroed, then given a NUL-terminated name shorter than IFNAMSIZ.
        unsafe {
            let raw = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
            if raw < 0 {
                return Err(OpenError::Io("socket", io::Error::last_os_error()));
            }
            let sock = OwnedFd::from_raw_fd(raw);
            let mut req: libc::ifreq = std::mem::zeroed();
            for (d, s) in req.ifr_name.iter_mut().zip(name.as_bytes()) {
                *d = *s as libc::c_char;
            }
            if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) < 0 {
                return Err(OpenError::Io(
                    "reading the interface's hardware type",
                    io::Error::last_os_error(),
                ));
            }
            Ok(req.ifr_ifru.ifru_hwaddr.sa_family)
        }
    }

    impl LiveCapture {
        /// Open `name` (`any` for every interface) for TCP packets, to or
        /// from `port` when given.
        pub fn open(name: &str, port: Option<u16>) -> Result<LiveCapture, OpenError> {
            let no_such = || OpenError::NoSuchInterface(name.to_string());
            let (ifindex, framing) = if name == "any" {
                (0, Framing::RawIp)
            } else {
                let c = CString::new(name).map_err(|_| no_such())?;
                if name.is_empty() || name.len() >= libc::IFNAMSIZ {
                    return Err(no_such());
                }
                // SAFETY: a NUL-terminated string.
                let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
                if index == 0 {
                    return Err(no_such());
                }
                (index, Framing::for_hardware(hardware_type(&c)?))
            };
            let kind = match framing {
                Framing::Ethernet => libc::SOCK_RAW,
                Framing::RawIp => libc::SOCK_DGRAM,
            };
            // Protocol 0: the socket receives nothing until it is bound below,
            // with the filter in place.
            // SAFETY: a plain system call; the descriptor is owned at once.
            let fd = unsafe {
                let raw = libc::socket(libc::AF_PACKET, kind | libc::SOCK_CLOEXEC, 0);
                if raw < 0 {
                    return Err(last_error("opening a packet socket"));
                }
                OwnedFd::from_raw_fd(raw)
            };
            let mut insns: Vec<libc::sock_filter> = filter_program(port)
                .iter()
                .map(|i| libc::sock_filter {
                    code: i.code,
                    jt: i.jt,
                    jf: i.jf,
                    k: i.k,
                })
                .collect();
            let prog = libc::sock_fprog {
                len: insns.len() as libc::c_ushort,
                filter: insns.as_mut_ptr(),
            };
            // A kernel that refuses the filter leaves the filtering to `wanted`.
            let _ = set_option(&fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog);
            let one: libc::c_int = 1;
            let _ = set_option(&fd, libc::SOL_SOCKET, libc::SO_TIMESTAMP, &one);
            let size = SOCKET_BUFFER as libc::c_int;
            if !set_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size) {
                let _ = set_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &size);
            }
            // SAFETY: `sockaddr_ll` is plain data; zeroed, then filled in.
            let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            addr.sll_family = libc::AF_PACKET as u16;
            addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
            addr.sll_ifindex = ifindex as i32;
            // SAFETY: `addr` is a live sockaddr_ll of the size given.
            let bound = unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    (&addr as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                )
            };
            if bound < 0 {
                let e = io::Error::last_os_error();
                return Err(match e.raw_os_error() {
                    Some(libc::ENODEV) => no_such(),
                    Some(libc::EPERM) | Some(libc::EACCES) => OpenError::Permission,
                    _ => OpenError::Io("binding to the interface", e),
                });
            }
            let mut cap = LiveCapture {
                fd,
                framing,
                port,
                buf: vec![0; MAX_PACKET],
                dropped: 0,
            };
            // Counts from before the bind are not this capture's.
            cap.dropped();
            cap.dropped = 0;
            Ok(cap)
        }

        pub fn framing(&self) -> Framing {
            self.framing
        }

        /// The next packet taken, waiting at most `wait` for one: `None`
        /// when none came (or a signal interrupted the wait).
        pub fn next(&mut self, wait: Duration) -> io::Result<Option<LivePacket<'_>>> {
            let mut waited = false;
            loop {
                let Some((micros, len, original, pkttype, hatype, protocol)) = self.receive()?
                else {
                    if waited || wait.is_zero() {
                        return Ok(None);
                    }
                    waited = true;
                    let mut p = libc::pollfd {
                        fd: self.fd.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    let ms = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
                    // SAFETY: one live pollfd.
                    if unsafe { libc::poll(&mut p, 1, ms) } < 0 {
                        let e = io::Error::last_os_error();
                        if e.kind() == io::ErrorKind::Interrupted {
                            return Ok(None);
                        }
                        return Err(e);
                    }
                    continue;
                };
                if !keep(pkttype, hatype) {
                    continue;
                }
                if self.framing == Framing::RawIp
                    && !matches!(protocol, ETHERTYPE_IPV4 | ETHERTYPE_IPV6)
                {
                    continue;
                }
                if !wanted(self.framing, &self.buf[..len], self.port) {
                    continue;
                }
                return Ok(Some(LivePacket {
                    micros,
                    data: &self.buf[..len],
                    original,
                }));
            }
        }

        /// One packet from the socket without waiting: its time, the length
        /// kept, its length, `sll_pkttype`, `sll_hatype` and its protocol.
        #[allow(clippy::type_complexity)]
        fn receive(&mut self) -> io::Result<Option<(u64, usize, usize, u8, u16, u16)>> {
            // SAFETY: `sockaddr_ll` is plain data.
            let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            // Room for one control message of a timeval, aligned for cmsghdr.
            let mut control = [0u64; 8];
            let mut iov = libc::iovec {
                iov_base: self.buf.as_mut_ptr().cast(),
                iov_len: self.buf.len(),
            };
            // SAFETY: `msghdr` is plain data; every pointer set below stays live for the call.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = (&mut addr as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            // MSG_TRUNC: the length on the wire, even when the buffer held less.
            // SAFETY: `msg` describes live buffers of the lengths given.
            let n = unsafe {
                libc::recvmsg(
                    self.fd.as_raw_fd(),
                    &mut msg,
                    libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                    _ => Err(e),
                };
            }
            let original = n as usize;
            let len = original.min(self.buf.len());
            let mut micros = None;
            // SAFETY: the control buffer as the kernel filled it, walked with
            // the CMSG macros, which stay within msg_controllen.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMP
                    {
                        let tv: libc::timeval = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                        micros = Some(
                            (tv.tv_sec as u64)
                                .saturating_mul(1_000_000)
                                .saturating_add(tv.tv_usec as u64),
                        );
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            let micros = micros.unwrap_or_else(super::super::recorder::now_micros);
            Ok(Some((
                micros,
                len,
                original,
                addr.sll_pkttype,
                addr.sll_hatype,
                u16::from_be(addr.sll_protocol),
            )))
        }

        /// Packets the kernel dropped since the capture began (its queue was full).
        pub fn dropped(&mut self) -> u64 {
            // SAFETY: `tpacket_stats` is plain data of the length given.
            let mut stats: libc::tpacket_stats = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
            let ok = unsafe {
                libc::getsockopt(
                    self.fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    libc::PACKET_STATISTICS,
                    (&mut stats as *mut libc::tpacket_stats).cast(),
                    &mut len,
                )
            } == 0;
            if ok {
                self.dropped += u64::from(stats.tp_drops);
            }
            self.dropped
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod other {
    use super::*;

    /// Live capture is not available here: [`LiveCapture::open`] says so.
    pub struct LiveCapture {
        framing: Framing,
    }

    impl LiveCapture {
        pub fn open(_name: &str, _port: Option<u16>) -> Result<LiveCapture, OpenError> {
            Err(OpenError::Unsupported)
        }

        pub fn framing(&self) -> Framing {
            self.framing
        }

        pub fn next(&mut self, _wait: Duration) -> io::Result<Option<LivePacket<'_>>> {
            Ok(None)
        }

        pub fn dropped(&mut self) -> u64 {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::synth::PcapngWriter;

    /// `sll_pkttype`: addressed to this host.
    const PACKET_HOST: u8 = 0;

    /// An Ethernet frame (zero MACs, as loopback gives) around an IPv4 TCP segment.
    fn ethernet_v4(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        f.extend_from_slice(&ipv4(6, 0x4000, src_port, dst_port, payload));
        f
    }

    /// An IPv4 packet of `proto` with flags and fragment offset `frag`, and a TCP header (options-free) or UDP-sized stub.
    fn ipv4(proto: u8, frag: u16, src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
        let total = (20 + 20 + payload.len()) as u16;
        let mut p = vec![0x45, 0];
        p.extend_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&[0, 1]);
        p.extend_from_slice(&frag.to_be_bytes());
        p.extend_from_slice(&[64, proto, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1]);
        p.extend_from_slice(&tcp(src_port, dst_port));
        p.extend_from_slice(payload);
        p
    }

    fn tcp(src_port: u16, dst_port: u16) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend_from_slice(&src_port.to_be_bytes());
        t.extend_from_slice(&dst_port.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        t
    }

    fn ipv6(next: u8, src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0];
        p.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
        p.extend_from_slice(&[next, 64]);
        p.extend_from_slice(&[0; 15]);
        p.push(1);
        p.extend_from_slice(&[0; 15]);
        p.push(1);
        p.extend_from_slice(&tcp(src_port, dst_port));
        p.extend_from_slice(payload);
        p
    }

    /// Runs a classic BPF program as the kernel does for the instructions
    /// [`filter_program`] uses: `protocol` is the packet's Ethertype, `net`
    /// where its network header starts in `data`. The result is what the
    /// kernel keeps of the packet (0: dropped).
    fn run_bpf(prog: &[BpfInsn], data: &[u8], net: usize, protocol: u16) -> u32 {
        let load = |k: u32, size: usize| -> Option<u32> {
            let at = if k == AD_PROTOCOL {
                return Some(u32::from(protocol));
            } else if (NET..AD_PROTOCOL).contains(&k) {
                net + (k - NET) as usize
            } else {
                k as usize
            };
            let b = data.get(at..at + size)?;
            Some(b.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x)))
        };
        let (mut a, mut x, mut pc) = (0u32, 0u32, 0usize);
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => {
                    a = match load(i.k, 4) {
                        Some(v) => v,
                        None => return 0,
                    }
                }
                LD_H_ABS => {
                    a = match load(i.k, 2) {
                        Some(v) => v,
                        None => return 0,
                    }
                }
                LD_B_ABS => {
                    a = match load(i.k, 1) {
                        Some(v) => v,
                        None => return 0,
                    }
                }
                LD_H_IND => {
                    a = match load(i.k.wrapping_add(x), 2) {
                        Some(v) => v,
                        None => return 0,
                    }
                }
                LDX_B_MSH => {
                    x = match load(i.k, 1) {
                        Some(v) => (v & 0xf) * 4,
                        None => return 0,
                    }
                }
                JEQ_K => pc += usize::from(if a == i.k { i.jt } else { i.jf }),
                JSET_K => pc += usize::from(if a & i.k != 0 { i.jt } else { i.jf }),
                RET_K => return i.k,
                other => panic!("opcode {other:#x} is not interpreted here"),
            }
        }
    }

    /// Both framings of one IP packet through the program and through `wanted`: they must agree.
    fn verdicts(ip: &[u8], protocol: u16, port: Option<u16>) -> (bool, bool) {
        let prog = filter_program(port);
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&protocol.to_be_bytes());
        eth.extend_from_slice(ip);
        let kernel_eth = run_bpf(&prog, &eth, 14, protocol) != 0;
        let kernel_raw = run_bpf(&prog, ip, 0, protocol) != 0;
        assert_eq!(
            kernel_eth, kernel_raw,
            "the program reads the network header wherever it starts"
        );
        let user_eth = wanted(Framing::Ethernet, &eth, port);
        let user_raw = wanted(Framing::RawIp, ip, port);
        assert_eq!(user_eth, user_raw);
        (kernel_eth, user_eth)
    }

    #[test]
    fn the_kernel_filter_and_the_userspace_test_take_the_same_packets() {
        let body = b"\x00\x00\x00\x04abcd";
        // TCP on the port, either way; another port; no port asked.
        assert_eq!(
            verdicts(
                &ipv4(6, 0x4000, 50000, 9092, body),
                ETHERTYPE_IPV4,
                Some(9092)
            ),
            (true, true)
        );
        assert_eq!(
            verdicts(&ipv4(6, 0, 9092, 50000, body), ETHERTYPE_IPV4, Some(9092)),
            (true, true)
        );
        assert_eq!(
            verdicts(&ipv4(6, 0, 50000, 9093, body), ETHERTYPE_IPV4, Some(9092)),
            (false, false)
        );
        assert_eq!(
            verdicts(&ipv4(6, 0, 50000, 9093, body), ETHERTYPE_IPV4, None),
            (true, true)
        );
        // UDP with the port's number; a later fragment.
        assert_eq!(
            verdicts(&ipv4(17, 0, 50000, 9092, body), ETHERTYPE_IPV4, Some(9092)),
            (false, false)
        );
        assert_eq!(
            verdicts(
                &ipv4(6, 0x0010, 50000, 9092, body),
                ETHERTYPE_IPV4,
                Some(9092)
            ),
            (false, false)
        );
        assert_eq!(
            verdicts(&ipv4(6, 0x0010, 50000, 9092, body), ETHERTYPE_IPV4, None),
            (false, false)
        );
        assert_eq!(
            verdicts(
                &ipv4(6, 0x2000, 50000, 9092, body),
                ETHERTYPE_IPV4,
                Some(9092)
            ),
            (false, false),
            "a first fragment"
        );
        // IPv4 with options: the ports are after them.
        let mut opts = ipv4(6, 0, 50000, 9092, body);
        opts[0] = 0x46;
        opts.splice(20..20, [1, 1, 1, 0]);
        let total = opts.len() as u16;
        opts[2..4].copy_from_slice(&total.to_be_bytes());
        assert_eq!(verdicts(&opts, ETHERTYPE_IPV4, Some(9092)), (true, true));
        assert_eq!(verdicts(&opts, ETHERTYPE_IPV4, Some(50001)), (false, false));
        // IPv6 TCP, either port; UDP; not IP at all.
        assert_eq!(
            verdicts(&ipv6(6, 9092, 50000, body), ETHERTYPE_IPV6, Some(9092)),
            (true, true)
        );
        assert_eq!(
            verdicts(&ipv6(6, 50000, 9092, body), ETHERTYPE_IPV6, Some(9092)),
            (true, true)
        );
        assert_eq!(
            verdicts(&ipv6(6, 50000, 9093, body), ETHERTYPE_IPV6, Some(9092)),
            (false, false)
        );
        assert_eq!(
            verdicts(&ipv6(6, 50000, 9093, body), ETHERTYPE_IPV6, None),
            (true, true)
        );
        assert_eq!(
            verdicts(&ipv6(17, 50000, 9092, body), ETHERTYPE_IPV6, Some(9092)),
            (false, false)
        );
        assert_eq!(
            verdicts(&[0, 1, 8, 0, 6, 4, 0, 1], 0x0806, Some(9092)),
            (false, false)
        );
        assert_eq!(
            verdicts(&[0, 1, 8, 0, 6, 4, 0, 1], 0x0806, None),
            (false, false)
        );
        // Cut short anywhere: nothing is read out of bounds, and nothing cut before the ports passes.
        let whole = ethernet_v4(50000, 9092, body);
        for cut in 0..whole.len() {
            let prog = filter_program(Some(9092));
            let kept = run_bpf(&prog, &whole[..cut], 14, ETHERTYPE_IPV4) != 0;
            assert!(!kept || cut >= 14 + 20 + 4, "cut at {cut}");
            let _ = wanted(Framing::Ethernet, &whole[..cut], Some(9092));
        }
    }

    #[test]
    fn loopback_packets_are_taken_once_and_other_devices_keep_what_they_send() {
        // Loopback: sent and received copies of one packet; only the received one.
        assert!(!keep(PACKET_OUTGOING, ARPHRD_LOOPBACK));
        assert!(keep(PACKET_HOST, ARPHRD_LOOPBACK));
        // Ethernet: what this host sends is seen only as sent.
        assert!(keep(PACKET_OUTGOING, ARPHRD_ETHER));
        assert!(keep(PACKET_HOST, ARPHRD_ETHER));
        assert!(keep(3, ARPHRD_ETHER), "promiscuous traffic to other hosts");
        assert!(keep(PACKET_OUTGOING, 0xfffe), "tun devices");
    }

    #[test]
    fn devices_get_the_framing_and_link_type_their_frames_have() {
        assert_eq!(Framing::for_hardware(ARPHRD_LOOPBACK), Framing::Ethernet);
        assert_eq!(Framing::for_hardware(ARPHRD_ETHER), Framing::Ethernet);
        assert_eq!(Framing::for_hardware(0xfffe), Framing::RawIp);
        assert_eq!(Framing::for_hardware(512), Framing::RawIp, "ppp");
        assert_eq!(Framing::Ethernet.link_type(), 1);
        assert_eq!(Framing::RawIp.link_type(), 101);
        // A loopback frame (zero MACs) parses as Ethernet down to its segment.
        let f = ethernet_v4(50000, 9092, b"hello");
        let seg = tcp_segment(Framing::Ethernet.link_type(), &f).unwrap();
        assert_eq!(
            (seg.src_port, seg.dst_port, seg.payload),
            (50000, 9092, &b"hello"[..])
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_abi_values_are_linux_own() {
        assert_eq!(PACKET_OUTGOING, libc::PACKET_OUTGOING);
        assert_eq!(PACKET_HOST, libc::PACKET_HOST);
        assert_eq!(ARPHRD_ETHER, libc::ARPHRD_ETHER);
        assert_eq!(ARPHRD_LOOPBACK, libc::ARPHRD_LOOPBACK);
        assert_eq!(NET, libc::SKF_NET_OFF as u32);
        assert_eq!(
            AD_PROTOCOL,
            (libc::SKF_AD_OFF + libc::SKF_AD_PROTOCOL) as u32
        );
        assert_eq!(
            LDX_B_MSH,
            (libc::BPF_LDX | libc::BPF_B | libc::BPF_MSH) as u16
        );
        assert_eq!(
            LD_H_IND,
            (libc::BPF_LD | libc::BPF_H | libc::BPF_IND) as u16
        );
        assert_eq!(
            JSET_K,
            (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16
        );
    }

    #[test]
    fn written_packets_read_back_with_their_link_type_and_lengths() {
        let mut out = Vec::new();
        {
            let mut w = PcapngWriter::new(&mut out, Framing::Ethernet.link_type()).unwrap();
            w.packet(1_700_000_000_250_000, &ethernet_v4(50000, 9092, b"abc"))
                .unwrap();
            w.packet_cut(1_700_000_000_500_000, &[0u8; 10], 70_000)
                .unwrap();
        }
        let mut r = crate::capture::pcap::Reader::new(&out[..]).unwrap();
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!((p.link_type, p.timestamp), (1, 1_700_000_000.25));
        assert!(tcp_segment(p.link_type, &p.data).is_some());
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.data.len(), 10);
        assert!(r.next_packet().unwrap().is_none());
        // The second packet's original length is on record.
        let epb2 = out.len() - (12 + 20 + 12);
        assert_eq!(
            u32::from_le_bytes(out[epb2 + 24..epb2 + 28].try_into().unwrap()),
            70_000
        );
    }
}
