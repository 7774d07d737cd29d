import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, IdParam, jsonContent } from '../../lib/openapi';
import { SurveyResultsQuery, SurveyResultsSchema } from './survey.schemas';
import { surveyResults } from './survey.service';

export function surveyRoutes(deps: AppDeps) {
  const app = createRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/campaigns/{id}/survey-results',
      tags: ['Campaigns'],
      security: [{ bearer: [] }],
      middleware: [requireManagement],
      summary: 'Key-press distribution of a survey or IVR campaign',
      description: `What consumers pressed on the campaign's calls, per menu: presses per key, per menu action, and the
presses no menu entry matched. The window is half-open, [from, to), unbounded on a side that is not given; \`from\`
after \`to\` or a bad RFC 3339 timestamp is 400. Answered calls are windowed on the time the call started, presses on
the time they were pressed. A menu appears once someone pressed a key in it; \`menu_path\` is the keys leading to it
from the root (\`""\`). Any campaign type answers; one without key presses reports zeros and no menus. A foreign or
unknown campaign id is 404.`,
      request: { params: IdParam, query: SurveyResultsQuery },
      responses: { 200: jsonContent(SurveyResultsSchema, 'Survey results'), ...errorResponses(400, 401, 403, 404, 422) },
    }),
    async (c) => c.json(await surveyResults(deps, c.get('principal').tenantId, c.req.valid('param').id, c.req.valid('query')), 200),
  );
  return app;
}
