// The npm registry this project installs from holds oxlint's native bindings for Linux x64 and arm64 only, so
// `npm install` records oxlint's other optional bindings without lock entries, and `npm ci` then refuses the lock
// ("Missing: @oxlint/binding-darwin-arm64@ from lock file"). Run after any `npm install` that touches oxlint:
// it drops from the lock the optional dependencies that have no entry of their own.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const present = new Set(Object.keys(lock.packages).map((k) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length)));
let dropped = 0;
for (const [where, entry] of Object.entries(lock.packages)) {
  if (!where || !entry.optionalDependencies) continue;
  for (const name of Object.keys(entry.optionalDependencies)) {
    if (!present.has(name)) { delete entry.optionalDependencies[name]; dropped++; }
  }
}
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
console.log(`package-lock.json: ${dropped} optional dependencies without an entry dropped`);
