import { readFile } from 'node:fs/promises';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { NUL_FREE_JSON } from '../src/lib/openapi';

const HEADER = `${COMMENT_HEADER.trimEnd()}
// Generated from GET /v1/openapi.json by \`npm run client:generate\`; the OpenAPI test fails when it drifts from the document.

`;

/** The TypeScript types openapi-typescript derives from an OpenAPI document, as src/client/openapi.d.ts holds them. */
export async function renderClientTypes(document: unknown): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, {
    silent: true,
    // The free-form value names itself (arrays and objects of it), and openapi-fetch's request-body
    // mapping cannot follow a self-referencing type (it turns the body into never): typed as unknown.
    transform: (_schema, options) =>
      options.path === `#/components/schemas/${NUL_FREE_JSON}` ? ts.factory.createKeywordTypeNode(ts.SyntaxKind.UnknownKeyword) : undefined,
  });
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
