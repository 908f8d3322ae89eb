//! Credentials never show without `--show-secrets`: SASL PLAIN, SCRAM and
//! OAUTHBEARER exchanges (SaslAuthenticate frames and v0 raw tokens),
//! AlterUserScramCredentials salts, in every output format of `decode` and
//! `capture`, in `report`'s page and `records`; with `--show-secrets` they
//! do. Redacted values keep their place and size, and JSON with redactions
//! says so and is refused by `encode`.

mod common;

use common::exchanges::{frame, TempCapture, Timeline};
use kwire::decode::Direction;
use serde_json::{json, Value};

const PORT: u16 = 50000;
const PASSWORD: &str = "s3cretPassw0rd";
const PROOF: &str = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
const SIGNATURE: &str = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
const BEARER: &str = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";
const SALTED: &str = "5a1t3dPa55w0rdBytes";

fn secrets() -> [&'static str; 5] {
    [PASSWORD, PROOF, SIGNATURE, BEARER, SALTED]
}

/// Every secret, as text and as hex, that `out` must not (or must) hold.
fn leaked(out: &str) -> Vec<String> {
    let mut found = Vec::new();
    for s in secrets() {
        if out.contains(s) {
            found.push(s.to_string());
        }
        let hex = hex::encode(s.as_bytes());
        if out.to_ascii_lowercase().contains(&hex) {
            found.push(format!("{s} as hex"));
        }
        // A grid or dump shows bytes 16 to a row: look for a run of 8 of them.
        let spaced: String = s.as_bytes()[..8]
            .iter()
            .map(|b| format!("{b:02x} "))
            .collect();
        if out.to_ascii_lowercase().contains(spaced.trim_end()) {
            found.push(format!("{s} as spaced hex"));
        }
    }
    found
}

fn authenticate(t: &mut Timeline, corr: i32, client: &[u8], server: &[u8]) {
    t.on(PORT, "c").pair(corr, "SaslAuthenticate", 2, json!({"AuthBytes": hex::encode(client)}), json!({"ErrorCode": 0, "ErrorMessage": null, "AuthBytes": hex::encode(server), "SessionLifetimeMs": 0}));
}

fn token(bytes: &[u8]) -> Vec<u8> {
    let mut t = (bytes.len() as i32).to_be_bytes().to_vec();
    t.extend_from_slice(bytes);
    t
}

/// PLAIN, SCRAM and OAUTHBEARER through SaslAuthenticate, SCRAM again as
/// v0 raw tokens on a second connection, and an AlterUserScramCredentials.
fn conversation() -> Timeline {
    let mut t = Timeline::default();
    let hs = |m: &str| {
        (
            json!({"Mechanism": m}),
            json!({"ErrorCode": 0, "Mechanisms": ["PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"]}),
        )
    };
    let (q, r) = hs("PLAIN");
    t.on(PORT, "c").pair(1, "SaslHandshake", 1, q, r);
    authenticate(&mut t, 2, format!("\0alice\0{PASSWORD}").as_bytes(), b"");
    authenticate(
        &mut t,
        3,
        b"n,,n=alice,r=rOprNGfwEbeRWgbNEkqO",
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDp,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    );
    authenticate(
        &mut t,
        4,
        format!("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDp,p={PROOF}").as_bytes(),
        format!("v={SIGNATURE}").as_bytes(),
    );
    authenticate(
        &mut t,
        5,
        format!("n,a=alice,\x01auth=Bearer {BEARER}\x01host=kafka\x01\x01").as_bytes(),
        b"",
    );
    let alter = json!({"Deletions": [], "Upsertions": [{"Name": "alice", "Mechanism": 1, "Iterations": 4096, "Salt": hex::encode("salt-bytes"), "SaltedPassword": hex::encode(SALTED)}]});
    t.on(PORT, "c").pair(6, "AlterUserScramCredentials", 0, alter, json!({"ThrottleTimeMs": 0, "Results": [{"User": "alice", "ErrorCode": 0, "ErrorMessage": null}]}));
    // SaslHandshake v0: raw tokens follow.
    let (q, r) = hs("SCRAM-SHA-256");
    t.on(PORT + 1, "c").pair(1, "SaslHandshake", 0, q, r);
    t.send(PORT + 1, true, &token(b"n,,n=alice,r=abc"));
    t.send(
        PORT + 1,
        false,
        &token(b"r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"),
    );
    t.send(
        PORT + 1,
        true,
        &token(format!("c=biws,r=abcdef,p={PROOF}").as_bytes()),
    );
    t.send(PORT + 1, false, &token(format!("v={SIGNATURE}").as_bytes()));
    t.on(PORT + 1, "c").pair(2, "Metadata", 12, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}), json!({"Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []}));
    t
}

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn no_secret_in_any_capture_format_without_show_secrets() {
    let cap = TempCapture::new("secrets", &conversation().pcap());
    let report =
        std::env::temp_dir().join(format!("kwire-secrets-report-{}.html", std::process::id()));
    let report = report.to_str().unwrap();
    let views: Vec<Vec<&str>> = vec![
        vec!["capture", cap.path()],
        vec!["capture", cap.path(), "--json"],
        vec!["capture", cap.path(), "--format", "tree-json"],
        vec!["capture", cap.path(), "--format", "grid"],
        vec!["capture", cap.path(), "--list"],
        vec!["check", cap.path()],
        vec!["stats", cap.path()],
    ];
    for args in &views {
        let (_, out) = run(args);
        assert!(
            leaked(&out).is_empty(),
            "{args:?} shows {:?}:\n{out}",
            leaked(&out)
        );
        let mut shown = args.clone();
        shown.push("--show-secrets");
        let (_, out) = run(&shown);
        let is_decoded =
            !args.contains(&"--list") && !args.contains(&"check") && !args.contains(&"stats");
        // A grid's rows may split a secret's bytes: one seen whole is enough there.
        let wanted = if args.contains(&"grid") {
            1
        } else {
            secrets().len()
        };
        if is_decoded {
            assert!(
                leaked(&out).len() >= wanted,
                "{shown:?} should show the secrets: {:?}",
                leaked(&out)
            );
        }
    }
    let (status, _) = run(&["report", cap.path(), "--out", report]);
    assert_eq!(status, Some(0));
    let html = std::fs::read_to_string(report).unwrap();
    let _ = std::fs::remove_file(report);
    assert!(leaked(&html).is_empty(), "report shows {:?}", leaked(&html));
}

/// A display filter tests what the views show: a test on a credential's
/// bytes cannot tell one secret from another (else it could be guessed a
/// character at a time), unless `--show-secrets`.
#[test]
fn a_filter_cannot_probe_a_credential() {
    let cap = TempCapture::new("secrets-probe", &conversation().pcap());
    let probes = [
        format!("AuthBytes contains \"{}\"", &PASSWORD[..6]),
        format!("SaltedPassword contains \"{}\"", &SALTED[..6]),
    ];
    for probe in &probes {
        let (status, out) = run(&["capture", cap.path(), "--list", "-Y", probe]);
        assert_eq!(status, Some(1), "{probe} selected frames:\n{out}");
        assert!(out.contains("no frame matches"), "{out}");
        let (status, out) = run(&[
            "capture",
            cap.path(),
            "--list",
            "-Y",
            probe,
            "--show-secrets",
        ]);
        assert_eq!(status, Some(0), "{probe} with --show-secrets:\n{out}");
    }
    // What is not a credential still matches: the PLAIN user name.
    let (status, _) = run(&[
        "capture",
        cap.path(),
        "--list",
        "-Y",
        "AuthBytes contains \"alice\"",
    ]);
    assert_eq!(status, Some(0));
}

/// A SaslAuthenticate of a version no definition describes cannot be read
/// for its credential: its bytes are masked from where reading stopped, in
/// the grid and in a written pcap, as the tree masks them.
#[test]
fn an_authenticate_of_an_unknown_version_is_masked() {
    let mut t = Timeline::default();
    let mut request = common::exchanges::frame(
        kwire::decode::Direction::Request,
        "SaslAuthenticate",
        2,
        2,
        "c",
        json!({"AuthBytes": hex::encode(format!("\0alice\0{PASSWORD}"))}),
    );
    request[6..8].copy_from_slice(&99i16.to_be_bytes());
    t.on(PORT, "c").pair(
        1,
        "SaslHandshake",
        1,
        json!({"Mechanism": "PLAIN"}),
        json!({"ErrorCode": 0, "Mechanisms": ["PLAIN"]}),
    );
    t.send(PORT, true, &request);
    let cap = TempCapture::new("secrets-unknown-version", &t.pcap());
    let (_, grid) = run(&["capture", cap.path(), "--format", "grid"]);
    assert!(leaked(&grid).is_empty(), "{:?}:\n{grid}", leaked(&grid));
    let (_, shown) = run(&["capture", cap.path(), "--format", "grid", "--show-secrets"]);
    assert!(
        !leaked(&shown).is_empty(),
        "--show-secrets shows it:\n{shown}"
    );
    let written = std::env::temp_dir().join(format!(
        "kwire-unknown-version-{}.pcapng",
        std::process::id()
    ));
    let (_, said) = run(&[
        "capture",
        cap.path(),
        "--list",
        "--write-selected",
        written.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(&written).unwrap();
    let _ = std::fs::remove_file(&written);
    assert!(said.contains("credentials masked in 1 frame"), "{said}");
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        leaked(&text).is_empty(),
        "the written pcap holds {:?}",
        leaked(&text)
    );
}

#[test]
fn redacted_values_keep_their_place_and_size() {
    let cap = TempCapture::new("secrets-tree", &conversation().pcap());
    let (_, tree) = run(&["capture", cap.path()]);
    let line = tree
        .lines()
        .find(|l| l.contains("password string"))
        .expect("the password's line");
    assert!(
        line.contains(&format!("\"<redacted, {} bytes>\"", PASSWORD.len())),
        "{line}"
    );
    assert!(
        tree.lines()
            .any(|l| l.contains("username string = \"alice\"")),
        "the user name stays: {tree}"
    );
    assert!(
        tree.lines()
            .any(|l| l.contains("clientProof string = \"<redacted, ")),
        "{tree}"
    );
    assert!(
        tree.lines()
            .any(|l| l.contains("auth string = \"<redacted, ")),
        "the bearer token: {tree}"
    );
    assert!(
        tree.lines()
            .any(|l| l.contains("SaltedPassword bytes = \"<redacted, ")),
        "{tree}"
    );
    // JSON: masked bytes of the same length, and the paths that hold them.
    let (_, json_lines) = run(&["capture", cap.path(), "--json"]);
    let frames: Vec<Value> = json_lines
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let plain = frames
        .iter()
        .find(|f| f["api_key"] == 36 && f["kind"] == "request")
        .unwrap();
    let auth = plain["body"]["AuthBytes"].as_str().unwrap();
    assert_eq!(
        auth,
        hex::encode(format!("\0alice\0{}", "*".repeat(PASSWORD.len())))
    );
    assert_eq!(plain["_redacted"], json!(["body.AuthBytes"]));
    let alter = frames
        .iter()
        .find(|f| f["api_key"] == 51 && f["kind"] == "request")
        .unwrap();
    assert_eq!(
        alter["_redacted"],
        json!([
            "body.Upsertions[0].Salt",
            "body.Upsertions[0].SaltedPassword"
        ])
    );
    let tokens: Vec<&Value> = frames
        .iter()
        .filter(|f| f["kind"] == "sasl_token" && f.get("_redacted").is_some())
        .collect();
    assert_eq!(
        tokens.len(),
        2,
        "the proof and the signature tokens: {frames:#?}"
    );
    // A redacted frame is not encoded back.
    let out = common::kwire_with_stdin(
        &["encode"],
        serde_json::to_string(plain).unwrap().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--show-secrets"));
}

#[test]
fn decode_of_a_single_frame_reads_the_mechanism_by_shape() {
    let f = frame(
        Direction::Request,
        "SaslAuthenticate",
        2,
        9,
        "c",
        json!({"AuthBytes": hex::encode(format!("\0alice\0{PASSWORD}"))}),
    );
    let file = std::env::temp_dir().join(format!("kwire-secrets-frame-{}.bin", std::process::id()));
    std::fs::write(&file, &f).unwrap();
    let path = file.to_str().unwrap();
    for format in ["tree", "json", "tree-json", "grid"] {
        let (status, out) = run(&["decode", "--binary", path, "--format", format]);
        assert_eq!(status, Some(0), "{format}: {out}");
        assert!(
            leaked(&out).is_empty(),
            "{format}: {:?}\n{out}",
            leaked(&out)
        );
        let (_, out) = run(&[
            "decode",
            "--binary",
            path,
            "--format",
            format,
            "--show-secrets",
        ]);
        assert!(
            !leaked(&out).is_empty(),
            "{format} with --show-secrets: {out}"
        );
    }
    let (_, out) = run(&["decode", "--binary", path, "--explain"]);
    assert!(leaked(&out).is_empty(), "--explain: {:?}", leaked(&out));
    let _ = std::fs::remove_file(&file);
}

/// A UserScramCredentialRecord as KRaft writes it to `__cluster_metadata`:
/// frame version 1, record type 11, version 0, then the record.
/// `kwire records` of a metadata log segment in each format: no credential
/// shown; the exit statuses.
fn metadata_records_leak_nothing(path: &str, what: &str) -> Vec<Option<i32>> {
    let mut statuses = Vec::new();
    for format in ["tree", "json", "dump"] {
        let (status, out) = run(&[
            "records",
            path,
            "--topic",
            "__cluster_metadata",
            "--format",
            format,
        ]);
        assert!(
            leaked(&out).is_empty(),
            "{what} --format {format}: {:?}\n{out}",
            leaked(&out)
        );
        statuses.push(status);
    }
    statuses
}

fn scram_record() -> Vec<u8> {
    let cat = kwire::schema::Catalogue::builtin();
    let spec = cat.by_name("UserScramCredentialRecord", 0, None).unwrap();
    let body = json!({"Name": "alice", "Mechanism": 1, "Salt": hex::encode("salt-bytes"), "StoredKey": hex::encode(PROOF), "ServerKey": hex::encode(SIGNATURE), "Iterations": 4096});
    let mut out = vec![1, 11, 0];
    out.extend(kwire::encode::encode_body(spec, 0, body.as_object().unwrap()).unwrap());
    out
}

/// A capture of one Produce of `records` to the metadata log.
fn metadata_capture(name: &str, records: &[u8]) -> TempCapture {
    let cat = kwire::schema::Catalogue::builtin();
    let mut t = Timeline::default();
    t.send(
        PORT,
        true,
        &common::batches::produce(cat, "__cluster_metadata", records),
    );
    TempCapture::new(name, &t.pcap())
}

/// A compressed batch of the metadata log that is not decompressed (over
/// the budget here; damaged data likewise) cannot be read for credentials,
/// and snappy keeps the record's keys as they are: its bytes are masked
/// whole in every view that shows bytes, unless `--show-secrets`.
#[test]
fn a_metadata_batch_not_decompressed_is_masked_whole() {
    use common::batches::{batch, Rec};
    let rec = Rec {
        key: None,
        value: Some(scram_record()),
        headers: vec![],
        timestamp_delta: 0,
    };
    let cap = metadata_capture("secrets-kraft-undecompressed", &batch(0, 2, &[rec]));
    for format in ["grid", "json", "tree"] {
        let args = [
            "capture",
            cap.path(),
            "--format",
            format,
            "--max-decompressed",
            "10",
        ];
        let (_, out) = run(&args);
        assert!(
            leaked(&out).is_empty(),
            "{format}: {:?}\n{out}",
            leaked(&out)
        );
        // The tree shows compressed bytes cut short: the others show them whole.
        if format != "tree" {
            let (_, shown) = run(&[&args[..], &["--show-secrets"]].concat());
            assert!(
                !leaked(&shown).is_empty(),
                "{format} --show-secrets:\n{shown}"
            );
        }
    }
}

#[test]
fn kraft_scram_records_in_a_segment_and_in_a_capture() {
    use common::batches::{batch, Rec};
    let rec = || Rec {
        key: None,
        value: Some(scram_record()),
        headers: vec![],
        timestamp_delta: 0,
    };
    for codec in [0, 1] {
        let segment = batch(0, codec, &[rec()]);
        let file =
            std::env::temp_dir().join(format!("kwire-secrets-{codec}-{}.log", std::process::id()));
        std::fs::write(&file, &segment).unwrap();
        let path = file.to_str().unwrap();
        for status in metadata_records_leak_nothing(path, &format!("codec {codec}")) {
            assert_eq!(status, Some(0));
        }
        let (_, out) = run(&[
            "records",
            path,
            "--topic",
            "__cluster_metadata",
            "--show-secrets",
        ]);
        assert!(
            out.contains("StoredKey") && !out.contains("<redacted"),
            "with --show-secrets: {out}"
        );
        let (_, out) = run(&["records", path, "--topic", "__cluster_metadata"]);
        assert!(
            out.lines()
                .any(|l| l.contains("StoredKey bytes = \"<redacted, 44 bytes>\"")),
            "{out}"
        );
        let _ = std::fs::remove_file(&file);
        // The same batch produced to the metadata topic, in a capture.
        let cap = metadata_capture(&format!("secrets-kraft-{codec}"), &segment);
        for args in [
            vec!["capture", cap.path()],
            vec!["capture", cap.path(), "--json"],
            vec!["records", cap.path()],
            vec!["records", cap.path(), "--format", "json"],
        ] {
            let (_, out) = run(&args);
            assert!(
                leaked(&out).is_empty(),
                "{args:?}, codec {codec}: {:?}\n{out}",
                leaked(&out)
            );
        }
    }
}

#[test]
fn delegation_token_hmacs_are_redacted() {
    let hmac = b"HMAC-of-the-token-0123456789";
    let f = frame(
        Direction::Response,
        "CreateDelegationToken",
        3,
        4,
        "",
        json!({"TokenId": "token-1", "Hmac": hex::encode(hmac)}),
    );
    let file = std::env::temp_dir().join(format!("kwire-secrets-hmac-{}.bin", std::process::id()));
    std::fs::write(&file, &f).unwrap();
    let path = file.to_str().unwrap();
    let args = [
        "decode",
        "--binary",
        path,
        "--response",
        "--api",
        "CreateDelegationToken",
        "--version",
        "3",
    ];
    let hex_hmac = hex::encode(hmac);
    for format in ["tree", "json", "tree-json", "grid"] {
        let (status, out) = run(&[&args[..], &["--format", format]].concat());
        assert_eq!(status, Some(0), "{out}");
        assert!(
            !out.contains("HMAC-of-the-token") && !out.contains(&hex_hmac),
            "{format}: {out}"
        );
    }
    let (_, out) = run(&[&args[..], &["--format", "json"]].concat());
    assert!(
        out.contains("\"Hmac\":\"<redacted, 28 bytes>\"")
            && out.contains("\"_redacted\":[\"body.Hmac\"]"),
        "{out}"
    );
    let (_, out) = run(&[&args[..], &["--format", "json", "--show-secrets"]].concat());
    assert!(out.contains(&hex_hmac), "{out}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn the_explorer_shows_masked_bytes_and_redacted_values() {
    use kwire::tui::{ui, App, Theme};
    use ratatui::{backend::TestBackend, Terminal};
    // This test binary's own process: hiding on, as the command line turns it on.
    kwire::decode::secrets::hide(true);
    let f = frame(
        Direction::Request,
        "SaslAuthenticate",
        2,
        9,
        "c",
        json!({"AuthBytes": hex::encode(format!("\0alice\0{PASSWORD}"))}),
    );
    let frames = kwire::decode::decode_frames(
        kwire::schema::Catalogue::builtin(),
        &bytes::Bytes::from(f),
        &Default::default(),
    );
    let mut app = App::new(
        kwire::schema::Catalogue::builtin(),
        None,
        frames,
        Theme::MONO,
    );
    let mut t = Terminal::new(TestBackend::new(200, 60)).unwrap();
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    let buf = t.backend().buffer().clone();
    let screen: String = (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(
        leaked(&screen).is_empty() && !screen.contains("s3cret"),
        "{screen}"
    );
    assert!(
        screen.contains("*****"),
        "the grid's text column shows the masked bytes: {screen}"
    );
}

#[test]
fn a_scram_credential_record_decoded_by_type_is_redacted() {
    let hex = hex::encode(scram_record());
    let dir = std::env::temp_dir().join(format!("kwire-secrets-type-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("scram.hex");
    std::fs::write(&file, &hex).unwrap();
    let path = file.display().to_string();
    for format in ["tree", "json", "tree-json", "grid"] {
        let (status, out) = run(&[
            "decode",
            &path,
            "--type",
            "UserScramCredentialRecord",
            "--format",
            format,
        ]);
        assert_eq!(status, Some(0), "{format}: {out}");
        assert_eq!(leaked(&out), Vec::<String>::new(), "{format}: {out}");
        assert!(out.contains("alice"), "{format}: {out}");
        if format != "grid" {
            assert!(out.contains("<redacted, "), "{format}: {out}");
        }
        let (_, shown) = run(&[
            "decode",
            &path,
            "--type",
            "UserScramCredentialRecord",
            "--format",
            format,
            "--show-secrets",
        ]);
        let proof_start = hex::encode(&PROOF.as_bytes()[..8]);
        assert!(
            !shown.contains("<redacted")
                && (shown.contains(&proof_start)
                    || shown.contains(&PROOF[..10])
                    || !leaked(&shown).is_empty()),
            "{format} --show-secrets: {shown}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_metadata_log_segment_is_redacted_without_topic_its_directory_names_it() {
    use common::batches::{batch, Rec};
    let segment = batch(
        0,
        0,
        &[Rec {
            key: None,
            value: Some(scram_record()),
            headers: vec![],
            timestamp_delta: 0,
        }],
    );
    let root = std::env::temp_dir().join(format!("kwire-secrets-logdir-{}", std::process::id()));
    let dir = root.join("__cluster_metadata-0");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("00000000000000000000.log");
    std::fs::write(&file, &segment).unwrap();
    let path = file.display().to_string();
    for format in ["tree", "json", "dump"] {
        let (status, out) = run(&["records", &path, "--format", format]);
        assert_eq!(status, Some(0), "{out}");
        assert_eq!(leaked(&out), Vec::<String>::new(), "{format}: {out}");
        let masked = if format == "dump" {
            "********************************************"
        } else {
            "<redacted, 44 bytes>"
        };
        assert!(out.contains(masked), "{format}: {out}");
    }
    use kwire::decode::records::segment::topic_of_log_dir;
    assert_eq!(
        topic_of_log_dir("/var/kafka/orders.v2-11/00000000000000000000.log").as_deref(),
        Some("orders.v2")
    );
    for not in [
        "-",
        "x.log",
        "/logs/00000000000000000000.log",
        "/d/topic-x1/a.log",
        "/d/-3/a.log",
    ] {
        assert_eq!(topic_of_log_dir(not), None, "{not}");
    }
    // Elsewhere, the same file's records are plain bytes (and so shown): the
    // directory is what names the topic.
    let elsewhere = root.join("copy.log");
    std::fs::write(&elsewhere, &segment).unwrap();
    let (_, out) = run(&["records", &elsewhere.display().to_string()]);
    assert!(!out.contains("<redacted"), "{out}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn the_explorer_s_pcap_export_masks_credentials() {
    use kwire::analysis::index::{index_capture, IndexEvent, IndexReading, Progress, Spool};
    kwire::decode::secrets::hide(true);
    let cat = kwire::schema::Catalogue::builtin();
    let capture = conversation().pcap();
    let (spool, file) = Spool::create().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    index_capture(
        IndexReading {
            cat,
            release: None,
            guess: false,
            opts: &Default::default(),
        },
        &capture[..],
        file,
        &Progress::default(),
        &tx,
    );
    drop(tx);
    let rows: Vec<_> = rx
        .iter()
        .flat_map(|ev| match ev {
            IndexEvent::Rows { rows, .. } => rows,
            _ => Vec::new(),
        })
        .collect();
    assert!(rows.len() > 4, "{} rows", rows.len());
    let out = std::env::temp_dir().join(format!("kwire-secrets-x-{}.pcapng", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let said = kwire::tui::export::pcap(&out.display().to_string(), &spool, rows.iter(), cat, None)
        .unwrap();
    assert!(said.contains("credentials masked in"), "{said}");
    let written = std::fs::read(&out).unwrap();
    let text = String::from_utf8_lossy(&written);
    assert_eq!(leaked(&text), Vec::<String>::new());
    // What was written reads back, frame for frame.
    let (status, listing) = run(&["capture", &out.display().to_string(), "--list"]);
    assert!(status.is_some(), "{listing}");
    assert_eq!(common::frame_rows(&listing).len(), rows.len(), "{listing}");
    let _ = std::fs::remove_file(&out);
}

/// A SaslHandshake v0 request, `mechanism` named.
fn handshake_v0(corr: i32, mechanism: &str) -> Vec<u8> {
    common::exchanges::frame(
        Direction::Request,
        "SaslHandshake",
        0,
        corr,
        "c",
        json!({"Mechanism": mechanism}),
    )
}

#[test]
fn a_plain_token_after_a_lost_or_refused_handshake_answer_is_not_shown() {
    let plain = format!("\0alice\0{PASSWORD}");
    // The broker's answer to the handshake is not in the capture.
    let mut lost = Timeline::default();
    lost.send(PORT, true, &handshake_v0(1, "PLAIN"));
    lost.send(PORT, true, &token(plain.as_bytes()));
    lost.send(PORT, false, &token(b""));
    lost.on(PORT, "c").pair(2, "Metadata", 12, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}), json!({"Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []}));
    // The broker refused the mechanism, and the client sent its token anyway.
    let mut refused = Timeline::default();
    refused.on(PORT, "c").pair(
        1,
        "SaslHandshake",
        0,
        json!({"Mechanism": "PLAIN"}),
        json!({"ErrorCode": 33, "Mechanisms": ["SCRAM-SHA-256"]}),
    );
    refused.send(PORT, true, &token(plain.as_bytes()));
    for (what, t) in [("lost", lost), ("refused", refused)] {
        let cap = TempCapture::new(&format!("sasl-{what}"), &t.pcap());
        let (_, list) = run(&["capture", cap.path(), "--list"]);
        assert!(list.contains("SASL token (PLAIN)"), "{what}:\n{list}");
        for args in [
            vec!["capture", cap.path(), "--format", "tree"],
            vec!["capture", cap.path(), "--format", "grid"],
            vec!["capture", cap.path(), "--json"],
            vec!["capture", cap.path()],
        ] {
            let (_, out) = run(&args);
            assert!(
                leaked(&out).is_empty(),
                "{what} {args:?} shows {:?}:\n{out}",
                leaked(&out)
            );
        }
        // With --show-secrets the token is there to see.
        let (_, shown) = run(&["capture", cap.path(), "--format", "tree", "--show-secrets"]);
        assert!(!leaked(&shown).is_empty(), "{what}:\n{shown}");
    }
}

/// A capture that began after the SaslHandshake (or a client that sent its
/// token without one): a client frame with the shape of a PLAIN, SCRAM or
/// OAUTHBEARER message is a token by that shape, and its credential is
/// masked in every view, the written capture included.
#[test]
fn a_token_with_no_handshake_in_the_capture_is_told_by_its_shape() {
    let metadata = |t: &mut Timeline, corr| {
        t.on(PORT, "c").pair(corr, "Metadata", 12, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}), json!({"Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []}));
    };
    let plain = format!("\0alice\0{PASSWORD}");
    let scram_final = format!("c=biws,r=abcdef,p={PROOF}");
    let bearer = format!("n,,\x01auth=Bearer {BEARER}\x01\x01");
    let cases: [(&str, Vec<&[u8]>); 3] = [
        ("PLAIN", vec![plain.as_bytes(), b""]),
        (
            "SCRAM",
            vec![scram_final.as_bytes(), b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ="],
        ),
        ("OAUTHBEARER", vec![bearer.as_bytes(), b""]),
    ];
    for (mechanism, tokens) in cases {
        let mut t = Timeline::default();
        metadata(&mut t, 1);
        for (i, bytes) in tokens.iter().enumerate() {
            t.send(PORT, i % 2 == 0, &token(bytes));
        }
        metadata(&mut t, 2);
        let cap = TempCapture::new(&format!("sasl-shape-{mechanism}"), &t.pcap());
        let (_, list) = run(&["capture", cap.path(), "--list"]);
        assert!(
            list.contains(&format!("SASL token ({mechanism}, by its shape)")),
            "{mechanism}:\n{list}"
        );
        // The Kafka frames around it are read as ever.
        assert_eq!(
            list.matches("Metadata v12").count(),
            4,
            "{mechanism}:\n{list}"
        );
        let written = std::env::temp_dir().join(format!(
            "kwire-sasl-shape-{mechanism}-{}.pcapng",
            std::process::id()
        ));
        let written = written.display().to_string();
        for args in [
            vec!["capture", cap.path(), "--format", "tree"],
            vec!["capture", cap.path(), "--format", "grid"],
            vec!["capture", cap.path(), "--json"],
            vec!["capture", cap.path(), "--write-selected", &written],
        ] {
            let (_, out) = run(&args);
            let out = match args.contains(&"--write-selected") {
                true => String::from_utf8_lossy(&std::fs::read(&written).unwrap()).into_owned(),
                false => out,
            };
            assert!(
                leaked(&out).is_empty(),
                "{mechanism} {args:?} shows {:?}:\n{out}",
                leaked(&out)
            );
        }
        let _ = std::fs::remove_file(&written);
        let (_, shown) = run(&["capture", cap.path(), "--format", "tree", "--show-secrets"]);
        assert!(!leaked(&shown).is_empty(), "{mechanism}:\n{shown}");
    }
}

/// A capture that joined a connection between its SaslHandshake and the
/// client's token (no SYN, no handshake): the token is the first frame, not
/// the end of one that started before the capture, and it is masked.
#[test]
fn a_token_first_in_a_capture_joined_mid_stream_is_a_token() {
    let mut t = Timeline::default();
    t.send(
        PORT,
        true,
        &token(format!("\0alice\0{PASSWORD}").as_bytes()),
    );
    t.send(PORT, false, &token(b""));
    t.on(PORT, "c").pair(2, "Metadata", 12, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}), json!({"Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []}));
    t.packets.retain(|(_, seg)| !seg.syn);
    let cap = TempCapture::new("sasl-mid-stream", &t.pcap());
    let (_, list) = run(&["capture", cap.path(), "--list"]);
    assert!(list.contains("SASL token (PLAIN, by its shape)"), "{list}");
    assert!(!list.contains("mid-stream"), "{list}");
    for args in [
        vec!["capture", cap.path(), "--format", "grid"],
        vec!["capture", cap.path(), "--json"],
    ] {
        let (_, out) = run(&args);
        assert!(
            leaked(&out).is_empty(),
            "{args:?} shows {:?}:\n{out}",
            leaked(&out)
        );
    }
}

#[test]
fn a_malformed_sasl_authenticate_masks_what_was_not_decoded() {
    // AuthBytes' length says more than the frame holds: decoding stops there.
    let mut f = common::exchanges::frame(
        Direction::Request,
        "SaslAuthenticate",
        2,
        2,
        "c",
        json!({"AuthBytes": hex::encode(format!("\0alice\0{PASSWORD}"))}),
    );
    // The compact length (21 + 1) before the 21 bytes and the body's tagged fields.
    let at = f.len() - 21 - 2;
    assert_eq!(f[at], 22, "{f:?}");
    f[at] = 100;
    let file = std::env::temp_dir().join(format!("kwire-sasl-bad-{}.bin", std::process::id()));
    std::fs::write(&file, &f).unwrap();
    let path = file.to_str().unwrap();
    for format in ["tree", "grid", "json", "tree-json"] {
        let (status, out) = run(&["decode", path, "--format", format]);
        assert!(
            leaked(&out).is_empty(),
            "{format} shows {:?}:\n{out}",
            leaked(&out)
        );
        assert_eq!(status, Some(2), "{format}: {out}");
    }
    let (_, out) = run(&["decode", path, "--format", "grid", "--show-secrets"]);
    assert!(!leaked(&out).is_empty(), "{out}");
    let _ = std::fs::remove_file(&file);
}

#[test]
fn damaged_scram_records_of_the_metadata_log_are_masked() {
    use common::batches::{batch, batch_of, record_bytes, Rec};
    let whole = scram_record();
    // A value its schema does not read whole (cut inside ServerKey), and a
    // record cut short by the end of its batch.
    let cut_value = Rec {
        key: None,
        value: Some(whole[..whole.len() - 20].to_vec()),
        headers: vec![],
        timestamp_delta: 0,
    };
    let recs = record_bytes(
        &Rec {
            key: None,
            value: Some(whole.clone()),
            headers: vec![],
            timestamp_delta: 0,
        },
        0,
    );
    let cut_record = batch_of(0, 0, &recs[..recs.len() - 20], 1);
    for (what, segment) in [("value", batch(0, 0, &[cut_value])), ("record", cut_record)] {
        let file = std::env::temp_dir().join(format!(
            "kwire-secrets-cut-{what}-{}.log",
            std::process::id()
        ));
        std::fs::write(&file, &segment).unwrap();
        let path = file.to_str().unwrap();
        // The damage is there to see, the credential is not.
        if what == "value" {
            let (_, out) = run(&[
                "records",
                path,
                "--topic",
                "__cluster_metadata",
                "--format",
                "json",
                "--show-secrets",
            ]);
            assert!(
                !leaked(&out).is_empty(),
                "{what} with --show-secrets:\n{out}"
            );
        }
        // The bytes views show (the explorer's records hex) are masked where the credential was.
        let cat = kwire::schema::Catalogue::builtin();
        let ctx = kwire::decode::fields::Context {
            topic: Some("__cluster_metadata".into()),
            ..Default::default()
        };
        let mut bytes = bytes::Bytes::from(segment.clone());
        let mut d = kwire::decode::records::BatchDecoder::new(&bytes, cat, &ctx);
        let mut nodes = Vec::new();
        d.decode_stream(0, segment.len(), &mut nodes);
        assert!(
            kwire::decode::secrets::redact_tree(&mut nodes, &mut bytes) > 0,
            "{what}"
        );
        assert!(
            leaked(&String::from_utf8_lossy(&bytes)).is_empty(),
            "{what}: {bytes:?}"
        );
        metadata_records_leak_nothing(path, what);
        let _ = std::fs::remove_file(&file);
    }
}

/// A Produce of more than 1 MiB to `__cluster_metadata`: `kwire decode`
/// would draw its records a batch at a time
/// (`DecodeOptions::defer_records_over`), but credentials are found in
/// nodes and the frame's bytes masked from them, so such a frame is decoded
/// whole: every credential masked, in the tree and in every view that shows
/// the frame's bytes.
#[test]
fn scram_records_drawn_a_batch_at_a_time_are_masked() {
    use common::batches::{batch, produce, Rec};
    let cat = kwire::schema::Catalogue::builtin();
    let rec = || Rec {
        key: None,
        value: Some(scram_record()),
        headers: vec![],
        timestamp_delta: 0,
    };
    let records: Vec<u8> = (0..200)
        .flat_map(|b| batch(b * 100, (b % 2) as i16, &vec![rec(); 100]))
        .collect();
    let bytes = produce(cat, "__cluster_metadata", &records);
    assert!(
        bytes.len() > 1 << 20,
        "{} bytes: not over the threshold",
        bytes.len()
    );
    let file = std::env::temp_dir().join(format!("kwire-secrets-large-{}.bin", std::process::id()));
    std::fs::write(&file, &bytes).unwrap();
    let path = file.to_str().unwrap();
    // Every view that shows the frame's bytes too: they are masked where
    // the records hold credentials, as the whole tree masks them.
    for view in [
        &["--format", "grid"][..],
        &["--format", "tree-json"],
        &["--explain"],
    ] {
        let given = ["decode", "--binary", "--max-expanded", "1G", path];
        let (status, shown) = run(&[&given[..], view].concat());
        assert_eq!(status, Some(0), "{view:?}");
        assert!(leaked(&shown).is_empty(), "{view:?}: {:?}", leaked(&shown));
    }
    let (status, out) = run(&["decode", "--binary", "--max-expanded", "1G", "--wide", path]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(
        status,
        Some(0),
        "{}",
        out.lines()
            .filter(|l| l.starts_with("kwire:"))
            .take(3)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(leaked(&out).is_empty(), "{:?}", leaked(&out));
    let masked = out
        .lines()
        .filter(|l| l.contains("StoredKey bytes = \"<redacted, 44 bytes>\""))
        .count();
    assert_eq!(masked, 200 * 100, "every record's key masked");
}

/// One batch of one SCRAM credential record.
fn scram_batch() -> Vec<u8> {
    let rec = common::batches::Rec {
        key: None,
        value: Some(scram_record()),
        headers: vec![],
        timestamp_delta: 0,
    };
    common::batches::batch(0, 0, &[rec])
}

/// `kwire decode --binary` of `bytes` (written to a file named after
/// `name`), with `given` options, in each of `views`: it succeeds and shows
/// no credential.
fn masked_in_every_view(name: &str, bytes: &[u8], given: &[&str], views: &[&[&str]]) {
    let file =
        std::env::temp_dir().join(format!("kwire-secrets-{name}-{}.bin", std::process::id()));
    std::fs::write(&file, bytes).unwrap();
    let path = file.to_str().unwrap();
    for view in views {
        let (status, shown) = run(&[&["decode", "--binary"][..], given, &[path], view].concat());
        assert_eq!(status, Some(0), "{view:?}: {shown}");
        assert!(leaked(&shown).is_empty(), "{view:?}: {:?}", leaked(&shown));
    }
    let _ = std::fs::remove_file(&file);
}

/// A small Produce to `__cluster_metadata` of several topics and
/// partitions, whose arrays `kwire decode` would leave for drawing
/// (`DecodeOptions::defer_record_arrays`): every view masks the records'
/// credentials in the frame's bytes.
#[test]
fn scram_records_in_partitions_are_masked_in_every_view() {
    let cat = kwire::schema::Catalogue::builtin();
    let records = scram_batch();
    let plain = common::batches::batch(
        0,
        0,
        &[common::batches::rec(Some(b"k"), Some(b"v"), &[], 0)],
    );
    let bytes = common::batches::produce_topics(
        cat,
        &[
            ("orders", &[&plain[..]]),
            ("__cluster_metadata", &[&records[..], &records[..]]),
        ],
    );
    let views: [&[&str]; 6] = [
        &["--format", "tree"],
        &["--format", "grid"],
        &["--format", "tree-json"],
        &["--format", "json"],
        &["--explain"],
        &["--wide"],
    ];
    masked_in_every_view("parts", &bytes, &[], &views);
}

/// Records read as the metadata log's because `--topic` says so (a Fetch
/// names topics by id, or the frame names another topic): their
/// credentials are masked in every view, though the frame's bytes never
/// name the metadata log.
#[test]
fn scram_records_of_a_topic_given_are_masked() {
    let cat = kwire::schema::Catalogue::builtin();
    let bytes = common::batches::produce(cat, "renamed", &scram_batch());
    let views: [&[&str]; 5] = [
        &["--format", "tree"],
        &["--format", "grid"],
        &["--format", "tree-json"],
        &["--format", "json"],
        &["--explain"],
    ];
    masked_in_every_view("topic", &bytes, &["--topic", "__cluster_metadata"], &views);
}

#[test]
fn capture_write_selected_masks_credentials_unless_shown() {
    let cap = TempCapture::new("secrets-selected", &conversation().pcap());
    let out = std::env::temp_dir().join(format!("kwire-secrets-sel-{}.pcapng", std::process::id()));
    let out = out.display().to_string();
    let (status, said) = run(&["capture", cap.path(), "--list", "--write-selected", &out]);
    assert_eq!(status, Some(0), "{said}");
    assert!(said.contains("credentials masked in"), "{said}");
    let written = std::fs::read(&out).unwrap();
    assert_eq!(
        leaked(&String::from_utf8_lossy(&written)),
        Vec::<String>::new()
    );
    // The file reads back to as many frames as were listed.
    let listed = common::frame_rows(&said)
        .iter()
        .filter(|l| !l.starts_with("kwire: wrote"))
        .count();
    let (_, back) = run(&["capture", &out, "--list"]);
    assert_eq!(common::frame_rows(&back).len(), listed, "{back}");
    // Asked for, the credentials are written as they were sent.
    let (status, said) = run(&[
        "capture",
        cap.path(),
        "--write-selected",
        &out,
        "--show-secrets",
    ]);
    assert_eq!(status, Some(0), "{said}");
    let written = std::fs::read(&out).unwrap();
    assert!(!leaked(&String::from_utf8_lossy(&written)).is_empty());
    let _ = std::fs::remove_file(&out);
}

/// The JSON contract is written from a values tape: of a frame that holds a
/// credential, the tape keeps its values and takes the tree's masked bytes
/// and redactions. What it writes is what the contract built from the
/// redacted tree holds (`common::contract`), for every kind of credential:
/// SASL exchanges, SCRAM salts, a token's HMAC and metadata-log records,
/// compressed or not, a frame cut short included.
#[test]
fn the_contract_of_a_redacted_frame_is_its_tree_s() {
    use common::batches::{batch, batch_of, produce, record_bytes, Rec};
    use kwire::decode::{decode_frame, DecodeOptions};
    // This test binary's own process: hiding on, as the command line turns it on.
    kwire::decode::secrets::hide(true);
    let cat = kwire::schema::Catalogue::builtin();
    let mut t = conversation();
    let rec = Rec {
        key: None,
        value: Some(scram_record()),
        headers: vec![],
        timestamp_delta: 0,
    };
    for codec in [0, 1] {
        let records = batch(0, codec, std::slice::from_ref(&rec));
        t.send(
            PORT + 2,
            true,
            &produce(cat, "__cluster_metadata", &records),
        );
    }
    // Damaged records: a value cut inside its ServerKey, and a record cut
    // short by the end of its batch (masked whole, where the records end).
    let whole = scram_record();
    let cut_value = Rec {
        value: Some(whole[..whole.len() - 20].to_vec()),
        ..rec.clone()
    };
    let recs = record_bytes(&rec, 0);
    for records in [
        batch(0, 0, &[cut_value]),
        batch_of(0, 0, &recs[..recs.len() - 20], 1),
    ] {
        t.send(
            PORT + 2,
            true,
            &produce(cat, "__cluster_metadata", &records),
        );
    }
    let mut frames: Vec<(DecodeOptions, bytes::Bytes)> = Vec::new();
    kwire::capture::for_each_frame(cat, &t.pcap()[..], None, |f| {
        if f.api_key.is_some() {
            let opts = DecodeOptions {
                direction: Some(f.direction),
                api_key: f.api_key,
                api_version: f.api_version,
                ..Default::default()
            };
            frames.push((opts, f.bytes.clone()));
        }
        true
    })
    .unwrap();
    let hmac = frame(
        Direction::Response,
        "CreateDelegationToken",
        3,
        4,
        "",
        json!({"TokenId": "token-1", "Hmac": hex::encode(b"HMAC-of-the-token-0123456789")}),
    );
    let response = |key, version| DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(key),
        api_version: Some(version),
        ..Default::default()
    };
    frames.push((response(38, 3), hmac.clone().into()));
    // Cut inside the HMAC: the bytes from where decoding stopped are masked too.
    frames.push((response(38, 3), hmac[..hmac.len() - 12].to_vec().into()));
    // AuthBytes of no mechanism kwire knows (redacted whole), its compact
    // length over-long: two bytes where one does, so that the value starts
    // a byte later than a length of one byte would say (found by fuzzing).
    let mut odd = vec![0, 36, 0, 2, 0, 0, 0, 9, 0, 0, 0, 0xab, 0x00];
    odd.extend([b'X'; 42]);
    odd.push(0);
    let mut framed = (odd.len() as u32).to_be_bytes().to_vec();
    framed.extend(odd);
    frames.push((DecodeOptions::default(), framed.into()));
    // An ExpireDelegationToken request cut short in the field after the
    // HMAC: the read that failed there is no credential (found by fuzzing).
    let expire = frame(
        Direction::Request,
        "ExpireDelegationToken",
        2,
        9,
        "c",
        json!({"Hmac": hex::encode(b"HMAC-of-the-token"), "ExpiryTimePeriodMs": 1}),
    );
    frames.push((
        DecodeOptions::default(),
        expire[..expire.len() - 5].to_vec().into(),
    ));
    let mut redacted = 0;
    for (opts, bytes) in &frames {
        let tree = decode_frame(cat, bytes.clone(), 0, opts);
        let lean_opts = DecodeOptions {
            values_only: true,
            ..opts.clone()
        };
        let lean = decode_frame(cat, bytes.clone(), 0, &lean_opts);
        assert!(lean.values.is_some(), "a values frame keeps its tape");
        // An annotated tape's buffers would hold decompressed credentials: it becomes the tree.
        let annotated = DecodeOptions {
            annotated_tape: true,
            ..opts.clone()
        };
        let annotated = decode_frame(cat, bytes.clone(), 0, &annotated);
        if !lean.redacted.is_empty() {
            assert!(annotated.values.is_none(), "{opts:?}");
            assert_eq!(annotated.redacted, lean.redacted);
        }
        let mut written = Vec::new();
        kwire::render::json::write_contract(&lean, &mut written);
        let written = String::from_utf8(written).unwrap();
        assert_eq!(
            written,
            kwire::render::json::to_text(&common::contract::tree_contract(&tree)),
            "{opts:?}"
        );
        assert!(leaked(&written).is_empty(), "{written}");
        // The explorer's export: the tree, decoded again from its masked bytes.
        let mut again = Vec::new();
        let specs = (cat, None);
        kwire::render::json::write_contract_of(&tree, specs, Default::default(), &mut again);
        assert_eq!(String::from_utf8(again).unwrap(), written, "{opts:?}");
        redacted += usize::from(!lean.redacted.is_empty());
    }
    // PLAIN, the SCRAM proof, the bearer token, the salts, four batches of
    // metadata records, the HMACs whole and cut short, the odd AuthBytes.
    assert_eq!(redacted, 12, "frames with redactions");
}

/// `kwire records` of a capture reads a metadata log record's value through
/// its schema, from the frame's tape: a SCRAM record's salt and keys are
/// `<redacted, N bytes>` in `value_decoded` and `*`s in the value's bytes;
/// a value its schema does not read whole is taken for a credential and
/// masked whole (its length kept, where it was `null` before), with nothing
/// decoded shown.
#[test]
fn a_captures_metadata_records_are_masked_field_by_field() {
    use common::batches::{batch, Rec};
    let whole = scram_record();
    let rec = |value: Vec<u8>| Rec {
        key: None,
        value: Some(value),
        headers: vec![],
        timestamp_delta: 0,
    };
    let records = batch(
        0,
        0,
        &[rec(whole.clone()), rec(whole[..whole.len() - 20].to_vec())],
    );
    let cap = metadata_capture("secrets-kraft-table", &records);
    let (status, out) = run(&["records", cap.path(), "--format", "json"]);
    assert_eq!(status, Some(0), "{out}");
    assert!(leaked(&out).is_empty(), "{:?}\n{out}", leaked(&out));
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    let fields = &rows[0]["value_decoded"]["fields"];
    assert_eq!(
        rows[0]["value_decoded"]["schema"],
        "UserScramCredentialRecord v0"
    );
    assert_eq!(fields["Name"], "alice");
    assert_eq!(fields["Salt"], "<redacted, 10 bytes>");
    assert_eq!(fields["StoredKey"], "<redacted, 44 bytes>");
    assert_eq!(fields["ServerKey"], "<redacted, 44 bytes>");
    assert_eq!(fields["Iterations"], 4096);
    // The value's bytes: the record's prefixes and name as they are, the salt masked.
    let hex = rows[0]["value_hex"].as_str().unwrap();
    assert_eq!(hex.len(), 2 * whole.len());
    assert!(hex.contains(&hex::encode("alice")), "{hex}");
    assert!(hex.contains(&"2a".repeat(10)) && !hex.contains(&hex::encode("salt-bytes")));
    // Cut inside its ServerKey: masked whole.
    let cut = &rows[1];
    assert_eq!(cut["value_hex"], "2a".repeat(whole.len() - 20));
    assert!(cut.get("value_decoded").is_none(), "{cut}");
    // Asked for, they are shown.
    let (_, out) = run(&["records", cap.path(), "--format", "json", "--show-secrets"]);
    let row: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        row["value_decoded"]["fields"]["Salt"],
        hex::encode("salt-bytes")
    );
}
