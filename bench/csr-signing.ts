/**
 * `node --import tsx bench/csr-signing.ts [--runs N]`
 *
 * What signing a CSR costs the event loop (decisions.md, "Signing on the event loop"; figures in bench/RESULTS.md): for
 * a plain CSR and one at the bounds (100 SANs, ~32 KiB), per certificate profile, the wall time and the main thread's
 * busy time per signing (event loop utilisation; the ECDSA/RSA work itself runs on libuv's pool through WebCrypto),
 * then the longest event loop delay while ten signings run at once. Also how fast a CSR beyond the bounds is refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { generateKeyAndCsr, loadOrCreateControllerPki, parseCsr } from '../src/pki/index.js';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '30' } } });
const runs = Number(args.runs);
const dir = mkdtempSync(join(tmpdir(), 'edgectl-csr-bench-'));
const pki = await loadOrCreateControllerPki(dir, { hosts: ['localhost'] });
const hosts = (n: number, pad: number) => Array.from({ length: n }, (_, i) => `h${i}-${'x'.repeat(pad)}.example.test`);
const ms = (v: number) => v.toFixed(2).padStart(7);

const profiles: Record<string, (csr: string) => Promise<unknown>> = {
  'identity client': (csr) => pki.signClientCsr(csr, { id: 'identity-1' }),
  'API session': (csr) => pki.signSessionCsr(csr, { identityId: 'identity-1', apiSessionId: 'session-1' }),
  'router client': (csr) => pki.signClientCsr(csr, { id: 'router-1', kind: 'router' }),
  'router server': (csr) => pki.signServerCsr(csr),
};

for (const [name, csr] of [
  ['plain EC P-256', (await generateKeyAndCsr({ commonName: 'plain' })).csrPem],
  ['100 SANs, ~32 KiB', (await generateKeyAndCsr({ commonName: 'bounds', hosts: hosts(100, 215) })).csrPem],
] as const) {
  console.log(`${name} (${csr.length} bytes of PEM)`);
  for (const [profile, sign] of Object.entries(profiles)) {
    for (let i = 0; i < 5; i++) await sign(csr); // warm-up
    const elu = performance.eventLoopUtilization();
    const start = performance.now();
    for (let i = 0; i < runs; i++) await sign(csr);
    const wall = (performance.now() - start) / runs;
    const busy = performance.eventLoopUtilization(elu).active / runs;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    await Promise.all(Array.from({ length: 10 }, () => sign(csr)));
    delay.disable();
    console.log(
      `  ${profile.padEnd(16)} wall ${ms(wall)} ms, main thread ${ms(busy)} ms per signing; ` +
        `10 at once: longest loop delay ${ms(delay.max / 1e6)} ms`,
    );
  }
}

for (const [name, csr] of [
  ['3,000 SANs (~880 KB)', (await generateKeyAndCsr({ commonName: 'big', hosts: hosts(3000, 200) })).csrPem],
  ['1,000 short SANs (~22 KB)', (await generateKeyAndCsr({ commonName: 'many', hosts: hosts(1000, 0) })).csrPem],
] as const) {
  const start = performance.now();
  try {
    parseCsr(csr);
  } catch (e) {
    console.log(`${name}: refused in ${ms(performance.now() - start)} ms (${(e as Error).message})`);
  }
}
rmSync(dir, { recursive: true, force: true });
