import { z } from '../../lib/openapi';

/**
 * Options of one campaign run, fixed at start and carried by the run workflow (visible in its
 * input in the Temporal Web UI). Fail-closed: a wrong type, an out-of-range value or an unknown
 * key is 400 and nothing starts.
 */
export const RunnerOptionsBody = z
  .strictObject({
    tick_ms: z.number().int().min(100).max(60_000).default(1000).openapi({ description: 'Pause between dial ticks (100..60000 ms, default 1000)' }),
    batch_size: z.number().int().min(1).max(500).default(50).openapi({ description: 'Most leads decided and dialed per tick (1..500, default 50)' }),
    // In a request: a carrier id, checked against the tenant's active carriers when the run starts
    // (campaign-lifecycle.service). In the run's input: the switch gateway derived from that id.
    gateway: z
      .string()
      .max(64, 'a carrier id')
      .nullable()
      .default(null)
      .openapi({
        format: 'uuid',
        description:
          "The carrier consumer legs go out through: the id of one of the tenant's active carriers (its own, or an account-wide one it inherits), " +
          'or null for the deployment default gateway. Any other value, another tenant\'s carrier and a disabled or retired one are 400 `invalid` naming gateway. ' +
          'The switch gateway (`sofia/gateway/carrier-<id>/<number>`) is derived from the id, never taken from the request',
      }),
    // RFC 1123 host names: dot-separated labels of 1..63 letters, digits or hyphens that neither
    // start nor end with a hyphen, 253 characters in all (no empty label: 'a..b' is refused).
    agent_domain: z
      .string()
      .max(253, 'a domain name of at most 253 characters')
      .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, 'a domain name')
      .nullable()
      .default(null)
      .openapi({ description: 'Domain of agent legs (`user/<extension>@<domain>`); null = the switch default domain' }),
    call_ttl_ms: z
      .number()
      .int()
      .min(1000)
      .max(4 * 3600 * 1000)
      .default(2 * 3600 * 1000)
      .openapi({ description: 'A call still open this long after it was placed is hung up and recorded `reaped` (1000..14400000 ms, default 2 h)' }),
    blocked_cooldown_ms: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600 * 1000)
      .default(15 * 60 * 1000)
      .openapi({ description: 'How long a lead the compliance engine refused waits before it is decided again (default 15 min)' }),
  })
  .openapi('RunnerOptions');

export type RunnerOptions = z.infer<typeof RunnerOptionsBody>;

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = RunnerOptionsBody.parse({});
