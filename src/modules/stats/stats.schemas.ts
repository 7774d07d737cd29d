import { z } from '../../lib/openapi';
import { HANDLE_SAMPLE_CALLS } from '../dialer/capacity.repository';
import { DEFAULT_ANSWER_MS, DEFAULT_TALK_MS, MAX_HANDLE_MS, MAX_LEAD_MS, MIN_HANDLE_SAMPLES, MIN_LEAD_MS } from '../dialer/pacing';

export const CAPACITY_INTERVAL_MINUTES = [15, 30, 60] as const;
/** A day of quarter hours. */
export const MAX_CAPACITY_INTERVALS = 96;

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

const UUID_SOURCE = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
/** 1 to 100 comma-separated uuids, blanks around each allowed (they are trimmed). */
const CAMPAIGN_IDS_RE = new RegExp(`^\\s*${UUID_SOURCE}\\s*(,\\s*${UUID_SOURCE}\\s*){0,99}$`);

export const PenetrationQuery = z.object({
  campaign_ids: z
    .string()
    .regex(CAMPAIGN_IDS_RE, 'must be 1 to 100 comma-separated uuids')
    .optional()
    .openapi({
      description:
        'Comma-separated campaign ids (1 to 100, repeats counted once); required unless campaign_id is given (neither is 422 unprocessable: a rule across two parameters)',
    }),
  campaign_id: z
    .string()
    .regex(new RegExp(`^${UUID_SOURCE}$`), 'must be a uuid')
    .optional()
    .openapi({ format: 'uuid', description: 'A single campaign id (alternative spelling; ignored when campaign_ids is given)' }),
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
    agents: z
      .object({
        interval_minutes: z.number().int().openapi({ enum: [...CAPACITY_INTERVAL_MINUTES], description: 'Length of each interval (the interval_minutes parameter)' }),
        now: z
          .object({
            planned: z.number().int().openapi({ description: 'Active agents with a scheduled shift covering this instant' }),
            present: z.number().int().openapi({ description: 'Active agents online (presence not offline)' }),
            planned_present: z.number().int().openapi({ description: 'Of the planned agents, the ones online' }),
            dialable: z.number().int().openapi({ description: 'Seats the dial loop may take now: available and reachable (CONTRACT section 10), not reserved by a manual dial' }),
            leaving: z.number().int().openapi({
              description:
                'Dialable seats whose scheduled stretch of work (back-to-back shifts joined) ends within lead_time_seconds + handle_time_seconds: pacing leaves them out, so no new line is dialed for them',
            }),
            arriving: z.number().int().openapi({
              description:
                'Active agents neither dialable nor busy with a call, off shift now, whose next shift starts within lead_time_seconds: predictive pacing with over-dial allowed dials for them ahead of their start (never when no seat is dialable)',
            }),
            lead_time_seconds: z.number().int().openapi({
              description: `Mean time from dial to answer of the tenant's last ${HANDLE_SAMPLE_CALLS} answered outbound calls of the past day that an agent handled, within ${MIN_LEAD_MS / 1000}..${MAX_LEAD_MS / 1000} s; ${DEFAULT_ANSWER_MS / 1000} s until ${MIN_HANDLE_SAMPLES} such calls exist. Rounded to the second`,
            }),
            handle_time_seconds: z.number().int().openapi({
              description: `Mean talk time of those calls (${DEFAULT_TALK_MS / 1000} s until ${MIN_HANDLE_SAMPLES} exist) plus the tenant's agent_wrap_up_seconds, at most ${MAX_HANDLE_MS / 1000} s. Rounded to the second`,
            }),
          })
          .openapi({ description: 'The floor at the request instant, as the dial loop reads it from the plan' }),
        intervals: z
          .array(
            z.object({
              starts_at: z.string().openapi({ format: 'date-time' }),
              ends_at: z.string().openapi({ format: 'date-time' }),
              planned: z.number().int().openapi({ description: 'Active agents with a scheduled shift overlapping any part of the interval' }),
              present: z
                .number()
                .int()
                .nullable()
                .openapi({ description: 'Active agents online now, on the interval holding the request instant (the first); null on later intervals, which have no one present yet' }),
            }),
          )
          .openapi({ description: 'Consecutive intervals from the UTC interval boundary at or before the request instant, earliest first' }),
      })
      .openapi({ description: 'Planned shifts against the agents present' }),
  })
  .openapi('Capacity');

export const CapacityQuery = z.object({
  interval_minutes: z.coerce
    .number()
    .int()
    .refine((v) => (CAPACITY_INTERVAL_MINUTES as readonly number[]).includes(v), { message: 'must be 15, 30 or 60' })
    .default(30)
    .openapi({ type: 'integer', enum: [...CAPACITY_INTERVAL_MINUTES], description: 'Interval length in minutes: 15, 30 or 60 (default 30; anything else is 400)' }),
  intervals: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_CAPACITY_INTERVALS)
    .default(16)
    .openapi({ type: 'integer', minimum: 1, maximum: MAX_CAPACITY_INTERVALS, description: `How many intervals, 1..${MAX_CAPACITY_INTERVALS} (default 16; anything else is 400)` }),
});
