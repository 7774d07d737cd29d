/**
 * Parsing of `originate` arguments the way FreeSWITCH reads them:
 *
 *   originate {var=value,var2='quoted, value'}[leg_var=x]<endpoint> &app(arg)|<exten> [dialplan] [context] [cid_name] [cid_num] [timeout_sec]
 *
 * Endpoints understood: `sofia/gateway/<gw>/<number>`, `sofia/<profile>/<number>[@host]`,
 * `loopback/<number>` (consumer legs, the plan decides them), `user/<ext>[@domain]` (agent legs) and
 * `error/<CAUSE>` (fails at once with that cause).
 */

export type Endpoint =
  | { kind: 'pstn'; tech: 'sofia' | 'loopback'; profile: string; gateway?: string; number: string; host?: string; channelName: string }
  | { kind: 'user'; extension: string; domain?: string; channelName: string }
  | { kind: 'error'; cause: string }
  | { kind: 'unsupported'; tech: string };

export interface DialString {
  vars: Array<[string, string]>;
  endpoint: Endpoint;
}

export type OriginateTarget =
  | { kind: 'app'; app: string; arg: string }
  | { kind: 'exten'; exten: string; dialplan: string; context: string };

export interface OriginateRequest extends DialString {
  raw: string;
  target: OriginateTarget;
  cidName?: string;
  cidNumber?: string;
  timeoutSec?: number;
}

export const ORIGINATE_USAGE =
  '-USAGE: <call url> <exten>|&<application_name>(<app_args>) [<dialplan>] [<context>] [<cid_name>] [<cid_num>] [<timeout_sec>]\n';

/** Splits on spaces outside single quotes, double quotes, {}, [], <> and (). */
export function splitArgs(input: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === '\\' && i + 1 < input.length) {
      cur += c + input[i + 1];
      i++;
      continue;
    }
    if (quote) {
      if (c === quote) quote = null;
      cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      cur += c;
      continue;
    }
    if ('{[<('.includes(c)) depth++;
    if ('}]>)'.includes(c) && depth > 0) depth--;
    if (c === ' ' && depth === 0) {
      if (cur) out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith("'") && v.endsWith("'")) || (v.startsWith('"') && v.endsWith('"')))) {
    return v.slice(1, -1);
  }
  return v;
}

/** `a=b,c='d, e'` (or `^^:a=b:c=d` with a custom separator) into ordered pairs. */
export function parseVarList(inner: string): Array<[string, string]> {
  let sep = ',';
  let text = inner;
  if (text.startsWith('^^') && text.length >= 3) {
    sep = text[2]!;
    text = text.slice(3);
  }
  const items: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      cur += text[i + 1];
      i++;
      continue;
    }
    if (quote) {
      if (c === quote) quote = null;
      cur += c;
      continue;
    }
    if (c === "'") {
      quote = c;
      cur += c;
      continue;
    }
    if (c === sep) {
      items.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  items.push(cur);
  const out: Array<[string, string]> = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    out.push([item.slice(0, eq).trim(), unquote(item.slice(eq + 1).trim())]);
  }
  return out;
}

function takeBlock(s: string, open: string, close: string): { inner: string; rest: string } | null {
  if (!s.startsWith(open)) return null;
  let quote: string | null = null;
  for (let i = 1; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (quote) {
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'") quote = c;
    else if (c === close) return { inner: s.slice(1, i), rest: s.slice(i + 1) };
  }
  return null;
}

export function parseEndpoint(s: string): Endpoint {
  const slash = s.indexOf('/');
  const tech = (slash < 0 ? s : s.slice(0, slash)).toLowerCase();
  const rest = slash < 0 ? '' : s.slice(slash + 1);
  if (tech === 'user') {
    const at = rest.indexOf('@');
    const extension = at < 0 ? rest : rest.slice(0, at);
    const domain = at < 0 ? undefined : rest.slice(at + 1);
    return { kind: 'user', extension, domain, channelName: `sofia/internal/${extension}@${domain ?? 'default'}` };
  }
  if (tech === 'error') return { kind: 'error', cause: rest.toUpperCase() || 'NORMAL_CLEARING' };
  if (tech === 'sofia') {
    const parts = rest.split('/');
    if (parts[0] === 'gateway' && parts.length >= 3) {
      const number = parts.slice(2).join('/').replace(/^sip:/, '').split('@')[0]!;
      return { kind: 'pstn', tech: 'sofia', profile: 'external', gateway: parts[1], number, channelName: `sofia/external/${number}` };
    }
    const profile = parts[0] ?? '';
    const target = parts.slice(1).join('/').replace(/^sip:/, '');
    const [number = '', host] = target.split('@');
    return { kind: 'pstn', tech: 'sofia', profile, number, host, channelName: `sofia/${profile}/${target}` };
  }
  if (tech === 'loopback') {
    const number = rest.split('/')[0] ?? '';
    return { kind: 'pstn', tech: 'loopback', profile: 'loopback', number, channelName: `loopback/${number}-a` };
  }
  return { kind: 'unsupported', tech };
}

/** `{global vars}[leg vars]endpoint` into the merged variables and the endpoint. */
export function parseDialString(s: string): DialString {
  const vars: Array<[string, string]> = [];
  let rest = s.trim();
  for (;;) {
    const block = takeBlock(rest, '{', '}') ?? takeBlock(rest, '[', ']') ?? takeBlock(rest, '<', '>');
    if (!block) break;
    vars.push(...parseVarList(block.inner));
    rest = block.rest.trimStart();
  }
  return { vars, endpoint: parseEndpoint(rest) };
}

/** `&app(arg)` or `&app arg`-less `&app()` into app and argument. */
export function parseApp(s: string): { app: string; arg: string } | null {
  const m = /^&([A-Za-z_][A-Za-z0-9_]*)(?:\((.*)\))?$/s.exec(s);
  if (!m) return null;
  return { app: m[1]!.toLowerCase(), arg: (m[2] ?? '').trim() };
}

export function parseOriginate(args: string): OriginateRequest | { error: string } {
  const argv = splitArgs(args.trim());
  if (argv.length < 2) return { error: ORIGINATE_USAGE };
  const [url, second, dialplan, context, cidName, cidNumber, timeout] = argv as [string, string, ...Array<string | undefined>];
  const dial = parseDialString(url);
  let target: OriginateTarget;
  if (second.startsWith('&')) {
    const app = parseApp(second);
    if (!app) return { error: ORIGINATE_USAGE };
    target = { kind: 'app', ...app };
  } else {
    target = { kind: 'exten', exten: second, dialplan: dialplan ?? 'XML', context: context ?? 'default' };
  }
  const timeoutSec = timeout !== undefined && /^\d+$/.test(timeout) ? Number(timeout) : undefined;
  return {
    raw: args,
    ...dial,
    target,
    cidName: cidName !== undefined && cidName !== 'undef' ? unquote(cidName) : undefined,
    cidNumber: cidNumber !== undefined && cidNumber !== 'undef' ? unquote(cidNumber) : undefined,
    timeoutSec,
  };
}
