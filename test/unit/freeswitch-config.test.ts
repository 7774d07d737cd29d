import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { carrierGatewayName } from '../../src/modules/carriers/carrier.rules';
import { GATEWAY_PROFILE, gatewayConfigurationXml } from '../../src/modules/carriers/carrier-gateway';
import { SWITCH_DIRECTORY_PATH } from '../../src/modules/switch-directory/switch-directory.routes';
import { ESL_EVENTS } from '../../src/switch/esl/manager';
import { dialString } from '../../src/switch/esl/commands';

/**
 * docs/freeswitch is the switch configuration the product needs, as deployable files: every XML
 * file must be well-formed, and the names in them must be the code's (a rename on either side fails here).
 */

const DIR = path.join(__dirname, '../../docs/freeswitch');

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
}

const NAME = '[A-Za-z_][\\w.:-]*';
const ATTR_RE = new RegExp(`^(${NAME})\\s*=\\s*(?:"([^"<]*)"|'([^'<]*)')`);

/**
 * A strict parser for the subset these files use (prolog, comments, elements, attributes, text):
 * one root, every tag closed in order, attributes quoted and not repeated, `&` only as an entity.
 * Throws naming the offset of the first fault.
 */
function parseXml(text: string): XmlElement {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at offset ${i}`);
  };
  const skipMisc = () => {
    for (;;) {
      const ws = /^\s*/.exec(text.slice(i))![0].length;
      i += ws;
      if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i + 4);
        if (end < 0) fail('unterminated comment');
        if (text.slice(i + 4, end).includes('--')) fail('"--" inside a comment');
        i = end + 3;
      } else if (text.startsWith('<?', i)) {
        const end = text.indexOf('?>', i);
        if (end < 0) fail('unterminated processing instruction');
        i = end + 2;
      } else return;
    }
  };
  const checkText = (s: string) => {
    if (/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(s)) fail('bare & in text');
  };
  const element = (): XmlElement => {
    const open = new RegExp(`^<(${NAME})`).exec(text.slice(i));
    if (!open) return fail('expected an element');
    i += open[0].length;
    const el: XmlElement = { name: open[1]!, attrs: {}, children: [] };
    for (;;) {
      const ws = /^\s*/.exec(text.slice(i))![0].length;
      i += ws;
      if (text.startsWith('/>', i)) {
        i += 2;
        return el;
      }
      if (text[i] === '>') {
        i += 1;
        break;
      }
      if (ws === 0) fail('expected whitespace before an attribute');
      const attr = ATTR_RE.exec(text.slice(i));
      if (!attr) fail(`malformed attribute in <${el.name}>`);
      if (attr![1]! in el.attrs) fail(`attribute ${attr![1]} repeated`);
      const value = attr![2] ?? attr![3]!;
      checkText(value);
      el.attrs[attr![1]!] = value;
      i += attr![0].length;
    }
    for (;;) {
      const lt = text.indexOf('<', i);
      if (lt < 0) fail(`<${el.name}> is never closed`);
      checkText(text.slice(i, lt));
      i = lt;
      if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i + 4);
        if (end < 0) fail('unterminated comment');
        i = end + 3;
      } else if (text.startsWith('</', i)) {
        const close = new RegExp(`^</(${NAME})\\s*>`).exec(text.slice(i));
        if (!close || close[1] !== el.name) fail(`expected </${el.name}>`);
        i += close![0].length;
        return el;
      } else el.children.push(element());
    }
  };
  skipMisc();
  const root = element();
  skipMisc();
  if (i !== text.length) fail('content after the root element');
  return root;
}

function* walk(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const c of el.children) yield* walk(c);
}

const find = (root: XmlElement, name: string, attrs: Record<string, string> = {}): XmlElement[] =>
  [...walk(root)].filter((e) => e.name === name && Object.entries(attrs).every(([k, v]) => e.attrs[k] === v));

function xmlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? xmlFiles(p) : f.endsWith('.xml') ? [p] : [];
  });
}

const doc = (rel: string) => parseXml(readFileSync(path.join(DIR, rel), 'utf8'));
const paramOf = (root: XmlElement, name: string) => find(root, 'param', { name })[0]?.attrs.value;

describe('the XML parser of this test', () => {
  it.each([
    ['an unclosed element', '<a><b></a>'],
    ['a mismatched close', '<a></b>'],
    ['an unquoted attribute', '<a x=1/>'],
    ['a repeated attribute', '<a x="1" x="2"/>'],
    ['a bare ampersand', '<a>x & y</a>'],
    ['two roots', '<a/><b/>'],
    ['an unterminated comment', '<a><!-- x</a>'],
  ])('refuses %s', (_what, xml) => {
    expect(() => parseXml(xml)).toThrow();
  });

  it('reads elements and attributes', () => {
    expect(parseXml('<?xml version="1.0"?>\n<!-- c --><a k="v"><b/>t &amp; u</a>')).toEqual({ name: 'a', attrs: { k: 'v' }, children: [{ name: 'b', attrs: {}, children: [] }] });
  });
});

describe('docs/freeswitch', () => {
  const files = xmlFiles(DIR);

  it('holds the files the README lists, every one well-formed XML', () => {
    const rel = files.map((f) => path.relative(DIR, f)).sort();
    expect(rel).toEqual([
      'autoload_configs/acl.conf.xml',
      'autoload_configs/event_socket.conf.xml',
      'autoload_configs/modules.conf.xml',
      'autoload_configs/switch.conf.xml',
      'autoload_configs/xml_curl.conf.xml',
      'dialplan/public.xml',
      'examples/gateway-answer.xml',
      'sip_profiles/external.xml',
      'sip_profiles/external/default.xml',
      'sip_profiles/internal.xml',
    ]);
    const readme = readFileSync(path.join(DIR, 'README.md'), 'utf8');
    for (const f of rel) {
      expect(() => parseXml(readFileSync(path.join(DIR, f), 'utf8'))).not.toThrow();
      expect(readme).toContain(`\`${f}\``);
    }
  });

  it('loads the modules the product uses: event socket, sofia, xml_curl before sofia, dptools, commands, amd and the default TTS engine', () => {
    const modules = find(doc('autoload_configs/modules.conf.xml'), 'load').map((l) => l.attrs.module);
    const engine = loadConfig({ DATABASE_URL: 'postgresql://x@127.0.0.1/x' }).TTS_ENGINE;
    for (const m of ['mod_event_socket', 'mod_sofia', 'mod_xml_curl', 'mod_dptools', 'mod_commands', 'mod_amd', `mod_${engine}`]) expect(modules).toContain(m);
    expect(modules.indexOf('mod_xml_curl')).toBeLessThan(modules.indexOf('mod_sofia'));
  });

  it('the event socket takes a password and an inbound ACL list that acl.conf defines', () => {
    const es = doc('autoload_configs/event_socket.conf.xml');
    expect(paramOf(es, 'password')).toMatch(/^REPLACE-WITH-ESL_PASSWORD$/);
    const acl = paramOf(es, 'apply-inbound-acl');
    expect(find(doc('autoload_configs/acl.conf.xml'), 'list', { name: acl! })).toHaveLength(1);
  });

  it('the README subscribes exactly to ESL_EVENTS', () => {
    const readme = readFileSync(path.join(DIR, 'README.md'), 'utf8');
    const line = readme.split('\n').find((l) => l.startsWith('event json '));
    expect(line).toBe(`event json ${ESL_EVENTS.join(' ')}`);
  });

  it('switch.conf keeps the 20 s heartbeat the liveness probe listens for', () => {
    expect(paramOf(doc('autoload_configs/switch.conf.xml'), 'event-heartbeat-interval')).toBe('20');
  });

  it("xml_curl posts the directory and the configuration to the product's switch path with the switch's basic credentials", () => {
    const curl = doc('autoload_configs/xml_curl.conf.xml');
    const bindings = find(curl, 'binding');
    expect(bindings.map((b) => b.attrs.name)).toEqual(['directory', 'gateways']);
    const sections = bindings.map((b) => find(b, 'param', { name: 'gateway-url' })[0]!);
    expect(sections.map((p) => p.attrs.bindings)).toEqual(['directory', 'configuration']);
    for (const [i, b] of bindings.entries()) {
      expect(new URL(sections[i]!.attrs.value!).pathname).toBe(SWITCH_DIRECTORY_PATH);
      expect(paramOf(b, 'auth-scheme')).toBe('basic');
      expect(paramOf(b, 'gateway-credentials')).toBe('freeswitch:REPLACE-WITH-SWITCH_DIRECTORY_TOKEN');
    }
  });

  it("the profiles are the code's: agents register on internal (challenged, digest user apart from the extension), gateways on external", () => {
    const internal = doc('sip_profiles/internal.xml');
    expect(internal.attrs.name).toBe('internal');
    expect(paramOf(internal, 'auth-calls')).toBe('true');
    expect(paramOf(internal, 'inbound-reg-force-matching-username')).toBe('false');
    const external = doc('sip_profiles/external.xml');
    expect(external.attrs.name).toBe(GATEWAY_PROFILE);
    expect(paramOf(external, 'context')).toBe('public');
    expect(find(doc('dialplan/public.xml'), 'context', { name: 'public' })).toHaveLength(1);
    expect(find(doc('dialplan/public.xml'), 'action', { application: 'park' })).toHaveLength(1);
  });

  it('the static default gateway is the one a campaign without a carrier dials through', () => {
    const [gw] = find(doc('sip_profiles/external/default.xml'), 'gateway');
    expect(dialString({ type: 'pstn', number: '+15551230042' })).toBe(`sofia/gateway/${gw!.attrs.name}/+15551230042`);
  });

  it("the example gateway answer is the product's own, named carrier-<id>", () => {
    const id = '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10';
    const text = readFileSync(path.join(DIR, 'examples/gateway-answer.xml'), 'utf8');
    expect(text).toBe(gatewayConfigurationXml(id, 'sip.carrier.example:5060'));
    const answer = parseXml(text);
    expect(find(answer, 'profile').map((p) => p.attrs.name)).toEqual([GATEWAY_PROFILE]);
    expect(find(answer, 'gateway').map((g) => g.attrs.name)).toEqual([carrierGatewayName(id)]);
    expect(carrierGatewayName(id)).toBe(`carrier-${id}`);
  });
});
