import type { Campaign, Prisma } from '../../../prisma/generated/client';
import type { z } from '../../lib/openapi';
import { channelOf, type CampaignSettings, type CampaignState, type CampaignType } from './campaign.rules';
import type { CampaignSchema } from './campaign.schemas';

type CampaignView = z.infer<typeof CampaignSchema>;

/** A decimal column in its normal form: no exponent, no trailing zeros ("0.03", "1.5", "3"). */
const decimalText = (d: Prisma.Decimal | null): string | null => (d === null ? null : d.toFixed());

/** A time(0) column (read by Prisma as 1970-01-01 in UTC) as HH:MM:SS. */
const timeText = (d: Date | null): string | null => (d === null ? null : d.toISOString().slice(11, 19));

const jsonObject = (value: Prisma.JsonValue): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};

/** The writable settings of a stored campaign, in the form campaign.rules works on. */
export function campaignSettings(c: Campaign): CampaignSettings {
  return {
    name: c.name,
    campaign_type: c.campaignType as CampaignType,
    sms_body: c.smsBody,
    abandonment_threshold: decimalText(c.abandonmentThreshold),
    min_dial_ratio: decimalText(c.minDialRatio),
    max_dial_ratio: decimalText(c.maxDialRatio),
    calling_window_start: timeText(c.callingWindowStart),
    calling_window_end: timeText(c.callingWindowEnd),
    default_timezone: c.defaultTimezone,
    calling_window_destination_local: c.callingWindowDestinationLocal,
    record_calls: c.recordCalls,
    ai_voice: c.aiVoice,
    amd_enabled: c.amdEnabled,
    optout_digit: c.optoutDigit,
    tts_prompt: c.ttsPrompt,
    ivr_menu: jsonObject(c.ivrMenu),
    deferred_bridge: c.deferredBridge,
    consult_config: jsonObject(c.consultConfig),
    carrier: c.carrier,
    caller_ids: c.callerIds,
    caller_id_pool: c.callerIdPool,
    ai_agent_id: c.aiAgentId,
  };
}

/** The Campaign resource, fields in the order of the specification. */
export function campaignView(c: Campaign): CampaignView {
  const s = campaignSettings(c);
  return {
    id: c.id,
    tenant_id: c.tenantId,
    name: s.name,
    state: c.state as CampaignState,
    campaign_type: s.campaign_type,
    channel: channelOf(s.campaign_type),
    sms_body: s.sms_body,
    abandonment_threshold: s.abandonment_threshold,
    min_dial_ratio: s.min_dial_ratio,
    max_dial_ratio: s.max_dial_ratio,
    calling_window_start: s.calling_window_start,
    calling_window_end: s.calling_window_end,
    default_timezone: s.default_timezone,
    calling_window_destination_local: s.calling_window_destination_local,
    record_calls: s.record_calls,
    ai_voice: s.ai_voice,
    amd_enabled: s.amd_enabled,
    optout_digit: s.optout_digit,
    tts_prompt: s.tts_prompt,
    ivr_menu: s.ivr_menu,
    deferred_bridge: s.deferred_bridge,
    consult_config: s.consult_config,
    carrier: s.carrier,
    caller_ids: s.caller_ids,
    caller_id_pool: s.caller_id_pool,
    ai_agent_id: s.ai_agent_id,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

const timeValue = (t: string | null): Date | null => (t === null ? null : new Date(`1970-01-01T${t}Z`));

/** Column values of the writable settings, assignable to a Prisma create and update alike. */
export interface CampaignColumns {
  name?: string;
  campaignType?: string;
  smsBody?: string | null;
  abandonmentThreshold?: string | null;
  minDialRatio?: string | null;
  maxDialRatio?: string | null;
  callingWindowStart?: Date | null;
  callingWindowEnd?: Date | null;
  defaultTimezone?: string | null;
  callingWindowDestinationLocal?: boolean;
  recordCalls?: boolean;
  aiVoice?: boolean;
  amdEnabled?: boolean | null;
  optoutDigit?: string | null;
  ttsPrompt?: string | null;
  ivrMenu?: Prisma.InputJsonObject;
  deferredBridge?: boolean;
  consultConfig?: Prisma.InputJsonObject;
  carrier?: string | null;
  callerIds?: string[];
  callerIdPool?: string[];
  aiAgentId?: string | null;
}

/** Prisma column values for the given settings keys. */
export function campaignData(s: CampaignSettings, keys: readonly (keyof CampaignSettings)[]): CampaignColumns {
  const data: CampaignColumns = {};
  for (const key of keys) {
    switch (key) {
      case 'name': data.name = s.name; break;
      case 'campaign_type': data.campaignType = s.campaign_type; break;
      case 'sms_body': data.smsBody = s.sms_body; break;
      case 'abandonment_threshold': data.abandonmentThreshold = s.abandonment_threshold; break;
      case 'min_dial_ratio': data.minDialRatio = s.min_dial_ratio; break;
      case 'max_dial_ratio': data.maxDialRatio = s.max_dial_ratio; break;
      case 'calling_window_start': data.callingWindowStart = timeValue(s.calling_window_start); break;
      case 'calling_window_end': data.callingWindowEnd = timeValue(s.calling_window_end); break;
      case 'default_timezone': data.defaultTimezone = s.default_timezone; break;
      case 'calling_window_destination_local': data.callingWindowDestinationLocal = s.calling_window_destination_local; break;
      case 'record_calls': data.recordCalls = s.record_calls; break;
      case 'ai_voice': data.aiVoice = s.ai_voice; break;
      case 'amd_enabled': data.amdEnabled = s.amd_enabled; break;
      case 'optout_digit': data.optoutDigit = s.optout_digit; break;
      case 'tts_prompt': data.ttsPrompt = s.tts_prompt; break;
      case 'ivr_menu': data.ivrMenu = s.ivr_menu as Prisma.InputJsonObject; break;
      case 'deferred_bridge': data.deferredBridge = s.deferred_bridge; break;
      case 'consult_config': data.consultConfig = s.consult_config as Prisma.InputJsonObject; break;
      case 'carrier': data.carrier = s.carrier; break;
      case 'caller_ids': data.callerIds = s.caller_ids; break;
      case 'caller_id_pool': data.callerIdPool = s.caller_id_pool; break;
      case 'ai_agent_id': data.aiAgentId = s.ai_agent_id; break;
    }
  }
  return data;
}
