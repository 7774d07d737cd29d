import { createRoute } from '@hono/zod-openapi';
import type { AppDeps } from '../../deps';
import { requireManagement } from '../../lib/auth';
import { createRouter, errorResponses, jsonBody, jsonContent } from '../../lib/openapi';
import { ANCHOR_WINDOW, DISCLOSURE_EXAMPLES, PAIR_GAP } from './disclosure.rules';
import { DisclosureEnvelope, MAX_DISCLOSURE_BYTES, PutDisclosureBody } from './disclosure.schemas';
import { getDisclosure, putDisclosure } from './disclosure.service';

const security = [{ bearer: [] }];
const tags = ['Compliance'];
const middleware = [requireManagement];

const PUT_DESCRIPTION = `Stores the tenant's artificial-voice disclosure: what a prerecorded or artificial-voice call (AI voices
included, FCC 24-17) says to identify itself as automated (47 CFR 64.1200(b)). The compliance engine refuses an
artificial-voice call while no acceptable disclosure is stored. Tenant-management scope (a \`ddw_\` widget token
is 403). Body \`{text}\` only: any other key, \`source\` and \`actor\` included, is 400 naming it (both are set by the
server: source \`api\`; actor the agent id of a widget token, else the user id of a dashboard session, else
\`api_key:<key id>\`). The text is stored verbatim; it is at most ${MAX_DISCLOSURE_BYTES} bytes of UTF-8 and has no control
characters other than tab and line breaks (400 \`bad_request\`). Each change writes an audit entry
(\`artificial_voice_disclosure.updated\`, with the text and the digest of the one it replaced); sending the stored
text again changes nothing.

**Content check** (400 \`bad_request\` and nothing stored when it fails). The text must clearly identify the voice
as automated, in English or Spanish. Matching ignores case, accents and punctuation; a sentence ends at
. ! ? ; : ¡ ¿ or a line break. The text passes when at least one sentence does all of the following and no
sentence negates it:

1. It refers to the call itself: a self-reference ("this is", "it's", "you are", "you have reached", "I am",
   "calling", "speaking with", "esta es", "este es", "soy", "le habla", "está hablando con", "le llamamos"), an
   anchor naming the call ("this call", "this message", "the voice you hear", "esta llamada", "este mensaje"), or
   "this"/"esta"/"este" directly before the identification.
2. Within ${ANCHOR_WINDOW} words after it comes the identification: a term for automation (automated, prerecorded,
   artificial, computer-generated, synthetic, virtual, automatizada, pregrabado, artificial, virtual, sintética...)
   at most ${PAIR_GAP} words from a singular term for the call, voice, message or assistant (call, voice, message,
   assistant, agent, system, recording, llamada, voz, mensaje, asistente, sistema...), in either order; or a term
   that is both (AI, artificial intelligence, robot, bot, robocall, recorded message, IA, inteligencia
   artificial, mensaje grabado). After "this call"/"esta llamada" the automation term alone suffices
   ("this call is automated").
3. No negation (not, never, -n't, no, nunca, ni, tampoco) between the two, nor in the two words before the
   anchor; a conjunction (and, but, y, pero) or a word for a human (person, real, live, persona, humano) ends
   the search.

A plural is a statement about calls in general and does not count ("automated calls are regulated"); neither does
a recording notice ("this call may be recorded") nor a bare mention ("our automated system"). A negated sentence
("this is not an automated call", "usted no está hablando con un asistente virtual") makes the whole text fail.
Passing examples: "${DISCLOSURE_EXAMPLES.en}", "You are speaking with an AI assistant.", "This call uses an
artificial voice.", "${DISCLOSURE_EXAMPLES.es}", "Está hablando con un asistente virtual.", "Este es un mensaje
pregrabado."`;

export function disclosureRoutes(deps: AppDeps) {
  const app = createRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/artificial-voice-disclosure',
      tags,
      security,
      middleware,
      summary: "The tenant's artificial-voice disclosure",
      description: '`valid` is recomputed on every read with the content check of PUT. 404 `not_found` when nothing is stored.',
      responses: { 200: jsonContent(DisclosureEnvelope, 'The stored disclosure'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json({ artificial_voice_disclosure: await getDisclosure(deps, c.get('principal').tenantId) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/artificial-voice-disclosure',
      tags,
      security,
      middleware,
      summary: "Set the tenant's artificial-voice disclosure",
      description: PUT_DESCRIPTION,
      request: { body: jsonBody(PutDisclosureBody) },
      responses: { 200: jsonContent(DisclosureEnvelope, 'The stored disclosure'), ...errorResponses(400, 401, 403, 413, 415) },
    }),
    async (c) =>
      c.json({ artificial_voice_disclosure: await putDisclosure(deps, c.get('principal'), c.req.valid('json').text) }, 200),
  );
  return app;
}
