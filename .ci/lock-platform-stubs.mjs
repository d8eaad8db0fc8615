// The npm registry mirror this project installs from has no @foundry-rs/anvil binaries
// except linux-x64, so `npm install` leaves the other platforms out of package-lock.json and
// `npm ci` then refuses the lock as out of sync. This records those optional packages with
// their os/cpu, so `npm ci` skips them on this platform and installs them where they exist.
// Run it after any `npm install` that rewrites package-lock.json: `npm run lock:platforms`.
import { readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const anvil = lock.packages['node_modules/@foundry-rs/anvil'];
const platforms = {
  'darwin-amd64': ['darwin', 'x64'],
  'darwin-arm64': ['darwin', 'arm64'],
  'linux-arm64': ['linux', 'arm64'],
  'linux-amd64': ['linux', 'x64'],
  'win32-amd64': ['win32', 'x64'],
};
for (const [suffix, [os, cpu]] of Object.entries(platforms)) {
  const key = `node_modules/@foundry-rs/anvil-${suffix}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = {
    version: anvil.version,
    license: anvil.license,
    optional: true,
    os: [os],
    cpu: [cpu],
    bin: { anvil: os === 'win32' ? 'bin/anvil.exe' : 'bin/anvil' },
    engines: { node: '>=20' },
  };
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
lock.packages = sorted;
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
