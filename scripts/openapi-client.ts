import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildDefaultDocument } from './openapi-document';
import { renderClientTypes } from './openapi-types';

/** `npm run client:generate`: the typed client's types (src/client/openapi.d.ts) from the document a default deployment publishes. */
async function main() {
  const out = path.resolve(__dirname, '../src/client/openapi.d.ts');
  await writeFile(out, await renderClientTypes(buildDefaultDocument()));
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
