#!/usr/bin/env bash
# Re-records the workflow histories that test/integration/workflow-replay.test.ts replays
# (test/fixtures/workflow-histories, rules in docs/workflow-versioning.md): runs the end-to-end and
# flow tests with RECORD_WORKFLOW_HISTORIES=1, then replays every fixture, old and new, against the
# current workflow code. Extra arguments go to the recording jest run (e.g. --runInBand).
set -euo pipefail
cd "$(dirname "$0")/.."

# Its own database by default: the integration setup drops and recreates it.
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/dialer_test_histories}"

RECORDING_TESTS=(
  test/integration/campaign-run.e2e.test.ts
  test/integration/campaign-run.flows.test.ts
  test/integration/dial-loop.event-driven.test.ts
  test/integration/callback-promise-timers.test.ts
  test/integration/callback-dial.e2e.test.ts
  test/integration/webhook-delivery.test.ts
  test/integration/call-control.test.ts
  test/integration/supervision.test.ts
  test/integration/wrap-up.test.ts
  test/integration/sip-credentials.test.ts
  test/integration/password-reset-delivery.test.ts
  test/integration/billing-alerts.test.ts
  test/integration/auth-budgets.test.ts
  test/integration/inbound-calls.e2e.test.ts
  test/integration/recordings-every-call.e2e.test.ts
)

RECORD_WORKFLOW_HISTORIES=1 npx jest "${RECORDING_TESTS[@]}" --selectProjects integration "$@"
# A second run: the replay suite reads the fixtures when it loads, so it must start after the recording.
npx jest test/integration/workflow-replay.test.ts --selectProjects integration

echo "fixtures (bytes):"
find test/fixtures/workflow-histories -name '*.json' -printf '%s\t%P\n' | sort -k2
