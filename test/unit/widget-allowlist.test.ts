import { randomUUID } from 'node:crypto';
import { WIDGET_ALLOWLIST, widgetMayCall } from '../../src/lib/widget-allowlist';

const concrete = (template: string) => template.replace(/\{[a-z_]+\}/g, () => randomUUID());

/** Whether a listed entry of `method` covers the literal `path` through one of its parameters (GET /v1/agents/{id} covers GET /v1/agents/checkin). */
function coveredBy(method: string, path: string): boolean {
  const segments = path.split('/');
  return WIDGET_ALLOWLIST.some((e) => {
    const own = e.path.split('/');
    return e.method === method && own.length === segments.length && own.every((s, i) => s.startsWith('{') || s === segments[i]);
  });
}

describe('widgetMayCall', () => {
  it('opens every listed route with its parameters filled in, for its method only', () => {
    for (const { method, path } of WIDGET_ALLOWLIST) {
      expect([method, path, widgetMayCall(method, concrete(path))]).toEqual([method, path, true]);
      for (const other of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => m !== method && !coveredBy(m, path))) {
        expect([other, path, widgetMayCall(other, concrete(path))]).toEqual([other, path, false]);
      }
    }
  });

  it('matches whole paths: no prefixes, suffixes, extra segments, trailing slashes or other cases', () => {
    const id = randomUUID();
    for (const [method, path] of [
      ['GET', '/v1/me/password'],
      ['GET', '/v1/me/'],
      ['GET', '/v1'],
      ['GET', '/v1/calls/'],
      ['GET', `/v1/calls/${id}/`],
      ['GET', `/v1/calls/${id}/recording`],
      ['POST', `/v1/calls/${id}/hold/extra`],
      ['POST', '/v1/calls//hold'],
      ['POST', `/x/v1/calls/${id}/hold`],
      ['GET', '/V1/ME'],
      ['POST', `/v1/calls/${id}/transfer`],
      ['POST', '/v1/widget_tokens'],
      ['GET', '/v1/widget_tokens'],
      ['POST', `/v1/agents/${id}/credential`],
      ['GET', '/v1/call_attempts'],
      ['GET', '/v1/api_keys'],
      ['POST', '/v1/ws/ticket/extra'],
    ] as const) {
      expect([method, path, widgetMayCall(method, path)]).toEqual([method, path, false]);
    }
  });

  it('takes a parameter only as one path segment', () => {
    expect(widgetMayCall('GET', '/v1/calls/abc')).toBe(true);
    expect(widgetMayCall('GET', '/v1/calls/a/b')).toBe(false);
    expect(widgetMayCall('POST', `/v1/supervision/calls/${randomUUID()}/listen`)).toBe(true);
    expect(widgetMayCall('POST', `/v1/supervision/calls/${randomUUID()}/record`)).toBe(false);
  });
});
