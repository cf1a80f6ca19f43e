/** Config types (a schema that does not compile is refused) and configs (data checked against their type's schema). */
import { configTypeByIdOrName } from '../../../store/configs.js';
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import { checkJsonSchema, validateAgainst } from '../../json-schema.js';
import { attachRefs } from '../../refs.js';
import type { Input, ResourceHooks, Row, WriteMode } from '../../resource.js';

export const configTypeHooks: ResourceHooks = {
  prepare(_ctx, input: Input) {
    if (input.schema !== undefined) checkJsonSchema(input.schema as Record<string, unknown>);
    return input;
  },
};

/** The config type by id, or by name (the reference also accepts a name here). */
async function prepareConfig(ctx: Ctx, input: Input, mode: WriteMode, existing?: Row): Promise<Input> {
  const out = { ...input };
  const typeRef = String(mode === 'create' ? out.configTypeId : existing!.configTypeId);
  const type = await configTypeByIdOrName(ctx.db, typeRef);
  if (!type) throw fieldError('configTypeId', 'no config type found with the given id', typeRef);
  if (mode === 'create') out.configTypeId = type.id;
  if (out.data !== undefined) validateAgainst(type.schema, out.data);
  return out;
}

export const configHooks: ResourceHooks = {
  prepare: prepareConfig,
  decorate: (ctx, rows) =>
    attachRefs(ctx, rows, {
      idField: 'configTypeId',
      as: 'configType',
      table: 'config_types',
      collection: 'config-types',
    }),
};
