import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildDefaultDocument } from './openapi-document';

/** Writes the published OpenAPI document to a file (default .data/openapi.json) for linters and generators. */
async function main() {
  const out = path.resolve(process.argv[2] ?? '.data/openapi.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(buildDefaultDocument(), null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
