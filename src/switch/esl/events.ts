import type { Event as ModeslEvent } from 'modesl';

/**
 * A switch event as the product sees it: FreeSWITCH's headers as strings, the channel variables
 * (`variable_<name>` headers) with the prefix removed, and the body (BACKGROUND_JOB result).
 */
export interface EslEvent {
  /** Event-Name, e.g. CHANNEL_ANSWER, CUSTOM, BACKGROUND_JOB. */
  name: string;
  /** Event-Subclass of CUSTOM events, e.g. `amd`, `sofia::register`. */
  subclass?: string;
  /** Unique-ID: the channel (call leg) uuid. */
  uuid?: string;
  /** Job-UUID of BACKGROUND_JOB. */
  jobUuid?: string;
  headers: Record<string, string>;
  variables: Record<string, string>;
  body: string;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/** A header of a modesl event as a string ('' when absent). */
export function headerText(ev: ModeslEvent, name: string): string {
  return text(ev.getHeader(name));
}

export function fromModeslEvent(ev: ModeslEvent): EslEvent {
  const headers: Record<string, string> = {};
  const variables: Record<string, string> = {};
  for (const { name, value } of ev.headers) {
    if (name === '_body') continue;
    const v = text(value);
    headers[name] = v;
    if (name.startsWith('variable_')) variables[name.slice('variable_'.length)] = v;
  }
  const body = typeof ev.body === 'string' ? ev.body : '';
  return {
    name: headers['Event-Name'] ?? '',
    subclass: headers['Event-Subclass'] || undefined,
    uuid: headers['Unique-ID'] || undefined,
    jobUuid: headers['Job-UUID'] || undefined,
    headers,
    variables,
    body,
  };
}
