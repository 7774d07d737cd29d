import { z } from '../../lib/openapi';

export const SummarySchema = z
  .object({
    date: z.string().openapi({ format: 'date', description: 'The UTC day counted' }),
    window: z.literal('utc_day'),
    calls_today: z.number().int().openapi({ description: 'Calls placed today (original CDR rows; never-placed attempts excluded)' }),
    connected_today: z.number().int().openapi({ description: 'Of those, answered by a person (AMD human or answered without a machine verdict)' }),
    connect_rate: z.number().nullable().openapi({ description: 'connected_today / calls_today, null when no calls' }),
    agents_online: z.number().int().openapi({ description: 'Seats whose presence is not offline' }),
    agents_available: z.number().int(),
    campaigns_running: z.number().int(),
  })
  .openapi('StatsSummary');

export const PromiseStatsSchema = z
  .object({
    open: z.object({
      count: z.number().int(),
      amount_cents: z.record(z.string(), z.number().int()).openapi({ description: 'Pending amounts per currency; currencies never sum together' }),
    }),
    kept_rate_30d: z
      .number()
      .nullable()
      .openapi({ description: 'kept / (kept + broken) among promises due in the trailing 30 days; null when none resolved' }),
    window_days: z.literal(30),
  })
  .openapi('PromiseStats');

const PenetrationRow = z
  .object({
    campaign_id: z.string().uuid().nullable(),
    unique_accounts: z.number().int(),
    unique_consumers: z.number().int(),
    attempted: z.number().int(),
    reached: z.number().int(),
    effective_contact: z.number().int(),
    attempted_pct: z.number(),
    reached_pct: z.number(),
    effective_contact_pct: z.number(),
  })
  .openapi('PenetrationRow');

export const PenetrationSchema = z.object({ totals: PenetrationRow, by_campaign: z.array(PenetrationRow) }).openapi('Penetration');

export const PenetrationQuery = z.object({
  campaign_ids: z.string().optional().openapi({ description: 'Comma-separated campaign ids (at most 100); required unless campaign_id is given' }),
  campaign_id: z.string().optional().openapi({ description: 'A single campaign id (alternative spelling)' }),
  from: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Attempts from this instant (inclusive; default: all time)' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Attempts before this instant (exclusive; default: now)' }),
});

export const CapacitySchema = z
  .object({
    limits: z
      .object({
        max_cps: z.number().int().nullable().openapi({ description: 'Calls the tenant may start per second; null when unset' }),
        max_concurrent_channels: z.number().int().nullable().openapi({ description: 'Calls the tenant may have in flight; null when unset' }),
      })
      .nullable()
      .openapi({
        description:
          'The tenant’s dial ceilings. null means they could not be read and were never cached (the dial gate then fails closed); this service reads them in the same transaction as the counts, so an unreadable ceiling fails the request instead.',
      }),
    channels_in_use: z
      .number()
      .int()
      .openapi({ description: 'Original call rows started in the last 24 h that have not ended: no end of their own, no correction carrying ended_at, not marked not_placed' }),
    dials_last_second: z.number().int().openapi({ description: 'Original call rows started in the second before the request (the max_cps window)' }),
    supervision: z
      .object({
        limit: z.number().int().openapi({ description: 'Supervision sessions the tenant may hold at once: the deployment setting MAX_SUPERVISION_CHANNELS (max_supervision_channels, default 10)' }),
        in_use: z
          .number()
          .int()
          .openapi({ description: 'Live supervision sessions of the tenant: pending or active, one per (call, supervisor), on calls that have not ended' }),
      })
      .openapi({
        description:
          'A separate ceiling from max_concurrent_channels: supervisor legs never count in channels_in_use and calls never count here, so neither lane can exhaust the other.',
      }),
  })
  .openapi('Capacity');
