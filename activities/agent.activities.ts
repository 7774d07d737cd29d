import type { AppDeps } from '../src/deps';
import { expireAgentWrapUp } from '../src/modules/agent-wrap-up/wrap-up.service';
import type { AgentWrapUpInput } from '../workflows/agent-wrap-up.workflow';

export function createAgentActivities(deps: AppDeps) {
  return {
    /** A guarded update: a stale timer (the seat left this wrap-up) changes nothing and answers false. */
    expireAgentWrapUp: async (input: AgentWrapUpInput): Promise<{ expired: boolean }> => ({ expired: await expireAgentWrapUp(deps, input) }),
  };
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;
