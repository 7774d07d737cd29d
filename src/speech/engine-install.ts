import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The offline engines, pinned: PocketSphinx's wheel carries its US English acoustic model, language
 * model and dictionary; espeakng-loader's carries libespeak-ng and its voice data. Installed from
 * PyPI into the tools folder the first time, as the Temporal CLI is.
 */
export const SPEECH_PIP_PACKAGES = ['pocketsphinx==5.1.1', 'espeakng-loader==0.2.4'] as const;
export const SPEECH_ENGINE_DIR_NAME = 'speech-5.1.1-0.2.4';
const MARKER = '.installed';

export function speechEngineDir(toolsDir: string): string {
  return path.join(toolsDir, SPEECH_ENGINE_DIR_NAME);
}

export function speechPython(toolsDir: string): string {
  return path.join(speechEngineDir(toolsDir), 'bin', 'python');
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed with exit code ${code}\n${stderr}`))));
  });
}

let installing: Promise<string> | null = null;

/**
 * The engines' Python (a venv under `<toolsDir>/speech-…`), installed when missing. Asynchronous,
 * so a worker's event loop keeps heartbeating during the minute a first install takes. Each install
 * builds in a folder of its own and renames it into place, and a marker written last tells a
 * finished install from an interrupted one: concurrent starts (several workers, test files) never
 * see a half-built engine.
 */
export function ensureSpeechEngine(toolsDir: string, log: (msg: string) => void = () => undefined): Promise<string> {
  const dir = speechEngineDir(toolsDir);
  const python = speechPython(toolsDir);
  if (existsSync(path.join(dir, MARKER)) && existsSync(python)) return Promise.resolve(python);
  installing ??= (async () => {
    mkdirSync(toolsDir, { recursive: true });
    const building = `${dir}.building-${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    log(`installing the speech engines (${SPEECH_PIP_PACKAGES.join(', ')}) into ${dir}`);
    try {
      await run('python3', ['-m', 'venv', building]);
      await run(path.join(building, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...SPEECH_PIP_PACKAGES]);
      writeFileSync(path.join(building, MARKER), `${SPEECH_PIP_PACKAGES.join('\n')}\n`);
      if (!existsSync(path.join(dir, MARKER))) {
        rmSync(dir, { recursive: true, force: true });
        try {
          renameSync(building, dir);
        } catch (err) {
          // Another process renamed its finished install into place first: use that one.
          if (!existsSync(path.join(dir, MARKER))) throw err;
        }
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
    return python;
  })().finally(() => {
    installing = null;
  });
  return installing;
}
