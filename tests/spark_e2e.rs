//! The README's Spark job: `scripts/spark-export.py` runs `kwire export` on
//! Spark's executors (local mode, one task per capture) and queries the
//! tables with Spark SQL. Its answers must be what kwire's own views count:
//! exchanges per API as `stats` pairs them, records per topic as `records`
//! lists them, findings per rule as `check` gives them, and two captures of
//! the same name both counted.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn kwire_json(args: &[&str]) -> Vec<Value> {
    let o = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
#[ignore = "needs python3 with pyspark, and Java 17"]
fn the_spark_job_counts_what_kwire_counts() {
    common::require_tools("the Spark job", &[common::PYTHON3, common::JAVA]);
    let has_pyspark = Command::new("python3")
        .args(["-c", "import pyspark"])
        .status()
        .unwrap()
        .success();
    assert!(
        has_pyspark,
        "python3 cannot import pyspark: python3 -m pip install pyspark (bash .ci/run installs it)"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = std::env::temp_dir().join(format!("kwire-spark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("again")).unwrap();
    // A second capture named kafka-python.pcap: its files must not replace the first's.
    let again = work.join("again/kafka-python.pcap");
    std::fs::copy(root.join("samples/captures/kafka-python.pcap"), &again).unwrap();
    let captures: Vec<String> = [
        "samples/captures/confluent-kafka.pcap",
        "samples/captures/kafka-python.pcap",
        "samples/captures/diagnosis/churn.pcap",
        "samples/captures/diagnosis/old-librdkafka.pcap",
    ]
    .iter()
    .map(|c| root.join(c).display().to_string())
    .chain([again.display().to_string()])
    .collect();
    let out = work.join("tables");
    let mut cmd = Command::new("python3");
    cmd.arg(root.join("scripts/spark-export.py"))
        .args(["--json", "--kwire", env!("CARGO_BIN_EXE_kwire"), "--out"])
        .arg(&out)
        .args(&captures)
        .env_remove("KWIRE_DEFS");
    let o = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("5 of 5 captures exported"), "{said}");
    let rows: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let of = |q: &'static str| rows.iter().filter(move |r| r["query"] == q);

    // Exchanges per API: the requests `stats` pairs, and lone responses.
    let mut want: BTreeMap<String, i64> = BTreeMap::new();
    let (mut findings, mut records): (BTreeMap<String, i64>, BTreeMap<String, i64>) =
        Default::default();
    for c in &captures {
        let stats = &kwire_json(&["stats", c, "--format", "json"])[0];
        for a in stats["by_api"].as_array().unwrap() {
            *want
                .entry(a["api_name"].as_str().unwrap().into())
                .or_default() += a["requests"].as_i64().unwrap();
        }
        *want.entry("null".into()).or_default() += stats["unmatched_responses"].as_i64().unwrap();
        for f in kwire_json(&["check", c, "--format", "json"]) {
            *findings
                .entry(f["rule"].as_str().unwrap().into())
                .or_default() += 1;
        }
        for r in kwire_json(&["records", c, "--format", "json"]) {
            if r.get("offset").is_some() {
                let key = format!(
                    "{} {}",
                    r["topic"].as_str().unwrap(),
                    r["direction"].as_str().unwrap()
                );
                *records.entry(key).or_default() += 1;
            }
        }
    }
    want.retain(|_, n| *n > 0);
    let got: BTreeMap<String, i64> = of("per_api")
        .map(|r| {
            let name = r["api_name"].as_str().unwrap_or("null").to_string();
            (name, r["exchanges"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(got, want);
    assert!(got["Produce"] > 10 && got.len() > 10, "{got:?}");

    // Every capture counted, the two named alike apart.
    let per_capture: Vec<&Value> = of("per_capture").collect();
    assert_eq!(per_capture.len(), 5, "{per_capture:?}");

    let got: BTreeMap<String, i64> = of("findings")
        .map(|r| {
            (
                r["rule"].as_str().unwrap().into(),
                r["findings"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, findings);
    assert!(!got.is_empty());

    let got: BTreeMap<String, i64> = of("records_per_topic")
        .map(|r| {
            let key = format!(
                "{} {}",
                r["topic"].as_str().unwrap(),
                r["direction"].as_str().unwrap()
            );
            (key, r["records"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(got, records);
    assert!(got.values().sum::<i64>() > 50, "{got:?}");

    // Run again over the same folder, the captures in another order and one
    // fewer: every capture counted once, none from the first run's files.
    let total: i64 = of("per_api")
        .map(|r| r["exchanges"].as_i64().unwrap())
        .sum();
    let dropped = of("per_capture")
        .find(|r| r["capture"].as_str().unwrap().ends_with("churn.pcap"))
        .map(|r| r["exchanges"].as_i64().unwrap())
        .unwrap();
    let mut again: Vec<&String> = captures
        .iter()
        .filter(|c| !c.ends_with("churn.pcap"))
        .collect();
    again.reverse();
    let o = Command::new("python3")
        .arg(root.join("scripts/spark-export.py"))
        .args(["--json", "--kwire", env!("CARGO_BIN_EXE_kwire"), "--out"])
        .arg(&out)
        .args(["--query", "SELECT count(*) AS n FROM exchanges"])
        .args(&again)
        .env_remove("KWIRE_DEFS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let counted: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(counted["n"].as_i64(), Some(total - dropped), "{counted}");

    // The tables are files an engine reads: no staging left behind.
    assert!(!out.join("_staging").exists());
    let files = std::fs::read_dir(out.join("exchanges")).unwrap().count();
    assert_eq!(files, 4);
    let _ = std::fs::remove_dir_all(&work);
}
