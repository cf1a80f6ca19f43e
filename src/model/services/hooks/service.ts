/** Services: configs checked (at most one per config type), role attributes kept matched, listing defaults. */
import { configsWithTypes } from '../../../store/configs.js';
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import { policyTargetHooks } from '../../policy/target-hooks.js';
import type { Input } from '../../resource.js';
import { hooksFor } from '../../resource-hooks.js';
import { services } from '../../resources/service.js';
import { checkRoleAttributes } from '../../schemas.js';
import { textList } from '../../row.js';
import { recordSessionsEnding } from '../../events/session-events.js';

/** Every id must be a config, and no two of the same config type (400 on `configs`). */
async function checkConfigs(ctx: Ctx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await configsWithTypes(ctx.db, ids);
  const missing = ids.filter((id) => !found.some((f) => f.id === id));
  if (missing.length > 0) throw fieldError('configs', 'no configs found with the given ids', missing.join(','));
  const seen = new Map<string, string>();
  for (const f of found) {
    const other = seen.get(f.typeId);
    if (other)
      throw fieldError('configs', `multiple configs of config type ${f.typeName}: ${other}, ${f.id}`, ids.join(','));
    seen.set(f.typeId, f.id);
  }
}

async function prepare(ctx: Ctx, input: Input): Promise<Input> {
  const out = { ...input };
  // An empty strategy (the console's service form sends one) is the default, as in the reference.
  if (out.terminatorStrategy === '') out.terminatorStrategy = services.props.terminatorStrategy.default;
  if (out.roleAttributes === null) out.roleAttributes = [];
  if (out.roleAttributes !== undefined) checkRoleAttributes('roleAttributes', out.roleAttributes);
  if (out.configs === null) out.configs = [];
  if (out.configs !== undefined) {
    const ids = [...new Set(textList(out.configs) ?? [])];
    out.configs = ids;
    await checkConfigs(ctx, ids);
  }
  return out;
}

export const serviceHooks = hooksFor(services, {
  prepare,
  ...policyTargetHooks('service'),
  // Its sessions go with it by cascade: their events first, while they can be read.
  async beforeDelete(ctx, row) {
    await policyTargetHooks('service').beforeDelete(ctx, row);
    await recordSessionsEnding(ctx, 'serviceId', [row.id], 'service-deleted');
  },
  decorate(_ctx, rows) {
    for (const r of rows) {
      r.config ??= {};
      r.permissions ??= [];
      // Required by the current spec; 0 is the reference's "no idle timeout", the only one edgectl has.
      r.maxIdleTimeMillis ??= 0;
      r.postureQueries ??= [];
    }
  },
});
