//! Test support for the end-to-end tests against a real broker
//! (tests/proxy_e2e.rs, tests/faults_e2e.rs, tests/replay_e2e.rs): tansu on a
//! free port, `kwire proxy` in front of it, the Python clients of
//! scripts/e2e-clients, and what they print, collected as it comes.

use kwire::decode::{decode_frame, DecodeOptions, Direction};
use kwire::schema::Catalogue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const KWIRE: &str = env!("CARGO_BIN_EXE_kwire");

pub const TANSU: super::Tool = super::Tool {
    names: &["tansu"],
    package:
        "tansu (cargo install tansu --version 0.6.0 --no-default-features --features dynostore)",
};

/// One test at a time: each runs a broker, a proxy and clients on 2 cores,
/// and the proxy opens listeners on ports above its own.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// tansu, python3 and its Kafka clients, or a failure that says how to get them.
pub fn require_all(test: &str) {
    super::require_tools(test, &[TANSU, super::PYTHON3]);
    let clients = Command::new("python3")
        .args(["-c", "import kafka, confluent_kafka"])
        .output()
        .unwrap();
    if !clients.status.success() {
        let why = if std::env::var("CI").is_ok_and(|v| v == "true") {
            "which this CI machine lacks: .ci/run installs them"
        } else {
            "which are not installed"
        };
        panic!("{test} needs the Python clients kafka-python and confluent-kafka, {why} (python3 -m pip install kafka-python confluent-kafka)\n{}", String::from_utf8_lossy(&clients.stderr));
    }
}

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kwire-proxy-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn signal(child: &Child, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status();
}

/// Wait for `child` to end, at most `limit`.
pub fn wait_for(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// A tansu broker on a free port with in-memory storage, killed when dropped.
pub struct Tansu {
    pub child: Child,
    pub port: u16,
}

impl Tansu {
    /// `advertised_host` is the host the broker names itself by in its responses.
    pub fn start(dir: &Path, advertised_host: &str) -> Tansu {
        let log = dir.join("tansu.log");
        for _ in 0..5 {
            let port = free_port();
            let child = Command::new("tansu")
                .args([
                    "broker",
                    "--listener-url",
                    &format!("tcp://127.0.0.1:{port}"),
                ])
                .args([
                    "--advertised-listener-url",
                    &format!("tcp://{advertised_host}:{port}"),
                ])
                .args(["--storage-engine", "memory://tansu/"])
                .stdout(std::fs::File::create(&log).unwrap())
                .stderr(std::fs::File::create(dir.join("tansu.err")).unwrap())
                .spawn()
                .expect("tansu starts");
            let mut t = Tansu { child, port };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(15) {
                if t.child.try_wait().unwrap().is_some() {
                    break; // the port was taken meanwhile: tansu gave up
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    // Ours, not another program's: tansu is still running a moment later.
                    std::thread::sleep(Duration::from_millis(200));
                    if t.child.try_wait().unwrap().is_none() {
                        return t;
                    }
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            t.kill();
        }
        panic!(
            "tansu did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Collects what a child writes to one of its pipes, as it comes.
#[derive(Clone, Default)]
pub struct Collected(Arc<Mutex<Vec<u8>>>);

impl Collected {
    pub fn from(mut r: impl Read + Send + 'static) -> Collected {
        let c = Collected::default();
        let into = c.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.0.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        c
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// Wait until `pred` holds for the text so far, at most `limit`.
    pub fn wait_until(&self, limit: Duration, pred: impl Fn(&str) -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if pred(&self.text()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        pred(&self.text())
    }
}

/// `kwire proxy` in front of a broker, stopped with SIGINT.
pub struct Proxy {
    pub child: Child,
    pub port: u16,
    pub stdout: Collected,
    pub stderr: Collected,
}

impl Proxy {
    pub fn start(broker: &str, extra: &[&str]) -> Proxy {
        for _ in 0..5 {
            let port = free_port();
            let listen = format!("127.0.0.1:{port}");
            let mut args = vec!["proxy", "--listen", &listen, "--broker", broker];
            args.extend_from_slice(extra);
            let mut child = spawn_kwire(&args);
            let stdout = Collected::from(child.stdout.take().unwrap());
            let stderr = Collected::from(child.stderr.take().unwrap());
            let listening = format!("127.0.0.1:{port} forwards to {broker}");
            if stderr.wait_until(Duration::from_secs(10), |t| t.contains(&listening)) {
                return Proxy {
                    child,
                    port,
                    stdout,
                    stderr,
                };
            }
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("the proxy did not start on port {port}: {}", stderr.text());
        }
        panic!("kwire proxy did not start");
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The local addresses the proxy listens on (what it said on stderr), and the broker each forwards to.
    pub fn listeners(&self) -> BTreeMap<String, String> {
        self.stderr
            .text()
            .lines()
            .filter_map(|l| {
                l.strip_prefix("kwire: proxy: ")?
                    .split_once(" forwards to ")
            })
            .map(|(local, broker)| (local.to_string(), broker.to_string()))
            .collect()
    }

    /// SIGINT, then its exit status, standard output and standard error.
    pub fn stop(mut self) -> (ExitStatus, String, String) {
        signal(&self.child, "-INT");
        let status = wait_for(&mut self.child, Duration::from_secs(10)).unwrap_or_else(|| {
            let _ = self.child.kill();
            panic!(
                "the proxy did not exit within 10 s of SIGINT: {}",
                self.stderr.text()
            )
        });
        // The pipes' readers finish with the process.
        std::thread::sleep(Duration::from_millis(100));
        (status, self.stdout.text(), self.stderr.text())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn kwire(args: &[&str]) -> Output {
    Command::new(KWIRE)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// kwire started with these arguments, its output piped for the test to read.
pub fn spawn_kwire<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Child {
    Command::new(KWIRE)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub fn python(script: &str, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new("python3")
        .arg(repo().join("scripts/e2e-clients").join(script))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, err) = (
        Collected::from(child.stdout.take().unwrap()),
        Collected::from(child.stderr.take().unwrap()),
    );
    let Some(status) = wait_for(&mut child, limit) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{script} did not finish within {limit:?}\n{}\n{}",
            out.text(),
            err.text()
        );
    };
    std::thread::sleep(Duration::from_millis(50));
    Output {
        status,
        stdout: out.text().into_bytes(),
        stderr: err.text().into_bytes(),
    }
}

/// The proxy's `--format json` output: one object per line, each parsed.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {l}", i + 1))
        })
        .collect()
}

/// Every `ErrorCode` in `v`, at any depth.
pub fn error_codes(v: &Value, out: &mut Vec<i64>) {
    match v {
        Value::Object(o) => {
            out.extend(o.get("ErrorCode").and_then(Value::as_i64));
            o.values().for_each(|c| error_codes(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| error_codes(c, out)),
        _ => {}
    }
}

pub fn responses_of(frames: &[Value], api_key: i64) -> Vec<&Value> {
    frames
        .iter()
        .filter(|f| f["kind"] == "response" && f["api_key"] == api_key)
        .collect()
}

pub fn requests_of(frames: &[Value], api_key: i64) -> Vec<&Value> {
    frames
        .iter()
        .filter(|f| f["kind"] == "request" && f["api_key"] == api_key)
        .collect()
}

/// Deterministic messages: keys and values of many lengths and bytes (a few null keys, an empty value).
pub fn messages(n: usize) -> Vec<(Option<Vec<u8>>, Vec<u8>)> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|i| {
            let key = (i % 97 != 0).then(|| format!("key-{i}").into_bytes());
            let len = if i == 500 { 0 } else { (next() % 300) as usize };
            // Half text that compresses, half arbitrary bytes.
            let value = (0..len)
                .map(|j| {
                    if j % 2 == 0 {
                        b"widget"[j / 2 % 6]
                    } else {
                        next() as u8
                    }
                })
                .collect();
            (key, value)
        })
        .collect()
}

pub fn hex_or_null(b: Option<&[u8]>) -> Value {
    b.map_or(Value::Null, |b| Value::from(hex::encode(b)))
}

/// Writes `sent` as produce_consume.py reads its MESSAGES: one
/// `{"key", "value"}` object a line, hex (a null key as null).
pub fn write_messages(path: &Path, sent: &[(Option<Vec<u8>>, Vec<u8>)]) {
    let mut file = String::new();
    for (k, v) in sent {
        file += &format!(
            "{}\n",
            serde_json::json!({"key": hex_or_null(k.as_deref()), "value": hex::encode(v)})
        );
    }
    std::fs::write(path, file).unwrap();
}

/// What produce_consume.py wrote to OUT (`got`) is `sent`, each message
/// once, unchanged, in order, at offsets 0.. of partition 0; `context` (what
/// the client and the proxy said) goes with a failure.
pub fn assert_consumed_in_order(got: &Path, sent: &[(Option<Vec<u8>>, Vec<u8>)], context: &str) {
    let got = json_lines(&std::fs::read_to_string(got).unwrap_or_default());
    assert_eq!(
        got.len(),
        sent.len(),
        "messages consumed, against messages produced\n{context}"
    );
    for (i, (m, (k, v))) in got.iter().zip(sent).enumerate() {
        assert_eq!(m["key"], hex_or_null(k.as_deref()), "message {i}");
        assert_eq!(m["value"], Value::from(hex::encode(v)), "message {i}");
        assert_eq!(
            (m["partition"].as_i64(), m["offset"].as_i64()),
            (Some(0), Some(i as i64)),
            "message {i}"
        );
    }
}

/// Every message produced was consumed exactly once, in whatever order
/// (a client retrying after an error may reorder), at offsets 0..n of partition 0.
pub fn assert_consumed_exactly_once(
    got: &Path,
    sent: &[(Option<Vec<u8>>, Vec<u8>)],
    context: &str,
) {
    let got = json_lines(&std::fs::read_to_string(got).unwrap_or_default());
    let mut seen: Vec<(Value, Value)> = got
        .iter()
        .map(|m| (m["key"].clone(), m["value"].clone()))
        .collect();
    let mut want: Vec<(Value, Value)> = sent
        .iter()
        .map(|(k, v)| (hex_or_null(k.as_deref()), Value::from(hex::encode(v))))
        .collect();
    let text = |v: &[(Value, Value)]| v.iter().map(|(k, v)| format!("{k}{v}")).collect::<Vec<_>>();
    seen.sort_by_key(|p| format!("{}{}", p.0, p.1));
    want.sort_by_key(|p| format!("{}{}", p.0, p.1));
    assert_eq!(
        text(&seen),
        text(&want),
        "messages consumed, against messages produced\n{context}"
    );
    let offsets: Vec<Option<i64>> = got.iter().map(|m| m["offset"].as_i64()).collect();
    let expected: Vec<Option<i64>> = (0..got.len() as i64).map(Some).collect();
    assert_eq!(offsets, expected, "offsets in the partition\n{context}");
}

/// What a client printed, standard output then standard error.
pub fn said(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `kwire capture FILE --format json`: every frame of a capture, parsed; a
/// capture kwire cannot read fails the test.
pub fn capture_json(file: &Path) -> Vec<Value> {
    let read = kwire(&["capture", file.to_str().unwrap(), "--format", "json"]);
    assert!(
        read.status.success(),
        "kwire capture {} failed: {}",
        file.display(),
        said(&read)
    );
    json_lines(&String::from_utf8(read.stdout).unwrap())
}

/// One response read from `conn` and decoded as `api_key` v`version`, as
/// the JSON contract gives it; `None` when nothing comes within the
/// connection's read timeout. `what` names the connection in a failure.
pub fn read_response(
    conn: &mut TcpStream,
    api_key: i16,
    version: i16,
    what: &str,
) -> Option<Value> {
    let mut size = [0u8; 4];
    match conn.read_exact(&mut size) {
        Ok(()) => {}
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return None,
        Err(e) => panic!("{what}: {e}"),
    }
    let mut bytes = size.to_vec();
    bytes.resize(4 + i32::from_be_bytes(size) as usize, 0);
    conn.read_exact(&mut bytes[4..])
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(api_key),
        api_version: Some(version),
        values_only: true,
        ..Default::default()
    };
    let f = decode_frame(Catalogue::builtin(), bytes.into(), 0, &opts);
    assert!(f.error.is_none(), "{what}: {:?}", f.error);
    Some(kwire::render::json::frame_contract(&f))
}
