/**
 * `edgectl policy-advice IDENTITY SERVICE`: whether an identity can use a service, and if not why (parity: the
 * reference's `policy-advisor`, docs/reference-notes.md §2.3, §11): may it dial, may it bind, how many edge
 * routers its edge router policies give it, how many carry the service, and the routers common to both.
 * Exit status 1 when the policies refuse the identity the service (no Dial or Bind, or no edge router it may use
 * for it), so scripts can test access; a common router that is merely offline is a warning (exit 0): the
 * policies allow the access, the network state does not yet.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { resolveEntityId } from '../crud.js';
import { identitySpec } from '../entities/identity.js';
import { serviceSpec } from '../entities/service.js';
import { CliError, type CliIo } from '../io.js';
import {
  addOutputOptions,
  cell,
  col,
  formatOf,
  isScriptFormat,
  printAnswerAs,
  printRecord,
  renderTable,
  type Rec,
} from '../output.js';

interface Advice {
  identity?: Rec;
  service?: Rec;
  identityId: string;
  serviceId: string;
  isDialAllowed: boolean;
  isBindAllowed: boolean;
  identityRouterCount: number;
  serviceRouterCount: number;
  commonRouters: { id: string; name?: string; isOnline?: boolean }[];
}

/** What stands between the identity and the service, in the order someone would fix it. */
export function adviceProblems(a: Advice): string[] {
  const out: string[] = [];
  if (!a.isDialAllowed && !a.isBindAllowed)
    out.push('no service policy grants the identity Dial or Bind on the service');
  if (a.identityRouterCount === 0) out.push('no edge router policy gives the identity an edge router');
  if (a.serviceRouterCount === 0) out.push('no service edge router policy gives the service an edge router');
  if (a.identityRouterCount > 0 && a.serviceRouterCount > 0 && a.commonRouters.length === 0)
    out.push('the identity and the service have no edge router in common');
  if (a.commonRouters.length > 0 && !a.commonRouters.some((r) => r.isOnline)) out.push(NONE_ONLINE);
  return out;
}

const NONE_ONLINE = 'no common edge router is online';

/** The problems that mean the policies refuse the access (all but routers being offline right now). */
export const adviceRefusals = (a: Advice): string[] => adviceProblems(a).filter((p) => p !== NONE_ONLINE);

const yesNo = (b: boolean) => (b ? 'yes' : 'no');

export function registerPolicyAdvice(program: Command, io: CliIo): void {
  const cmd = program
    .command('policy-advice')
    .alias('policy-advisor')
    .description('explain whether an identity can use a service: dial/bind permission and the edge routers they share')
    .argument('identity', "the identity's id or name")
    .argument('service', "the service's id or name")
    .addHelpText(
      'after',
      '\nExamples:\n  edgectl policy-advice laptop-42 payroll-web\n  edgectl policy-advice laptop-42 payroll-web --json',
    );
  addOutputOptions(cmd).action(async (identity: string, service: string, opts: { json?: boolean; output?: string }) => {
    const format = formatOf(opts);
    const api = requireApi(io);
    const [identityId, serviceId] = await Promise.all([
      resolveEntityId(api, identitySpec, identity),
      resolveEntityId(api, serviceSpec, service),
    ]);
    const res = await api.call<{ data: Advice }>(
      'GET',
      `/identities/${encodeURIComponent(identityId)}/policy-advice/${encodeURIComponent(serviceId)}`,
    );
    const a = res.data;
    const refusals = adviceRefusals(a);
    const refused = () => new CliError(`error: the identity cannot use the service: ${refusals.join('; ')}`, 1);
    if (isScriptFormat(format)) {
      // `-o id`: the identity's and the service's ids, the pair the answer is about.
      await printAnswerAs(io, format, res, [a.identityId, a.serviceId]);
      if (refusals.length > 0) throw refused();
      return;
    }
    const online = a.commonRouters.filter((r) => r.isOnline).length;
    const rows: [string, string][] = [
      ['identity', cell(a.identity ?? a.identityId)],
      ['service', cell(a.service ?? a.serviceId)],
      ['dial allowed', yesNo(a.isDialAllowed)],
      ['bind allowed', yesNo(a.isBindAllowed)],
      ['identity edge routers', String(a.identityRouterCount)],
      ['service edge routers', String(a.serviceRouterCount)],
      ['common edge routers', `${a.commonRouters.length} (${online} online)`],
    ];
    printRecord(io, Object.fromEntries(rows));
    if (a.commonRouters.length > 0)
      io.out(
        renderTable(
          [col('COMMON EDGE ROUTER', 'name'), col('ID', 'id'), col('ONLINE', 'isOnline')],
          a.commonRouters as Rec[],
        ),
      );
    const problems = adviceProblems(a);
    if (problems.length === 0) io.out('OKAY: the identity can use the service');
    else for (const p of problems) io.out(`${refusals.includes(p) ? 'ERROR' : 'WARNING'}: ${p}`);
    if (refusals.length > 0) throw refused();
  });
}
