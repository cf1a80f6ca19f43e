/**
 * Names to ids. People type names; the API wants ids. parity: the reference CLI asks `id="x"` first and
 * then `name="x"`, and refuses an ambiguous name (docs/reference-notes.md §11), so an id always wins and a
 * name that happens to look like another record's id cannot shadow it.
 */
import type { Api } from './api.js';
import type { ResourceDef } from '../model/resource.js';
import { CliError } from './io.js';

/** A ZitiQL string literal: double quotes, with `\` and `"` escaped (parity: §1.1). */
export const zitiString = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

export interface ListEnvelope {
  data: Record<string, unknown>[];
  meta?: { pagination?: { limit: number; offset: number; totalCount: number }; filterableFields?: string[] };
}

/**
 * The id of the record of `def` whose id, or else whose `nameField`, equals `idOrName`.
 * `nameField` is undefined for entities without a human name (the id alone is tried).
 * @throws CliError exit 1 when nothing matches or the name is ambiguous.
 */
export async function resolveId(
  api: Api,
  def: ResourceDef,
  idOrName: string,
  nameField: string | undefined = 'name' in def.props ? 'name' : undefined,
): Promise<string> {
  const query = async (field: string) => {
    const filter = `${field} = ${zitiString(idOrName)}`;
    const res = await api.call<ListEnvelope>('GET', `/${def.name}?filter=${encodeURIComponent(filter)}&limit=2`);
    return res.data;
  };
  const byId = await query('id');
  if (byId.length > 0) return byId[0]!.id as string;
  if (nameField) {
    const byName = await query(nameField);
    if (byName.length === 1) return byName[0]!.id as string;
    if (byName.length > 1)
      throw new CliError(
        `error: more than one ${def.label} has ${nameField} ${JSON.stringify(idOrName)}: use its id`,
        1,
      );
  }
  const what = nameField ? `id or ${nameField}` : 'id';
  throw new CliError(`error: NOT_FOUND: no ${def.label} with ${what} ${JSON.stringify(idOrName)}`, 1);
}
