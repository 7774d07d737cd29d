import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import {
  AiConversationEnvelope,
  AiConversationList,
  AiEligibility,
  AiMetricsToday,
  AiStatus,
  EligibilityQuery,
  ListConversationsQuery,
  SandboxBody,
  SandboxResult,
} from './ai-conversation.schemas';
import { aiMetricsToday, aiStatus, getConversation, listConversations } from './ai-conversation.service';
import { aiEligibility } from './ai-eligibility.service';
import { runSandbox } from './ai-sandbox.service';

const security = [{ bearer: [] }];
const tags = ['Voice AI'];
const middleware = [requireManagement];

const SCOPE = 'Tenant-management scope: a `ddw_` widget token is 403 `forbidden`, as is a suspended tenant; a missing or bad credential is 401.';
const ID_NOTE = 'An unknown id, an id of another tenant and a non-UUID id are the same 404 `not_found`.';
const MASKING = `Transcript rule (sandbox and live rows alike): agent lines are stored verbatim; consumer words are stored with every run
of 7 or more digits (consecutive digits at most two spaces, dashes, dots or parentheses apart, so "(555) 123-4567" is one run)
masked to the run's last four digits, separators kept ("(***) ***-4567"). The masking happens when the row is written, so no full phone, card or account
number is ever at rest in a transcript; the engine itself read the words unmasked.`;

export function aiConversationRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ai/agents/{id}/test',
      tags,
      security,
      middleware,
      summary: 'Sandbox conversation: run the engine over scripted consumer turns',
      description: `Runs the deterministic conversation engine against the agent's CURRENT policy version (its disclosure, policy and
handoff rules as they are now), over the scripted \`turns\`: the greeting at second 0, then consumer turn k at k ×
\`elapsed_seconds_per_turn\` seconds (default 10; the engine has no other clock, so the tenant's \`ai_max_call_seconds_effective\` ceiling
and wrap-up apply on that clock). Turns after the conversation ended are not read (\`sandbox.turns_used\`). The same request gives the same
transcript.

The synthetic \`debt\` defaults (per key): balance_cents 100000, currency USD, creditor_name 'Sample Creditor', account_last4 '6789',
ssn_last4 '1234', dob 1980-01-31, zip '10001', pin '2468', minimum_payment_cents 5000, due_date 2030-01-31, account_status 'past due'.
\`consult_config\` (the campaign closed schema) defaults to \`{}\`, no identity verification; a factor the debt lacks ends the run as
\`verification_failed\` (unverifiable), as a live call would. \`language\` defaults to the agent's voice.language (es for any Spanish tag).

Stores one \`ai_conversations\` row of kind \`sandbox\`: status \`ended\`, \`outcome\` (the engine's; null when the script ran out before the
engine ended the conversation), \`transcript\` [{speaker: agent|consumer, text, at_seconds}] (one agent entry per sentence, as on a live
call), \`events\` (the engine events, each with at_seconds), \`policy_version\`; no call, campaign or debt. Audit entry
\`ai_agent.sandbox_run\` (conversation id, policy version, outcome, turns used; never the transcript) in the same transaction. Never
sends a switch command, never meters (no ai_usage row, no AI spend), never writes a CDR row. \`sandbox.artificial_voice_disclosure\`
shows whether the tenant's ArtificialVoiceDisclosure is configured and valid (live artificial-voice calls need it); the sandbox runs
either way, and the AI agent speaks its own disclosure.

Draft, live and paused agents can be tested; a retired agent is 409 \`conflict\`. ${ID_NOTE} 400 \`bad_request\`: no turns or more than 50,
a turn over 1000 characters, a wrong type, an unknown key (also inside \`debt\`), a language other than en/es, elapsed_seconds_per_turn
outside 1..3600. 422 \`unprocessable\`: a \`consult_config\` the campaign validator refuses, or debt facts that are not what they claim
(currency code, four-digit last fours, 4-8 digit pin, five-digit zip, calendar dates). ${MASKING} ${SCOPE}`,
      request: { params: IdParam, body: jsonBody(SandboxBody) },
      responses: {
        200: jsonContent(SandboxResult, 'The stored sandbox conversation and how the run was set up'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json(await runSandbox(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id, c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/conversations',
      tags,
      security,
      middleware,
      summary: 'AI conversations (live calls and sandbox runs), newest first',
      description: `Summaries (no transcript or events), newest first by started_at then id. Filters, all optional and combined with AND:
\`ai_agent_id\`, \`campaign_id\`, \`kind\` (call | sandbox), \`status\` (active | ended | taken_over), \`outcome\` (an engine outcome),
\`from\` (inclusive) and \`to\` (exclusive) on started_at. \`limit\` default 100, max 1000; \`next_cursor\` is null on the last page. 400
\`bad_request\` for a malformed uuid, an unknown enum value, a bad date, a limit out of range or a bad cursor; 422 \`unprocessable\` for from after to. ${SCOPE}`,
      request: { query: ListConversationsQuery },
      responses: { 200: jsonContent(AiConversationList, 'A page of conversations'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await listConversations(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/conversations/{id}',
      tags,
      security,
      middleware,
      summary: 'One AI conversation with its transcript and events',
      description: `The detail: transcript, events, outcome, policy_version, call_id (the switch call uuid; null for sandbox runs),
campaign_id, debt_id, taken_over_by, taken_over_at, started_at, ended_at. The engine state is never shown (it holds debt facts).
${MASKING} ${ID_NOTE} ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(AiConversationEnvelope, 'The conversation'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ conversation: await getConversation(deps, c.get('principal').tenantId, c.req.valid('param').id) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/status',
      tags,
      security,
      middleware,
      summary: 'Voice-AI status of the tenant: kill switch, agents, calls in progress',
      description: `\`paused\` is the tenant-wide kill switch (POST /v1/ai/pause, /v1/ai/resume) with \`paused_at\` and its \`reason\` (null when
not paused); \`voice_ai_enabled\` the tenant flag; \`live_agents\` the AI agents in status live; \`active_conversations\` the AI calls in
progress (kind call, status active; sandbox runs are never active). ${SCOPE}`,
      responses: { 200: jsonContent(AiStatus, 'The status'), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await aiStatus(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/metrics/today',
      tags,
      security,
      middleware,
      summary: "Today's voice-AI figures (current UTC day)",
      description: `For the current UTC day [00:00, 24:00): \`conversations\` AI calls (kind call) started today, \`sandbox_runs\` sandbox runs
started today, \`outcomes\` those calls per outcome (calls still without one are left out), \`handoffs\` calls started today that ended in a
handoff or that a person took over, \`handoff_rate\` handoffs / conversations as a 4-decimal string (null with no conversation),
\`promises\` calls with outcome promise_to_pay; from metering: \`answered_ai_calls\` ai_usage rows answered today, their
\`billable_seconds\` and \`estimated_cost_usd\` (sum of the metered cost, 4-decimal string). Sandbox runs are never metered. ${SCOPE}`,
      responses: { 200: jsonContent(AiMetricsToday, "Today's figures"), ...errorResponses(401, 403) },
    }),
    async (c) => c.json(await aiMetricsToday(deps, c.get('principal').tenantId), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ai/eligibility',
      tags,
      security,
      middleware,
      summary: 'Per-campaign artificial-voice (AI) eligibility',
      description: `Whether each campaign could place AI calls now, and every reason it could not. With \`campaign_id\` only that campaign
(any type; unknown or foreign is 404 \`not_found\`); without it every campaign of type ai_voice or with \`ai_voice\` true, oldest first,
no paging. \`tenant\`: \`voice_ai_enabled\`, \`tier_allows_ai\` (growth, scale, enterprise and the retired compliance_pro, audit_shield),
\`paused\` (kill switch), \`budget\` {limit_usd (ai_monthly_budget_usd, null = no cap), spent_usd_month_to_date (metered cost since the
start of the UTC month), exhausted (spent ≥ limit)}.

\`eligible\` is true when \`reasons\` is empty. Reason codes, always in this order:
- \`voice_ai_disabled\`: the tenant's voice_ai_enabled is false.
- \`tier_not_eligible\`: the tenant's tier offers no voice-AI allowance.
- \`ai_paused\`: the tenant-wide kill switch is on.
- \`budget_exhausted\`: the month-to-date metered AI cost reached ai_monthly_budget_usd.
- \`no_ai_agent\`: the campaign names no AI agent.
- \`ai_agent_not_live\`: its AI agent is draft, paused or retired.
- \`disclosure_invalid\`: the tenant's ArtificialVoiceDisclosure is missing or fails the content check (the compliance engine then blocks
  every artificial-voice call), or the agent's disclosure fails the conversation engine's start check (it must identify the voice as
  automated and contain no prohibited phrase).
- \`no_prior_express_consent_path\`: an artificial-voice call needs prior express consent, which is per debt and number, so no lead of the
  campaign can be called: none of its leads (workable debts, open or in_collection, with a primary number) has an unrevoked voice consent
  on that number. \`consent\` reports consented_leads / total_leads and their share (4 decimals, null without leads); a campaign with some
  consented leads is not refused on this ground, and each call is still decided by the compliance engine.
The last two apply only to campaigns whose calls are artificial-voice calls (the compliance attempt profile: voice, ai_voice flag or an
artificial-voice type). 400 \`bad_request\` for a malformed campaign_id. ${SCOPE}`,
      request: { query: EligibilityQuery },
      responses: { 200: jsonContent(AiEligibility, 'The eligibility'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => c.json(await aiEligibility(deps, c.get('principal').tenantId, c.req.valid('query').campaign_id), 200),
  );

  return app;
}
