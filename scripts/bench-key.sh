#!/usr/bin/env bash
# A key for `judge bench` in a new SQLite database: a plan without a rate limit or allowance, an
# account on it with €1000 of balance. Prints the key (once) on stdout.
#   scripts/bench-key.sh <db file>
set -euo pipefail
cd "$(dirname "$0")/.."
db=$1
node bin/judge.js plans create --name bench --rpm 1000000 --allowance 0 --price 0.05 --create --db "$db" >/dev/null
acct=$(node bin/judge.js accounts create --name bench --plan bench --json --db "$db" | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
node bin/judge.js balance top-up --account "$acct" --amount 1000 --db "$db" >/dev/null
node bin/judge.js keys create --account "$acct" --json --db "$db" | node -pe 'JSON.parse(require("fs").readFileSync(0)).key'
