/**
 * `npm run bench -- --posture`: an OS check and an MFA check (with a timeout) are attached to a
 * quarter of the model's service policies and to the load clients' own Dial and Bind policies, then the load
 * clients report a matching OS and pass MFA (enrolment and verification through the Client API), so the
 * session-create scenarios can run again with posture evaluated on every request.
 */
import { generate } from 'otplib';
import type { Req } from './cannon.js';

export const POSTURE_ATTRIBUTE = 'bench-posture';
const OS_REPORT = { type: 'Linux', version: '6.1.0' };

type Call = (r: Req) => Promise<{ status: number; body: string }>;

async function must(call: Call, r: Req, ok: number[]): Promise<Record<string, unknown>> {
  const res = await call(r);
  if (!ok.includes(res.status)) throw new Error(`${r.method} ${r.path}: ${res.status} ${res.body}`);
  return res.body ? (JSON.parse(res.body) as Record<string, unknown>) : {};
}

/** The model policies that get checks: every fourth `sp-<j>`, plus the two the repeat scenarios use. */
export const guardedPolicyNames = (servicePolicies: number): string[] => [
  ...Array.from({ length: servicePolicies }, (_, j) => j)
    .filter((j) => j % 4 === 0)
    .map((j) => `sp-${j}`),
  'sp-bench-dial',
  'sp-bench-bind',
];

/** Creates the two checks and attaches them (by attribute) to the named policies; answers the OS check's id. */
export async function attachPostureChecks(
  call: Call,
  mgmt: string,
  headers: Record<string, string>,
  policyNames: string[],
): Promise<{ osCheckId: string; policies: number }> {
  const create = async (body: Record<string, unknown>) =>
    (
      (await must(call, { method: 'POST', path: `${mgmt}/posture-checks`, headers, body: JSON.stringify(body) }, [201]))
        .data as { id: string }
    ).id;
  const osCheckId = await create({
    name: 'bench-posture-os',
    typeId: 'OS',
    roleAttributes: [POSTURE_ATTRIBUTE],
    operatingSystems: [{ type: 'Linux', versions: ['>=5.0.0'] }],
  });
  await create({ name: 'bench-posture-mfa', typeId: 'MFA', roleAttributes: [POSTURE_ATTRIBUTE], timeoutSeconds: 3600 });
  let policies = 0;
  for (let i = 0; i < policyNames.length; i += 100) {
    const names = policyNames.slice(i, i + 100).map((n) => JSON.stringify(n));
    const filter = encodeURIComponent(`name in [${names.join(', ')}] limit 500`);
    const page = await must(call, { method: 'GET', path: `${mgmt}/service-policies?filter=${filter}`, headers }, [200]);
    for (const p of page.data as { id: string }[]) {
      await must(
        call,
        {
          method: 'PATCH',
          path: `${mgmt}/service-policies/${p.id}`,
          headers,
          body: JSON.stringify({ postureCheckRoles: [`#${POSTURE_ATTRIBUTE}`] }),
        },
        [200],
      );
      policies++;
    }
  }
  return { osCheckId, policies };
}

/**
 * One load client passes both checks: its identity reports the OS (kept per identity, so the model's fresh API
 * sessions of the same identity pass it too) and its API session passes MFA by verifying a new enrolment
 * (kept per API session: the fresh API sessions do not pass it).
 */
export async function passPostureChecks(
  call: Call,
  client: string,
  token: string,
  osCheckId: string,
): Promise<{ secret: string; step: number }> {
  const headers = { 'zt-session': token };
  const post = (path: string, body: unknown, ok: number[]) =>
    must(
      call,
      { method: 'POST', path: client + path, headers, body: body === undefined ? undefined : JSON.stringify(body) },
      ok,
    );
  await post('/posture-response', { id: osCheckId, typeId: 'OS', ...OS_REPORT }, [201]);
  await post('/current-identity/mfa', undefined, [201]);
  const detail = await must(call, { method: 'GET', path: `${client}/current-identity/mfa`, headers }, [200]);
  const secret = new URL((detail.data as { provisioningUrl: string }).provisioningUrl).searchParams.get('secret')!;
  const step = timeStep();
  await post('/current-identity/mfa/verify', { code: await generate({ secret, epoch: step * 30 }) }, [200]);
  return { secret, step };
}

/** The current TOTP time step (30 s). */
const timeStep = () => Math.floor(Date.now() / 30_000);

/**
 * The same load client on another replica: posture reports and passed MFA are kept in the memory of the replica
 * that received them (docs/design.md, "Several controllers"), so the OS is reported again and MFA passed with a
 * code (`/authenticate/mfa`). A code is accepted once across replicas and only for a time step newer than the
 * last one accepted, at most one step ahead of the clock: the step after `lastStep`, waiting for the clock when
 * that is two ahead (a third replica). Answers the step used.
 */
export async function passPostureChecksOnReplica(
  call: Call,
  client: string,
  token: string,
  osCheckId: string,
  mfa: { secret: string; step: number },
): Promise<{ secret: string; step: number }> {
  const headers = { 'zt-session': token };
  const post = (path: string, body: unknown, ok: number[]) =>
    must(call, { method: 'POST', path: client + path, headers, body: JSON.stringify(body) }, ok);
  await post('/posture-response', { id: osCheckId, typeId: 'OS', ...OS_REPORT }, [201]);
  const step = Math.max(mfa.step + 1, timeStep());
  while (step > timeStep() + 1) await new Promise((r) => setTimeout(r, 500));
  await post('/authenticate/mfa', { code: await generate({ secret: mfa.secret, epoch: step * 30 }) }, [200]);
  return { secret: mfa.secret, step };
}
