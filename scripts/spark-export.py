#!/usr/bin/env python3
"""Export many captures with kwire on Spark's executors, then query the
tables with Spark SQL.

Each capture is one Spark task: the executor that runs it calls `kwire export`
on it into a staging folder of its own under OUT, then moves the files into
OUT/<table>/, prefixed with the task's number so that captures of the same
name never collide. Spark then reads OUT/<table> as one table per folder
(names starting with `_` or `.` are skipped, so staging is never read).

Each run replaces the task files of an earlier run in OUT (files named
task-*), so a capture is never counted twice. On a cluster, OUT and the
captures must be paths every executor sees (a
shared file system), and the kwire binary must be installed on every
executor (--kwire PATH). In local mode (the default master, `local[*]`)
they are this machine's.

usage:
  spark-export.py --out DIR CAPTURE... [--kwire PATH] [--master URL]
                  [--query SQL]... [--json]

Without --query it runs the report queries below and prints each result as
a table (or, with --json, one JSON object per row with a "query" key naming
it). A query names the tables by their folder: exchanges, partitions,
connections, records, findings.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

TABLES = ["exchanges", "partitions", "connections", "records", "findings"]

# What a team asks across captures; the names are the keys of --json output.
REPORT = {
    "per_api": """
        SELECT api_name, count(*) AS exchanges,
               percentile_approx(latency_us, 0.99) AS p99_us,
               sum(CASE WHEN size(error_codes) > 0 THEN 1 ELSE 0 END) AS with_errors
        FROM exchanges GROUP BY api_name ORDER BY exchanges DESC, api_name""",
    "per_capture": """
        SELECT capture, count(*) AS exchanges, count(DISTINCT conn) AS connections
        FROM exchanges GROUP BY capture ORDER BY capture""",
    "old_produce": """
        SELECT client_id, api_version, count(*) AS requests FROM exchanges
        WHERE api_name = 'Produce' AND api_version < 3
        GROUP BY client_id, api_version ORDER BY client_id, api_version""",
    "records_per_topic": """
        SELECT topic, direction, count(*) AS records FROM records
        GROUP BY topic, direction ORDER BY topic, direction""",
    "findings": """
        SELECT rule, severity, count(*) AS findings FROM findings
        GROUP BY rule, severity ORDER BY findings DESC, rule""",
}


def export_one(task):
    """Run on an executor: export one capture, move its files into place.
    Never raises: a failure comes back as (capture, code, 0, why)."""
    try:
        return export_attempt(task)
    except Exception as e:  # kwire missing on this executor, a full disk...
        return (task[1], -1, 0, f"{type(e).__name__}: {e}")


def export_attempt(task):
    index, capture, kwire, out = task
    from pyspark import TaskContext

    # A folder per attempt: a retried or speculative attempt of the same
    # task never removes the files another is writing.
    context = TaskContext.get()
    attempt = context.attemptNumber() if context else 0
    staging = os.path.join(out, "_staging", f"task-{index:05d}-attempt-{attempt}")
    shutil.rmtree(staging, ignore_errors=True)
    run = subprocess.run(
        [kwire, "export", capture, "--out", staging, "--jobs", "1"],
        capture_output=True,
        text=True,
    )
    moved = 0
    if run.returncode == 0:
        for table in TABLES:
            folder = os.path.join(staging, table)
            if not os.path.isdir(folder):
                continue
            os.makedirs(os.path.join(out, table), exist_ok=True)
            for name in os.listdir(folder):
                if name.startswith("."):
                    continue
                os.replace(
                    os.path.join(folder, name),
                    os.path.join(out, table, f"task-{index:05d}-{name}"),
                )
                moved += 1
    shutil.rmtree(staging, ignore_errors=True)
    return (capture, run.returncode, moved, run.stderr.strip())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("captures", nargs="+", metavar="CAPTURE")
    p.add_argument("--out", required=True, help="the tables' folder")
    p.add_argument("--kwire", default="kwire", help="the kwire binary on the executors")
    p.add_argument("--master", default="local[*]")
    p.add_argument("--query", action="append", default=[], help="Spark SQL over the tables")
    p.add_argument("--json", action="store_true", help="rows as JSON lines")
    args = p.parse_args()

    from pyspark.sql import SparkSession

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    kwire = shutil.which(args.kwire) or args.kwire
    spark = (
        SparkSession.builder.master(args.master)
        .appName("kwire export")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # The task files of an earlier run: a capture listed at another place, or
    # failing now, must not be counted from them.
    for table in TABLES:
        folder = os.path.join(out, table)
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                if name.startswith("task-"):
                    os.remove(os.path.join(folder, name))
    captures = [os.path.abspath(c) for c in args.captures]
    tasks = [(i, c, kwire, out) for i, c in enumerate(captures)]
    results = (
        spark.sparkContext.parallelize(tasks, numSlices=max(1, len(tasks)))
        .map(export_one)
        .collect()
    )
    failed = [r for r in results if r[1] != 0]
    for capture, code, _, said in failed:
        print(f"spark-export: {capture}: kwire export exited {code}: {said}", file=sys.stderr)
    print(
        f"spark-export: {len(results) - len(failed)} of {len(results)} captures exported "
        f"on {spark.sparkContext.defaultParallelism} cores into {out}",
        file=sys.stderr,
    )
    shutil.rmtree(os.path.join(out, "_staging"), ignore_errors=True)

    for table in TABLES:
        folder = os.path.join(out, table)
        if os.path.isdir(folder) and any(not n.startswith((".", "_")) for n in os.listdir(folder)):
            spark.read.parquet(folder).createOrReplaceTempView(table)

    queries = {f"query{i + 1}": q for i, q in enumerate(args.query)} or REPORT
    for name, sql in queries.items():
        frame = spark.sql(sql)
        if args.json:
            for row in frame.collect():
                print(json.dumps({"query": name, **row.asDict()}, default=str, sort_keys=True))
        else:
            print(f"-- {name}")
            frame.show(n=1000, truncate=False)
    spark.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
