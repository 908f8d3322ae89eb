//! Captures read as they arrive: a pcap on standard input is decoded frame by
//! frame while it is still being written (`tcpdump -U -w - | kwire capture -`),
//! and `kwire capture -i lo` decodes a Kafka exchange made on loopback while
//! it happens, stopping at SIGINT. The live tests need raw sockets (root or
//! CAP_NET_RAW): they are ignored in a plain `cargo test`, and fail when
//! asked to run without the capability.
#![cfg(target_os = "linux")]

mod common;

use common::exchanges::{frame, Timeline};
use kwire::decode::Direction;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn kwire(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env_remove("KWIRE_DEFS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The lines of a child's output as they come.
fn lines(r: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The next line, or a failure naming what was awaited.
fn next_line(rx: &Receiver<String>, what: &str) -> String {
    rx.recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("no line within {WAIT:?}: {what}"))
}

/// A listing line with its time (the second column) replaced by `T`, after
/// checking that it is a UTC date-time to the microsecond.
fn untimed(line: &str) -> String {
    // `    0 2023-…`: the frame number is right-aligned.
    let trimmed = line.trim_start();
    let pad = &line[..line.len() - trimmed.len()];
    let mut p = trimmed.splitn(3, ' ');
    let (n, t, rest) = (
        p.next().unwrap_or(""),
        p.next().unwrap_or(""),
        p.next().unwrap_or(""),
    );
    assert!(
        t.len() == 27 && t.ends_with('Z') && t.as_bytes()[10] == b'T',
        "a UTC time to the microsecond: {t:?} in {line:?}"
    );
    format!("{pad}{n} T {rest}")
}

fn api_versions_request(corr: i32) -> Vec<u8> {
    frame(
        Direction::Request,
        "ApiVersions",
        3,
        corr,
        "kwire-e2e",
        json!({"ClientSoftwareName": "kwire-e2e", "ClientSoftwareVersion": "1.0"}),
    )
}

fn api_versions_response(corr: i32) -> Vec<u8> {
    frame(
        Direction::Response,
        "ApiVersions",
        3,
        corr,
        "",
        json!({"ErrorCode": 0, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}], "ThrottleTimeMs": 0}),
    )
}

#[test]
fn standard_input_is_decoded_frame_by_frame_as_it_arrives() {
    let (request, response) = (api_versions_request(7), api_versions_response(7));
    let mut first = Timeline::default();
    first.send(50000, true, &request);
    let mut whole = Timeline::default();
    whole.send(50000, true, &request);
    whole.send(50000, false, &response);
    let (head, all) = (first.pcap(), whole.pcap());
    assert!(
        all.starts_with(&head),
        "the pcap of the request alone is a prefix of the whole"
    );
    // The first half ends inside the response's packet: its frame cannot be complete.
    let cut = head.len() + 40;
    for args in [
        &["capture", "-", "--list"][..],
        &["capture", "-", "--format", "json"][..],
    ] {
        let mut child = kwire(args);
        let out = lines(child.stdout.take().unwrap());
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&all[..cut]).unwrap();
        stdin.flush().unwrap();
        // The request's line comes while kwire still waits for the rest of its input.
        let what = format!(
            "the request's line of `kwire {}` before the rest of the capture is written",
            args.join(" ")
        );
        let mut line = next_line(&out, &what);
        if args.contains(&"--list") {
            // The connection's name and SYN come first, as soon as its first frame does.
            assert_eq!(line, "conn 0 = 10.0.0.1:50000 → 10.0.0.2:9092");
            line = next_line(&out, &what);
            assert!(line.trim_start().starts_with("SYN "), "{line}");
            assert!(line.ends_with("conn 0 → opened by the client"), "{line}");
            line = next_line(&out, &what);
        }
        if args.contains(&"--list") {
            assert_eq!(
                untimed(&line),
                format!(
                    "    0 T conn 0 → ApiVersions v3 corr=7 {}B client_id=\"kwire-e2e\"",
                    request.len()
                )
            );
        } else {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(
                (v["kind"].as_str(), v["header"]["CorrelationId"].as_i64()),
                (Some("request"), Some(7)),
                "{line}"
            );
        }
        assert!(
            out.recv_timeout(Duration::from_millis(300)).is_err(),
            "nothing more before the response is whole"
        );
        stdin.write_all(&all[cut..]).unwrap();
        drop(stdin);
        let line = next_line(&out, "the response's line");
        if args.contains(&"--list") {
            assert_eq!(
                untimed(&line),
                format!(
                    "    1 T conn 0 ← ApiVersions v3 corr=7 {}B 1.0 ms ok",
                    response.len()
                )
            );
        } else {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(
                (
                    v["kind"].as_str(),
                    v["body"]["ApiKeys"][0]["MaxVersion"].as_i64()
                ),
                (Some("response"), Some(3)),
                "{line}"
            );
        }
        assert!(child.wait().unwrap().success());
        assert!(out.recv().is_err(), "no more output");
    }
}

#[test]
fn an_unknown_interface_is_said_plainly() {
    let child = kwire(&["capture", "-i", "kwire-nosuch0", "--list"]);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no network interface is named \"kwire-nosuch0\""),
        "{err}"
    );
    // A file and an interface at once, or --write-pcap for a file, is a wrong command line.
    for args in [
        &["capture", "-i", "lo", "x.pcap"][..],
        &["capture", "x.pcap", "--write-pcap", "y.pcapng"][..],
    ] {
        let out = kwire(args).wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// Whether this process may open raw sockets (CAP_NET_RAW, bit 13 of the
/// effective set; root has it).
fn has_net_raw() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .map(str::trim)
        .and_then(|h| u64::from_str_radix(h, 16).ok());
    caps.is_some_and(|c| c & (1 << 13) != 0)
}

/// Fails the test without raw sockets: it is `#[ignore]`d, so getting here
/// means someone asked for it, and passing without capturing would hide that
/// nothing was checked.
fn require_net_raw(test: &str) {
    if has_net_raw() {
        return;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs root or CAP_NET_RAW (raw sockets), which this CI run lacks: run .ci/run as root");
    }
    panic!("{test} needs root or CAP_NET_RAW (raw sockets): run it as root (sudo -E cargo test --test live_capture -- --include-ignored), or run `bash .ci/run` as root");
}

/// `kwire capture -i lo --port P ARGS`, once it says it is capturing; and its stderr lines.
fn capture_on_lo(port: u16, args: &[&str]) -> (Running, Receiver<String>, Receiver<String>) {
    let p = port.to_string();
    let mut all = vec!["capture", "-i", "lo", "--port", &p];
    all.extend_from_slice(args);
    let mut child = kwire(&all);
    let out = lines(child.stdout.take().unwrap());
    let err = lines(child.stderr.take().unwrap());
    let ready = next_line(&err, "kwire saying it captures");
    let child = Running(child);
    assert_eq!(
        ready,
        format!("kwire: capturing on lo (Ethernet, TCP port {port}); Ctrl-C stops")
    );
    (child, out, err)
}

/// A capture that runs until it is interrupted; killed if a failing test leaves it running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A client and a broker on loopback: one ApiVersions exchange, then both
/// close. Gives the client's port.
fn exchange(listener: TcpListener) -> u16 {
    let port = listener.local_addr().unwrap().port();
    let broker = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut size = [0u8; 4];
        conn.read_exact(&mut size).unwrap();
        let mut rest = vec![0u8; i32::from_be_bytes(size) as usize];
        conn.read_exact(&mut rest).unwrap();
        let corr = i32::from_be_bytes(rest[4..8].try_into().unwrap());
        conn.write_all(&api_versions_response(corr)).unwrap();
    });
    let mut client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    client.write_all(&api_versions_request(7)).unwrap();
    let mut answer = vec![0u8; api_versions_response(7).len()];
    client.read_exact(&mut answer).unwrap();
    let client_port = client.local_addr().unwrap().port();
    drop(client);
    broker.join().unwrap();
    client_port
}

/// A broker's listener on loopback, on a port of its own (so the capture
/// takes no other test's traffic), and the port.
fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn interrupt(child: &Running) {
    // SAFETY: a signal to the child this test started.
    assert_eq!(
        unsafe { libc::kill(child.0.id() as libc::pid_t, libc::SIGINT) },
        0
    );
}

/// The child's exit status, or a failure (after killing it) when it does not stop.
fn wait_for(mut child: Running) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > WAIT {
            panic!("kwire did not stop within {WAIT:?} of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs root (raw sockets); bash .ci/run runs ignored tests as root"]
fn a_kafka_exchange_on_loopback_is_listed_as_it_happens() {
    require_net_raw("a_kafka_exchange_on_loopback_is_listed_as_it_happens");
    let (listener, port) = listener();
    let (child, out, err) = capture_on_lo(port, &["--list"]);
    let client_port = exchange(listener);
    // The connection's name and SYN, and both frames' lines, come while the
    // capture still runs.
    let name = next_line(&out, "the connection's name, live");
    assert_eq!(
        name,
        format!("conn 0 = 127.0.0.1:{client_port} → 127.0.0.1:{port}")
    );
    let syn = next_line(&out, "the connection's SYN, live");
    assert_eq!(untimed(&syn), "  SYN T conn 0 → opened by the client");
    let request = next_line(&out, "the request's line, live");
    let response = next_line(&out, "the response's line, live");
    assert_eq!(
        untimed(&request),
        format!(
            "    0 T conn 0 → ApiVersions v3 corr=7 {}B client_id=\"kwire-e2e\"",
            api_versions_request(7).len()
        )
    );
    // The response's latency, between its size and its summary, is the loopback's own.
    let response = untimed(&response);
    let head = format!(
        "    1 T conn 0 ← ApiVersions v3 corr=7 {}B ",
        api_versions_response(7).len()
    );
    let latency = response
        .strip_prefix(&head)
        .and_then(|rest| rest.strip_suffix(" ok"))
        .unwrap_or_else(|| panic!("not `{head}<latency> ok`: {response}"));
    assert!(
        latency.ends_with(" ms") || latency.ends_with(" µs") || latency.ends_with(" s"),
        "{response}"
    );
    interrupt(&child);
    let status = wait_for(child);
    // After the two frames, only the connection's close (the exchange hangs up).
    while let Ok(line) = out.recv_timeout(Duration::from_millis(500)) {
        assert!(
            line.trim_start().starts_with("FIN ") || line.trim_start().starts_with("RST "),
            "nothing but the close after the two frames: {line}"
        );
    }
    let err: Vec<String> = err.iter().collect();
    assert!(status.success(), "{status}: {err:?}");
    assert_eq!(
        err.first().map(String::as_str),
        Some("kwire: stopping the capture on lo"),
        "{err:?}"
    );
    let last = err.last().unwrap();
    assert!(
        last.starts_with("kwire: ")
            && last.ends_with(" packets captured on lo, 0 dropped by the kernel"),
        "{err:?}"
    );
}

#[test]
#[ignore = "needs root (raw sockets); bash .ci/run runs ignored tests as root"]
fn sigint_flushes_what_was_captured_in_every_sink() {
    require_net_raw("sigint_flushes_what_was_captured_in_every_sink");
    let pcap = std::env::temp_dir().join(format!("kwire-live-{}.pcapng", std::process::id()));
    let (listener, port) = listener();
    let (child, out, _err) = capture_on_lo(
        port,
        &["--format", "json", "--write-pcap", pcap.to_str().unwrap()],
    );
    let client_port = exchange(listener);
    // At once: what the kernel holds for the socket is still taken.
    interrupt(&child);
    let status = wait_for(child);
    let objects: Vec<serde_json::Value> = out
        .iter()
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    assert!(status.success(), "{status}");
    assert_eq!(objects.len(), 2, "{objects:?}");
    let conn = |v: &serde_json::Value| {
        (
            v["kind"].clone(),
            v["api_key"].clone(),
            v["header"]["CorrelationId"].clone(),
            v["capture"]["src"].clone(),
        )
    };
    assert_eq!(
        conn(&objects[0]),
        (
            json!("request"),
            json!(18),
            json!(7),
            json!(format!("127.0.0.1:{client_port}"))
        )
    );
    assert_eq!(
        conn(&objects[1]),
        (
            json!("response"),
            json!(18),
            json!(7),
            json!(format!("127.0.0.1:{port}"))
        )
    );
    // The pcapng: Ethernet frames, only the port's, each packet once (loopback
    // shows each twice, as sent and as received).
    let bytes = std::fs::read(&pcap).unwrap();
    let _ = std::fs::remove_file(&pcap);
    let mut reader = kwire::capture::pcap::Reader::new(&bytes[..]).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut payload = [0usize; 2];
    while let Some(p) = reader.next_packet().unwrap() {
        assert_eq!(p.link_type, 1, "loopback frames are written as Ethernet");
        let s = kwire::capture::link::tcp_segment(p.link_type, &p.data).expect("a TCP segment");
        assert!(
            s.src_port == port || s.dst_port == port,
            "only the broker's port: {s:?}"
        );
        let key = (s.src_port, s.seq, s.ack, s.syn, s.fin, s.payload.len());
        assert!(seen.insert(key), "a packet taken twice: {s:?}");
        payload[usize::from(s.src_port == port)] += s.payload.len();
    }
    assert_eq!(
        payload,
        [
            api_versions_request(7).len(),
            api_versions_response(7).len()
        ],
        "client and broker bytes, each once"
    );
}

#[test]
#[ignore = "needs root (raw sockets); bash .ci/run runs ignored tests as root"]
fn without_cap_net_raw_the_capability_is_named() {
    require_net_raw("without_cap_net_raw_the_capability_is_named");
    common::require_tools(
        "without_cap_net_raw_the_capability_is_named",
        &[common::Tool {
            names: &["setpriv"],
            package: "util-linux",
        }],
    );
    // kwire without CAP_NET_RAW: out of its bounding and inheritable sets.
    let out = Command::new("setpriv")
        .args([
            "--bounding-set=-net_raw",
            "--inh-caps=-net_raw",
            env!("CARGO_BIN_EXE_kwire"),
            "capture",
            "-i",
            "lo",
            "--list",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("needs the CAP_NET_RAW capability") && err.contains("run kwire as root"),
        "{err}"
    );
}
