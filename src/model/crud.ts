/**
 * Generic create/read/update/delete over a resource definition. Entity behaviour plugs in through the
 * hooks the model's services register for the resource (resource-hooks.ts); every write is one transaction, so a
 * refused request never leaves a partial change.
 */
import { withAccessTx } from '../store/access-journal.js';
import { deleteRow, findRowById, insertRow, pageRows, referringIds, updateRow } from '../store/crud.js';
import type { Scope } from '../store/scopes.js';
import { noteEntityWrite } from './access/changes.js';
import { mappingConstraints } from './constraints.js';
import { withDb, iso, type Ctx } from './ctx.js';
import { DomainError, fieldError, notFound } from './errors.js';
import { newEntityId } from './ids.js';
import { filterFields, writableProps, type Input, type ResourceDef, type Row, type WriteMode } from './resource.js';
import type { Decorated, RecordOf } from './resource-record.js';
import { compileListQueryJudged, type ListOptions } from './list-query.js';
import { hooksOf } from './resource-hooks.js';
import { broadNeedles } from '../store/search-index.js';
import { filterDialectOf } from '../store/filter-sql.js';
import { copyOf, textOr } from './row.js';
import { recordEntityChange } from './events/entity-change.js';

export interface Page<R extends Row = Row> {
  rows: R[];
  pagination: { limit: number; offset: number; totalCount: number };
  filterableFields: string[];
}

/** A prop's default, as a value of the record's own: an empty list or object is made anew, anything else cloned. */
function defaultOf(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v) && v.length === 0) return [];
  if (Object.getPrototypeOf(v) === Object.prototype && Object.keys(v).length === 0) return {};
  return structuredClone(v);
}

/** Fills defaults for a create, or resets absent optional props for a full update (PUT replaces). */
function completeInput(def: ResourceDef, input: Input, mode: WriteMode): Input {
  if (mode === 'patch') return input;
  const out = copyOf(input);
  for (const name of writableProps(def, mode)) {
    const p = def.props[name]!;
    if (out[name] !== undefined || p.virtual) continue;
    if (p.default !== undefined) out[name] = defaultOf(p.default);
    else if (p.nullable) out[name] = null;
  }
  if (mode === 'create') {
    for (const [name, p] of Object.entries(def.props)) {
      if (out[name] === undefined && p.default !== undefined) out[name] = defaultOf(p.default);
    }
  }
  return out;
}

/**
 * Resolves nulls: a nullable prop keeps null, a prop with a default falls back to it (a PUT or PATCH that
 * clears it), anything else is a field error. Null tags mean no tags.
 */
function resolveNulls(def: ResourceDef, input: Input): void {
  for (const [name, v] of Object.entries(input)) {
    if (v !== null) continue;
    if (name === 'tags') {
      input.tags = {};
      continue;
    }
    const p = def.props[name];
    if (!p || p.nullable) continue;
    if (p.default !== undefined) input[name] = defaultOf(p.default);
    else throw fieldError(name, `${name} must not be null`, null);
  }
}

/** Only the keys this write mode may set, plus tags. */
function pickWritable(def: ResourceDef, input: Input, mode: WriteMode): Input {
  const allowed = new Set([...writableProps(def, mode), 'tags']);
  const out: Input = {};
  for (const [k, v] of Object.entries(input)) if (allowed.has(k) && v !== undefined) out[k] = v;
  return out;
}

/**
 * `pre` is what the definition's `beforeTx` hook computed; given by a caller that runs the create inside its own
 * transaction (and so did that work before opening it), otherwise the hook runs here, before the transaction.
 */
export async function createEntity(
  ctx: Ctx,
  def: ResourceDef,
  body: Input,
  extra: Row = {},
  pre?: Row,
): Promise<string> {
  const hooks = hooksOf(ctx, def);
  pre ??= await hooks.beforeTx?.(ctx, body, 'create');
  return withAccessTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    let input = completeInput(def, pickWritable(def, body, 'create'), 'create');
    resolveNulls(def, input);
    if (hooks.prepare) input = await hooks.prepare(tctx, input, 'create', undefined, pre);
    const now = iso(ctx.now());
    // A prepare hook may choose the id (e.g. when a stored value derives from it); bodies cannot set `id`.
    const id = textOr(extra.id ?? input.id, '') || newEntityId();
    const values = Object.assign(copyOf(input), extra);
    values.id = id;
    values.createdAt = now;
    values.updatedAt = now;
    values.tags = input.tags ?? {};
    const inserted = await mappingConstraints(() => insertRow(trx, def, values));
    await hooks.afterWrite?.(tctx, id, 'create', input);
    await noteEntityWrite(tctx, def, id, false);
    // Last in the transaction: the event shows the record as committed (hooks included), which is the row as
    // inserted unless a hook may have changed it since.
    const keptAsInserted = !hooks.afterWrite || hooks.afterWriteKeepsRow === true;
    const created = (keptAsInserted && inserted) || (await findRowById(trx, def, id));
    await recordEntityChange(tctx, def, id, 'created', undefined, created);
    return id;
  });
}

/*
 * Rows the store read by a definition, as that definition's records: the store builds each from the definition
 * (every stored prop by its storage kind, src/store/crud.ts) out of the table whose columns `defineResource`
 * checked against the store's schema. The one place a row is taken for a typed record.
 */
const asRecord = <D extends ResourceDef>(_def: D, row: Row) => row as RecordOf<D>;
const asDecorated = <D extends ResourceDef>(_def: D, rows: Row[]) => rows as Decorated<D>[];

export async function getRow<D extends ResourceDef>(ctx: Ctx, def: D, id: string): Promise<RecordOf<D>> {
  const row = await findRowById(ctx.db, def, id);
  if (!row) throw notFound(id, def.label);
  return asRecord(def, row);
}

export async function updateEntity(
  ctx: Ctx,
  def: ResourceDef,
  id: string,
  body: Input,
  mode: 'update' | 'patch',
  extra: Row = {},
): Promise<void> {
  const hooks = hooksOf(ctx, def);
  const pre = await hooks.beforeTx?.(ctx, body, mode, id);
  await withAccessTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const existing = await getRow(tctx, def, id);
    if (existing.isSystem && !extra.allowSystem) {
      throw new DomainError('ENTITY_CAN_NOT_BE_UPDATED', { urlVars: { id } });
    }
    let input = completeInput(def, pickWritable(def, body, mode), mode);
    if (mode === 'update' && input.tags === undefined) input.tags = {};
    resolveNulls(def, input);
    if (hooks.prepare) input = await hooks.prepare(tctx, input, mode, existing, pre);
    const { allowSystem: _ignored, ...rest } = extra;
    await mappingConstraints(() => updateRow(trx, def, id, { ...input, ...rest, updatedAt: iso(ctx.now()) }));
    await hooks.afterWrite?.(tctx, id, mode, input, existing);
    await noteEntityWrite(tctx, def, id, false);
    await recordEntityChange(tctx, def, id, 'updated', existing, await findRowById(trx, def, id));
  });
}

export async function deleteEntity(
  ctx: Ctx,
  def: ResourceDef,
  id: string,
  opts: { allowSystem?: boolean } = {},
): Promise<void> {
  const hooks = hooksOf(ctx, def);
  const gone = await withAccessTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const existing = await getRow(tctx, def, id);
    if (existing.isSystem && !opts.allowSystem) {
      throw new DomainError('ENTITY_CAN_NOT_BE_DELETED', { urlVars: { id } });
    }
    for (const ref of def.blockingRefs ?? []) {
      const ids = await referringIds(trx, ref, id, 10);
      if (ids.length > 0) {
        throw new DomainError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
          urlVars: { id },
          cause: {
            field: 'id',
            reason: `entity type ${def.name} referenced by ${ref.entity}: [${ids.join(', ')}]`,
            value: id,
          },
          causeMessage: `referenced by /${ref.entity}/${ids[0]}`,
        });
      }
    }
    await hooks.beforeDelete?.(tctx, existing);
    await mappingConstraints(() => deleteRow(trx, def, id));
    await noteEntityWrite(tctx, def, id, true);
    await recordEntityChange(tctx, def, id, 'deleted', existing, undefined);
    return existing;
  });
  hooks.afterDelete?.(ctx, gone);
}

/** One page of a resource, filtered and sorted by the filter language and paged by the reference's rules. */
export async function listEntities<D extends ResourceDef>(
  ctx: Ctx,
  def: D,
  opts: ListOptions,
  scope?: Scope,
): Promise<Page<Decorated<D>>> {
  const fields = filterFields(def);
  // A substring needle found in most rows keeps the plain test (the index would only add work).
  const q = await compileListQueryJudged(
    opts,
    fields,
    (probes) => broadNeedles(ctx.db, def.table, probes),
    filterDialectOf(ctx.db),
  );
  const { rows, total } = await pageRows(ctx.db, def, {
    where: q.where,
    ...(scope && { scope }),
    orderBy: q.orderBy,
    limit: q.limit,
    offset: q.offset,
  });
  await hooksOf(ctx, def).decorate?.(ctx, rows);
  return {
    rows: asDecorated(def, rows),
    pagination: { limit: q.limit, offset: q.offset, totalCount: total },
    filterableFields: Object.keys(fields),
  };
}

/** A single record with its decorations (404 when absent). */
export async function getEntity<D extends ResourceDef>(ctx: Ctx, def: D, id: string): Promise<Decorated<D>> {
  const row = await getRow(ctx, def, id);
  await hooksOf(ctx, def).decorate?.(ctx, [row]);
  return row;
}
