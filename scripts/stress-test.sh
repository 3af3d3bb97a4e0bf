#!/usr/bin/env bash
# The test suite under CPU contention: two busy loops run beside it, as other work on a
# developer's machine or a shared CI runner would. Passes when the suite passes RUNS times
# in a row (default 3); stops at the first failing run.
#   bash scripts/stress-test.sh            # three runs
#   RUNS=1 bash scripts/stress-test.sh     # one
# Extra arguments go to node --test instead of the whole suite's glob, e.g. one file:
#   bash scripts/stress-test.sh test/cluster/nodes/nodes.integration.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
RUNS="${RUNS:-3}"
LOADERS="${LOADERS:-2}"

pids=()
stop_loaders() {
  # Only the loops this script started, by their own ids.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_loaders EXIT INT TERM
for _ in $(seq "$LOADERS"); do
  bash -c 'while :; do :; done' &
  pids+=("$!")
done
echo "stress-test: $LOADERS busy loops (pids ${pids[*]}), $RUNS run(s)"

bash scripts/ensure-chromium.sh
bash scripts/ensure-python-client.sh
npm run typecheck
npm run lint
if [ "$#" -gt 0 ]; then tests=("$@"); else tests=('test/**/*.test.ts'); fi
for run in $(seq "$RUNS"); do
  echo "stress-test: run $run of $RUNS ($(date -u +%H:%M:%S) UTC)"
  started=$SECONDS
  # As npm test runs the suite.
  if ! node --test --test-concurrency=2 --test-timeout=600000 \
    --import ./test/support/no-servers.ts "${tests[@]}"; then
    echo "stress-test: run $run failed after $((SECONDS - started)) s" >&2
    exit 1
  fi
  echo "stress-test: run $run passed in $((SECONDS - started)) s"
done
echo "stress-test: $RUNS run(s) in a row passed under load"
