//! Test support: locating `../shared` (SKIP when absent, a failure under
//! CI=true), requiring the external tools of the end-to-end tests, and
//! decoding helpers.
#![allow(dead_code)]
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

use std::path::PathBuf;
use std::process::Command;

/// The shared reference folder beside the repository. Only CI needs it: when
/// it is absent the test prints SKIP with the reason and gets `None`, except
/// under `CI=true` (as `.ci/run` sets), where a checkout without it would
/// pass without comparing anything, so the test fails.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let path = dir.join(what);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is missing: under CI=true the tests compare with the reference data in ../shared, \
             the folder beside the repository; put it there",
            path.display()
        );
    }
    eprintln!(
        "SKIP: {} is absent, so this comparison with the reference data in ../shared did not run \
         (it runs, and must pass, under CI=true)",
        path.display()
    );
    None
}

/// A program an end-to-end test runs: the names it may have, and the Debian
/// package that installs it.
pub struct Tool {
    pub names: &'static [&'static str],
    pub package: &'static str,
}

pub const TMUX: Tool = Tool {
    names: &["tmux"],
    package: "tmux",
};
pub const CHROMIUM: Tool = Tool {
    names: &["chromium", "chromium-browser"],
    package: "chromium",
};
pub const NODE: Tool = Tool {
    names: &["node"],
    package: "nodejs",
};
pub const NPM: Tool = Tool {
    names: &["npm"],
    package: "npm",
};
pub const TSHARK: Tool = Tool {
    names: &["tshark"],
    package: "tshark",
};
pub const JAVA: Tool = Tool {
    names: &["java"],
    package: "openjdk-17-jre-headless",
};
pub const PYTHON3: Tool = Tool {
    names: &["python3"],
    package: "python3",
};

pub fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", "command -v \"$1\"", "sh", program])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Fails the test when a tool it needs is missing. These tests are
/// `#[ignore]`d, so a plain `cargo test` lists them as ignored; getting here
/// means someone asked for them (`--include-ignored`), and passing without
/// running would hide that nothing was checked.
pub fn require_tools(test: &str, tools: &[Tool]) {
    let missing: Vec<&Tool> = tools
        .iter()
        .filter(|t| !t.names.iter().any(|n| installed(n)))
        .collect();
    if missing.is_empty() {
        return;
    }
    let programs = missing
        .iter()
        .map(|t| t.names[0])
        .collect::<Vec<_>>()
        .join(", ");
    let packages = missing
        .iter()
        .map(|t| t.package)
        .collect::<Vec<_>>()
        .join(" ");
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs {programs}, which this CI machine lacks: .ci/run installs it (apt-get install -y {packages}) before running the tests");
    }
    panic!(
        "{test} needs {programs}, which is not installed. Install it (sudo apt-get install -y {packages}), \
         or run `bash .ci/run`, which installs what every end-to-end test needs and runs them. \
         A plain `cargo test` lists this test as ignored instead of running it."
    );
}

/// Read every file of a .tar.gz into memory: (path, contents).
pub fn read_tar_gz(path: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let f = std::fs::File::open(path).expect("open archive");
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut out = Vec::new();
    for e in ar.entries().expect("tar entries") {
        let mut e = e.expect("tar entry");
        if !e.header().entry_type().is_file() {
            continue;
        }
        let p = e.path().expect("path").to_string_lossy().to_string();
        let mut buf = Vec::new();
        e.read_to_end(&mut buf).expect("read entry");
        out.push((p, buf));
    }
    out
}
pub mod alloc;
pub mod batches;
pub mod broker;
pub mod contract;
pub mod exchanges;
pub mod pcap_writer;
pub mod random_body;
pub mod seed;

/// Every (direction, api key, version) that the catalogue decodes.
pub fn all_messages(cat: &kwire::schema::Catalogue) -> Vec<(kwire::decode::Direction, i16, i16)> {
    use kwire::decode::Direction;
    use kwire::schema::MessageKind;
    let mut out = Vec::new();
    for key in cat.api_keys() {
        for (d, kind) in [
            (Direction::Request, MessageKind::Request),
            (Direction::Response, MessageKind::Response),
        ] {
            for v in cat.versions(kind, key, None) {
                out.push((d, key, v));
            }
        }
    }
    out
}

/// The frame of one message of [`all_messages`], in the catalogue's newest definitions.
pub fn frame_spec(
    direction: kwire::decode::Direction,
    api_key: i16,
    version: i16,
) -> kwire::encode::FrameSpec<'static> {
    kwire::encode::FrameSpec {
        direction,
        api_key,
        version,
        release: None,
    }
}

/// A Metadata v12 response of `topics` topics of `partitions` partitions
/// each, three replicas a partition: what a large cluster answers.
pub fn metadata_response(topics: usize, partitions: usize) -> Vec<u8> {
    use kwire::decode::Direction;
    use kwire::encode::{encode_frame, example_header};
    use serde_json::{json, Value};
    let cat = kwire::schema::Catalogue::builtin();
    let topics: Vec<Value> = (0..topics)
        .map(|t| {
            let partitions: Vec<Value> = (0..partitions)
                .map(|p| {
                    let replicas = json!([p % 12, (p + 1) % 12, (p + 2) % 12]);
                    json!({"ErrorCode": 0, "PartitionIndex": p, "LeaderId": p % 12,
                           "LeaderEpoch": 7, "ReplicaNodes": replicas, "IsrNodes": replicas,
                           "OfflineReplicas": []})
                })
                .collect();
            json!({"ErrorCode": 0, "Name": format!("orders-{t:04}"),
                   "TopicId": format!("5b3c1f0e-0000-4000-8000-{t:012}"), "IsInternal": false,
                   "Partitions": partitions, "TopicAuthorizedOperations": -2147483648i64})
        })
        .collect();
    let brokers: Vec<Value> = (0..12)
        .map(|i| json!({"NodeId": i, "Host": format!("broker-{i}.example"), "Port": 9092, "Rack": null}))
        .collect();
    let body = json!({"ThrottleTimeMs": 0, "Brokers": brokers, "ClusterId": "abc",
                      "ControllerId": 1, "Topics": topics});
    let Value::Object(body): Value = body else {
        unreachable!()
    };
    let fs = frame_spec(Direction::Response, 3, 12);
    encode_frame(cat, &fs, &example_header(Direction::Response), &body).unwrap()
}

/// `kwire ARGS` with `stdin` on its standard input (no `KWIRE_DEFS`, no colour).
pub fn kwire_with_stdin(args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env_remove("KWIRE_DEFS")
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command may exit before reading all of its input: that is its answer.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// Whether a `capture --list` line is a connection's open or close (SYN,
/// FIN, RST) or the line naming its addresses (`conn 3 = a → b`), rather
/// than a frame or a note.
pub fn is_conn_event(line: &str) -> bool {
    matches!(line.split_whitespace().next(), Some("SYN" | "FIN" | "RST")) || is_conn_name(line)
}

/// Whether a `capture --list` line names a connection: `conn 3 = a → b`.
pub fn is_conn_name(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("conn")
        && words.next().is_some_and(|n| n.parse::<usize>().is_ok())
        && words.next() == Some("=")
}

/// The lines of a listing that are not connection opens and closes.
pub fn frame_rows(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !is_conn_event(l)).collect()
}

/// A captured frame decoded into its tree, as the request it answers said.
pub fn decode_captured(f: &kwire::capture::CapturedFrame) -> kwire::decode::Frame {
    let opts = kwire::decode::DecodeOptions {
        direction: Some(f.direction),
        api_key: f.api_key,
        api_version: f.api_version,
        ..Default::default()
    };
    kwire::decode::decode_frame(
        kwire::schema::Catalogue::builtin(),
        f.bytes.clone(),
        0,
        &opts,
    )
}
