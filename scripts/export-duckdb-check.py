#!/usr/bin/env python3
"""Read `kwire export`'s Parquet tables with DuckDB and print every row of
every table as JSON lines in the JSON-lines export's shape (capture times as
epoch seconds, record timestamps as epoch milliseconds, bytes as hex), so a
test compares them with `kwire export --format ndjson` row for row.

usage: export-duckdb-check.py PARQUET_DIR TABLE
"""
import json
import sys

import duckdb

directory, table = sys.argv[1], sys.argv[2]
con = duckdb.connect()
rel = con.sql(f"SELECT * FROM read_parquet('{directory}/{table}/*.parquet')")
columns = [(name, str(ty)) for name, ty in zip(rel.columns, rel.types)]
select = []
for name, ty in columns:
    q = f'"{name}"'
    if ty == "TIMESTAMP WITH TIME ZONE" and name == "timestamp" and table == "records":
        select.append(f"epoch_ms({q}) AS {q}")
    elif ty == "TIMESTAMP WITH TIME ZONE":
        select.append(f"epoch_us({q}) AS {q}")
    elif ty == "BLOB":
        select.append(f"lower(hex({q})) AS {q}")
    elif ty.startswith("STRUCT"):
        select.append(
            f"list_transform({q}, lambda h: {{'key': h.key, 'value': h.value, "
            f"'value_bytes': lower(hex(h.value_bytes))}}) AS {q}"
        )
    else:
        select.append(q)
out = con.sql(f"SELECT {', '.join(select)} FROM read_parquet('{directory}/{table}/*.parquet')")
for row in out.fetchall():
    obj = {}
    for (name, ty), value in zip(columns, row):
        if ty == "TIMESTAMP WITH TIME ZONE" and not (name == "timestamp" and table == "records") and value is not None:
            value = round(value / 1e6, 6)
        obj[name] = value
    print(json.dumps(obj, sort_keys=True))
