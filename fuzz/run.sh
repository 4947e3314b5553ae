#!/bin/sh
# Runs fuzz targets one at a time (niced, one libFuzzer worker, seconds per
# target in $SECS, default 600) from fuzz/; libFuzzer's log of each run is
# kept as fuzz/logs/<target>.log (git-ignored). Seed first: fuzz/seed.sh.
# Build first: `cargo +nightly fuzz build` (the binaries run here are the
# ones `cargo fuzz run` would run, with its corpus and artifact paths, so a
# library edit during the runs does not trigger a rebuild mid-sequence).
# Usage: fuzz/run.sh [target...]
set -u
cd "$(dirname "$0")"
secs=${SECS:-600}
targets=${*:-yaml_roundtrip gotmpl kustomization strategic_merge json_patch chart_tgz}
mkdir -p logs
for t in $targets; do
  rm -f fuzz-0.log
  mkdir -p "artifacts/$t" "corpus/$t"
  nice -n 15 "target/x86_64-unknown-linux-gnu/release/$t" -artifact_prefix="artifacts/$t/" \
    -jobs=1 -workers=1 \
    -rss_limit_mb=2048 -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
    "corpus/$t" > "logs/$t.out" 2>&1
  mv fuzz-0.log "logs/$t.log" 2>/dev/null || cp "logs/$t.out" "logs/$t.log"
  echo "$t: $(grep -E '^#[0-9]+ *DONE|^==[0-9]+== ERROR|^SUMMARY|deadly signal|stat::number_of_executed_units' "logs/$t.log" | tr '\n' ' ')"
done
