import type { Logger } from './logger';

/** Who is calling, resolved from the bearer credential (never from path, query or body). */
export type Principal =
  | { kind: 'api_key'; tenantId: string; apiKeyId: string }
  | { kind: 'user'; tenantId: string; userId: string; sessionId: string }
  | { kind: 'widget'; tenantId: string; widgetTokenId: string; agentId: string };

export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    principal: Principal;
  };
}
