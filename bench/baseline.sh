#!/usr/bin/env bash
# The uploader a seller writes by hand: the same checks and steps as `bds deliver`, done with the usual tools,
# one after the other, as such a script is usually written.
#
#   BDS_BASE_URL=... BDS_API_KEY=... BDS_SOURCE_ID=... bench/baseline.sh <dir> <period>
#
# Pre-flight: sha256sum for the checksum, `zcat | wc -l` for the record count, `zcat | jq` to check that every
# line is a JSON object. Then create the batch (curl, jq), upload the file (curl -T, with Content-Length),
# complete it with the checksum (curl). Prints the batch id on stdout and the time of each phase on stderr
# as one line: "phases hash=<s> count=<s> check=<s> create=<s> upload=<s> complete=<s>".
set -euo pipefail

dir=$1
period=$2
file=$(ls "$dir"/*.jsonl.gz | head -n 1)
api="${BDS_BASE_URL%/}/api/v1"
now() { date +%s.%N; }

t0=$(now)
sha=$(sha256sum "$file" | cut -d ' ' -f 1)
t1=$(now)
count=$(zcat "$file" | wc -l)
t2=$(now)
# Every line a JSON object: jq stops with an error (exit 5, or 2 for invalid JSON) on the first bad one.
zcat "$file" | jq -c 'if type == "object" then empty else error("not a JSON object: \(.)") end'
t3=$(now)

body=$(jq -n -c \
  --arg source "$BDS_SOURCE_ID" --arg period "$period" --argjson count "$count" \
  --slurpfile schema "$dir/schema.json" --slurpfile report "$dir/report.json" \
  '{source_id: $source, product: "records", period: $period, record_count: $count, schema: $schema[0], report: $report[0]}')
created=$(curl -sS --fail-with-body -X POST "$api/batches" \
  -H "Authorization: Bearer $BDS_API_KEY" -H 'Content-Type: application/json' --data-binary "$body")
id=$(jq -r '.batch.id' <<<"$created")
url=$(jq -r '.upload.url' <<<"$created")
method=$(jq -r '.upload.method' <<<"$created")
headers=()
while IFS= read -r header; do headers+=(-H "$header"); done < <(jq -r '.upload.headers | to_entries[] | "\(.key): \(.value)"' <<<"$created")
t4=$(now)

curl -sS --fail-with-body -X "$method" -T "$file" "${headers[@]}" "$url" -o /dev/null
t5=$(now)

curl -sS --fail-with-body -X POST "$api/batches/$id/complete" \
  -H "Authorization: Bearer $BDS_API_KEY" -H 'Content-Type: application/json' \
  --data-binary "$(jq -n -c --arg sha "$sha" '{sha256: $sha}')" -o /dev/null
t6=$(now)

awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v f="$t5" -v g="$t6" 'BEGIN {
  printf "phases hash=%.3f count=%.3f check=%.3f create=%.3f upload=%.3f complete=%.3f\n", b-a, c-b, d-c, e-d, f-e, g-f
}' >&2
echo "$id"
