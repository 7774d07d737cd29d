import { ApplicationFailure } from '@temporalio/common';
import type { AppDeps } from '../src/deps';
import { persistTransition, type TransitionInput } from '../src/modules/ai-agents/ai-agent.lifecycle';
import { AI_AGENT_FAILURES } from '../workflows/ai-agent.workflow';

export function createAiAgentActivities(deps: AppDeps) {
  return {
    /**
     * Writes one lifecycle move with its audit row. Refusals (the tenant's voice AI is off, the
     * disclosure fails its check, the row is no longer in `from`) are typed and non-retryable; a
     * database fault is retried by the workflow's policy.
     */
    persistAiAgentTransition: async (input: TransitionInput): Promise<void> => {
      const result = await persistTransition(deps, input);
      switch (result.outcome) {
        case 'applied':
          return;
        case 'voice_ai_disabled':
          throw ApplicationFailure.nonRetryable(result.message, AI_AGENT_FAILURES.voiceAiDisabled);
        case 'disclosure_invalid':
          throw ApplicationFailure.nonRetryable(result.message, AI_AGENT_FAILURES.disclosureInvalid);
        case 'stale':
          throw ApplicationFailure.nonRetryable(result.message, AI_AGENT_FAILURES.stale, result.status);
      }
    },
  };
}

export type AiAgentActivities = ReturnType<typeof createAiAgentActivities>;
