import { z } from '../../lib/openapi';

/** One entry of a call's timeline (CONTRACT section 11), as GET /v1/calls/{call_id} and the defense packet show it. */
export const TimelineEntrySchema = z
  .object({
    at: z.string().openapi({ format: 'date-time' }),
    event: z.enum(['originate', 'ringing', 'answered', 'amd', 'bridged', 'spoken', 'digit', 'recording_started', 'recording_stopped', 'transferred', 'hangup', 'heard', 'barge_in']),
    verdict: z.string().optional().openapi({ description: 'amd: HUMAN, MACHINE or NOTSURE' }),
    agent_id: z.string().nullable().optional().openapi({ description: 'bridged, transferred: the agent on the line' }),
    purpose: z
      .enum(['seller_message', 'consent_notice', 'disclosure', 'tts_prompt', 'menu', 'ai_turn'])
      .optional()
      .openapi({ description: 'spoken: why it was said' }),
    text: z.string().optional().openapi({ description: 'spoken: the words the switch said; heard: the words recognized, masked as the transcript masks them (absent once the transcript retention purged them)' }),
    confidence: z.number().nullable().optional().openapi({ description: "heard: the recognizer's confidence, 0..1 (null: the switch's own recognizer reported no confidence)" }),
    start_ms: z.number().nullable().optional().openapi({ description: "heard: where the utterance starts in the call's audio stream, in ms (null without the product's audio gateway)" }),
    end_ms: z.number().nullable().optional().openapi({ description: "heard: where it ends in the call's audio stream, in ms" }),
    digit: z.string().optional().openapi({ description: 'digit: the key pressed' }),
    cause: z.string().nullable().optional().openapi({ description: 'hangup: the hangup cause' }),
  })
  .catchall(z.unknown())
  .openapi('CallTimelineEntry', { description: 'One thing that happened on a call (CONTRACT section 11)' });

export type CallTimelineEntry = z.infer<typeof TimelineEntrySchema>;
