import { readFile } from 'node:fs/promises';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

const HEADER = `${COMMENT_HEADER.trimEnd()}
// Generated from GET /v1/openapi.json by \`npm run client:generate\`; the OpenAPI test fails when it drifts from the document.

`;

/** The TypeScript types openapi-typescript derives from an OpenAPI document, as src/client/openapi.d.ts holds them. */
export async function renderClientTypes(document: unknown): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, { silent: true });
  return HEADER + astToString(ast);
}

/**
 * `tsx scripts/openapi-types.ts <document.json>` prints the client types of a document: how the OpenAPI
 * test compares the served document with the committed file (openapi-typescript's ESM-only
 * dependencies do not load inside jest), without loading the app.
 */
async function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx scripts/openapi-types.ts <openapi.json>');
  process.stdout.write(await renderClientTypes(JSON.parse(await readFile(file, 'utf8'))));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
