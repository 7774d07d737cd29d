import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../lib/audit';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonBody, jsonContent } from '../../lib/openapi';
import { CreatePlannedShiftBody, ListPlannedShiftsQuery, PlannedShiftEnvelope, PlannedShiftList } from './planned-shift.schemas';
import { cancelPlannedShift, createPlannedShift, listPlannedShifts } from './planned-shift.service';

const security = [{ bearer: [] }];
const tags = ['Agents'];
const middleware = [requireManagement];
const SCOPE =
  'Tenant-management scope: an API key or a dashboard session; a widget token (ddw_) is 403 forbidden. The dial loop reads the scheduled shifts at every tick (docs/dial-loop.md, Planned shifts) and GET /v1/stats/capacity sets them against the agents present.';

export function plannedShiftRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/planned-shifts',
      tags,
      security,
      middleware,
      summary: 'Planned shifts of the tenant, by start time',
      description: `Ordered by starts_at then id, earliest first. Filters combine with AND: \`agent_id\` (an unknown or foreign agent gives an
empty page; malformed is 400), \`status\` (scheduled or cancelled), and the window \`from\`/\`to\` (RFC 3339), which keeps the
shifts that overlap it (ends_at after from, starts_at before to). A bad timestamp, a bad status,
limit or cursor are 400; \`from\` not before \`to\` is 422 \`unprocessable\` (a rule across both fields). Pages with \`limit\` (default 100, max 1000) and \`cursor\`. ${SCOPE}`,
      request: { query: ListPlannedShiftsQuery },
      responses: { 200: jsonContent(PlannedShiftList, '{planned_shifts, next_cursor}'), ...errorResponses(400, 401, 403, 422) },
    }),
    async (c) => c.json(await listPlannedShifts(deps, c.get('principal').tenantId, c.req.valid('query')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/planned-shifts',
      tags,
      security,
      middleware,
      summary: 'Plan a shift for an agent',
      description: `Body \`{agent_id, starts_at, ends_at, note?}\`; the shift is created scheduled. A bad RFC 3339 timestamp, a note over 500
characters, a wrong type or an unknown key is 400. An unknown, foreign or malformed agent_id is 404. 422 unprocessable when
ends_at is not after starts_at, the shift lasts more than 16 hours, starts more than 366 days ahead, ends in the past, or the
agent is inactive. 409 conflict when it overlaps another scheduled shift of the same agent (back-to-back shifts do not overlap;
plans of one agent are serialized by a lock on the agent). Audited as planned_shift.created about the agent (the note itself
is not in the audit entry). ${SCOPE}`,
      request: { body: jsonBody(CreatePlannedShiftBody) },
      responses: {
        201: jsonContent(PlannedShiftEnvelope, '{planned_shift}'),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      const shift = await createPlannedShift(deps, principal.tenantId, actorOf(principal), c.req.valid('json'));
      return c.json({ planned_shift: shift }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/planned-shifts/{id}/cancel',
      tags,
      security,
      middleware,
      summary: 'Cancel a scheduled shift',
      description: `scheduled → cancelled (no body). A cancelled shift is final: cancelling it again is 409 conflict. An unknown, foreign or
malformed id is 404. Audited as planned_shift.cancelled about the agent. ${SCOPE}`,
      request: { params: IdParam },
      responses: { 200: jsonContent(PlannedShiftEnvelope, '{planned_shift}'), ...errorResponses(401, 403, 404, 409) },
    }),
    async (c) => {
      const principal = c.get('principal');
      return c.json({ planned_shift: await cancelPlannedShift(deps, principal.tenantId, actorOf(principal), c.req.valid('param').id) }, 200);
    },
  );

  return app;
}
