import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { buildDefaultDocument } from './openapi-document';

/** Where `npm run client:generate` writes the types of the typed client (src/client). */
export const CLIENT_TYPES_FILE = path.resolve(__dirname, '../src/client/openapi.d.ts');

const HEADER = `${COMMENT_HEADER.trimEnd()}
// Generated from GET /v1/openapi.json by \`npm run client:generate\`; the OpenAPI test fails when it drifts from the document.

`;

/** The TypeScript types openapi-typescript derives from an OpenAPI document, as the committed file holds them. */
export async function renderClientTypes(document: unknown): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, { silent: true });
  return HEADER + astToString(ast);
}

async function main() {
  await writeFile(CLIENT_TYPES_FILE, await renderClientTypes(buildDefaultDocument()));
  console.log(`wrote ${path.relative(process.cwd(), CLIENT_TYPES_FILE)}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
