#!/usr/bin/env bash
# The type check and the type-aware lint side by side: each keeps about one core busy, and the
# CI machine has two, so together they take about as long as the lint alone.
set -uo pipefail
cd "$(dirname "$0")/.."

npm run -s typecheck &
typecheck=$!
npm run -s lint
lint_status=$?
wait "$typecheck"
typecheck_status=$?

[ "$typecheck_status" -eq 0 ] || echo "static checks: the type check failed (exit $typecheck_status)" >&2
[ "$lint_status" -eq 0 ] || echo "static checks: the lint failed (exit $lint_status)" >&2
[ "$typecheck_status" -eq 0 ] && [ "$lint_status" -eq 0 ]
