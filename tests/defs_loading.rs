//! `--defs`: definitions folders, Kafka source trees, kafka-clients jars and
//! libs/ folders add prose, and make APIs the built-in catalogue lacks decodable.

mod common;

use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions};
use kwire::schema::{source::load_definitions, Catalogue, MessageKind};
use std::io::Write;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kwire-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_jar(path: &Path, dir: &Path, prefix: &str) -> usize {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("META-INF/MANIFEST.MF", opts).unwrap();
    zip.write_all(b"Manifest-Version: 1.0\n").unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".json") {
            zip.start_file(format!("{prefix}{name}"), opts).unwrap();
            zip.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
            n += 1;
        }
    }
    zip.finish().unwrap();
    n
}

fn about_of_group_id(cat: &Catalogue) -> Option<String> {
    let spec = cat.message(MessageKind::Request, 85, 0, None)?;
    spec.fields
        .iter()
        .find(|f| f.name == "GroupId")?
        .about
        .clone()
}

#[test]
fn a_source_tree_loads_with_prose() {
    let Some(tree) = common::shared_dir("kafka-defs/4.1") else {
        return;
    };
    let specs = load_definitions(&tree).unwrap();
    assert!(specs.len() > 250, "{} definitions", specs.len());
    let cat = Catalogue::builtin().with_loaded(specs);
    assert_eq!(
        about_of_group_id(&cat).as_deref(),
        Some("The group identifier.")
    );
    assert!(
        about_of_group_id(Catalogue::builtin()).is_none(),
        "the built-in catalogue holds no prose"
    );
}

#[test]
fn a_clients_jar_and_a_libs_folder_load() {
    let Some(messages) =
        common::shared_dir("kafka-defs/4.0/clients/src/main/resources/common/message")
    else {
        return;
    };
    let dir = scratch("jar");
    let jar = dir.join("kafka-clients-4.0.0.jar");
    let n = write_jar(&jar, &messages, "common/message/");
    let from_jar = load_definitions(&jar).unwrap();
    assert_eq!(from_jar.len(), n);
    let cat = Catalogue::builtin().with_loaded(from_jar);
    assert_eq!(
        about_of_group_id(&cat).as_deref(),
        Some("The group identifier.")
    );

    // A libs/ folder: Kafka's jars beside unrelated ones that must be skipped.
    let libs = dir.join("libs");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::copy(&jar, libs.join("kafka-clients-4.0.0.jar")).unwrap();
    std::fs::write(libs.join("zstd-jni-1.5.6.jar"), b"not even a zip").unwrap();
    assert_eq!(load_definitions(&libs).unwrap().len(), n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loaded_definitions_make_new_apis_decodable() {
    let dir = scratch("newapi");
    std::fs::write(
        dir.join("FrobnicateRequest.json"),
        r#"// a future API
        { "apiKey": 999, "type": "request", "name": "FrobnicateRequest", "validVersions": "0", "flexibleVersions": "0+",
          "fields": [ { "name": "Knob", "type": "int32", "versions": "0+", "about": "How far to turn the knob." } ] }"#,
    )
    .unwrap();
    let cat = Catalogue::builtin().with_loaded(load_definitions(&dir).unwrap());
    assert_eq!(cat.resolve_api("frobnicate"), Some(999));
    // size, key 999, version 0, correlation 7, client id "", no header tags, Knob 42, no body tags
    let frame = hex::decode(
        [
            "00000010", "03e7", "0000", "00000007", "0000", "00", "0000002a", "00",
        ]
        .concat(),
    )
    .unwrap();
    let frame = &frame[..];
    let frames = decode_frames(
        &cat,
        &Bytes::copy_from_slice(frame),
        &DecodeOptions::default(),
    );
    assert!(frames[0].error.is_none(), "{:?}", frames[0].error);
    let body = &frames[0].root.children[2];
    assert_eq!(body.name, "FrobnicateRequest");
    assert_eq!(body.children[0].name, "Knob");
    assert_eq!(
        body.children[0].doc.as_deref(),
        Some("How far to turn the knob.")
    );
    // The built-in catalogue alone does not know the key, and says so.
    let frames = decode_frames(
        Catalogue::builtin(),
        &Bytes::copy_from_slice(frame),
        &DecodeOptions::default(),
    );
    assert!(frames[0]
        .error
        .as_ref()
        .unwrap()
        .expected
        .contains("known API key"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_or_empty_paths_are_clear_errors() {
    assert!(load_definitions(Path::new("/nonexistent/kwire"))
        .unwrap_err()
        .contains("no such file"));
    let dir = scratch("empty");
    assert!(load_definitions(&dir)
        .unwrap_err()
        .contains("no Kafka message definitions"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A request definition with these common structs, whose one field is of
/// the struct `top`.
fn hostile_definition(commons: &[String], top: &str, valid: &str) -> String {
    format!(
        r#"{{"apiKey": 9000, "type": "request", "name": "HostileRequest", "validVersions": "{valid}", "flexibleVersions": "none",
  "fields": [{{"name": "Top", "type": "{top}", "versions": "0+"}}],
  "commonStructs": [{}]}}"#,
        commons.join(",\n")
    )
}

fn common_struct(name: &str, fields: &[(String, String)]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(n, t)| format!(r#"{{"name": "{n}", "type": "{t}", "versions": "0+"}}"#))
        .collect();
    format!(
        r#"{{"name": "{name}", "versions": "0+", "fields": [{}]}}"#,
        fields.join(", ")
    )
}

/// `kwire apis --defs DIR` with one definition file: its status and stderr.
fn load_one(name: &str, text: &str) -> (i32, String) {
    let dir = scratch(name);
    std::fs::write(dir.join("HostileRequest.json"), text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["apis", "--defs"])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn definitions_that_would_expand_without_bound_are_refused_naming_the_file() {
    // Each struct holds two of the one before: 2^40 fields once copied where used.
    let mut commons = vec![common_struct("S0", &[("A".into(), "int32".into())])];
    for i in 1..40 {
        commons.push(common_struct(
            &format!("S{i}"),
            &[
                ("L".into(), format!("S{}", i - 1)),
                ("R".into(), format!("S{}", i - 1)),
            ],
        ));
    }
    let doubling = hostile_definition(&commons, "S39", "0");
    assert!(doubling.len() < 12_000);
    // 5,000 structs, each holding the one before: nested 5,000 deep.
    let chain: Vec<String> = (0..5000)
        .map(|i| {
            let t = if i == 0 {
                "int8".to_string()
            } else {
                format!("C{}", i - 1)
            };
            common_struct(&format!("C{i}"), &[("F".into(), t)])
        })
        .collect();
    let chained = hostile_definition(&chain, "C4999", "0");
    for (name, text, why) in [
        ("doubling", &doubling, "expands to more than 20000 fields"),
        ("chained", &chained, "nested more than 32 deep"),
    ] {
        let started = std::time::Instant::now();
        let (status, err) = load_one(name, text);
        assert_ne!(status, 0, "{name}: {err}");
        assert!(
            err.contains("HostileRequest.json") && err.contains(why),
            "{name}: {err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{name}: {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn structs_within_the_limits_still_load_and_decode() {
    // Three levels of doubling: 2 + 4 + 8 + ... fields, far under the limits.
    let mut commons = vec![common_struct("S0", &[("A".into(), "int8".into())])];
    for i in 1..4 {
        commons.push(common_struct(
            &format!("S{i}"),
            &[
                ("L".into(), format!("S{}", i - 1)),
                ("R".into(), format!("S{}", i - 1)),
            ],
        ));
    }
    let text = hostile_definition(&commons, "S3", "0");
    let spec = kwire::schema::import::parse_definition(&text, "ok.json").unwrap();
    fn leaves(f: &[kwire::schema::model::FieldSpec]) -> usize {
        f.iter()
            .map(|f| {
                if f.fields.is_empty() {
                    1
                } else {
                    leaves(&f.fields)
                }
            })
            .sum()
    }
    assert_eq!(leaves(&spec.fields), 8);
    // Read once, referred to at each use: S3's two halves are S2's one list of fields.
    let s3 = &spec.fields[0].fields;
    assert!(kwire::schema::model::Fields::ptr_eq(
        &s3[0].fields,
        &s3[1].fields
    ));
}
