#!/usr/bin/env node
// The registry this project installs from serves native binaries for Linux only, so `npm install`
// leaves other platforms' optional binaries (darwin, win32, ...) out of package-lock.json, and
// `npm ci` then refuses the lockfile as out of sync. This records each missing optional platform
// package with the os/cpu its name declares, so npm skips it on every other platform exactly as
// it would with a complete lockfile. Run after any `npm install` that changes dependencies.
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
let added = 0;

for (const [location, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = OS.filter((o) => parts.includes(o));
    const cpu = CPU.filter((c) => parts.includes(c) || parts.some((p) => p.startsWith(c) && /^(arm|armv7|eabi)/.test(p.slice(c.length))));
    if (os.length === 0 || cpu.length === 0) continue; // not a platform binary: leave it to npm
    packages[`node_modules/${name}`] = { version: range, cpu, dev: entry.dev, optional: true, os };
    if (!entry.dev) delete packages[`node_modules/${name}`].dev;
    added += 1;
  }
}

const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`complete-lockfile: recorded ${added} platform package(s)\n`);
