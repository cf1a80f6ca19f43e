/**
 * What the CLI knows about a resource: the part of a model resource definition the generic verbs need (name,
 * label, which props each write mode accepts with the shape of their JSON Schema, which operations are served).
 *
 * Why not the definitions themselves: importing `src/model/resources` loads TypeBox, Kysely, the store and the
 * PKI through the definitions' hooks, about 0.6 s on every CLI start for data that never changes at run time.
 * So the CLI reads a snapshot, `resources.generated.ts`, written from the definitions by `resources-gen.ts`; a
 * test (test/cli/cli-startup.test.ts) fails when the snapshot no longer matches the model, naming the command
 * that regenerates it. This file only imports model *types*, which compile away.
 */
import type { ResourceDef } from '../model/resource.js';

/** The members of a JSON Schema the CLI reads to choose a flag's kind (see `kindOf` in crud.ts). */
export interface SchemaInfo {
  type?: string;
  const?: unknown;
  anyOf?: SchemaInfo[];
  items?: SchemaInfo;
  properties?: Record<string, SchemaInfo>;
}

export interface CliProp {
  schema: SchemaInfo;
  storage?: string;
  create?: 'required' | 'optional';
  patch?: boolean;
}

export type CliOp = 'list' | 'create' | 'detail' | 'update' | 'patch' | 'delete';

export interface CliResource {
  /** Collection path segment, e.g. `identities`. */
  name: string;
  /** Singular label, e.g. `identity`. */
  label: string;
  /** The writable props (create or PATCH), and `name` when the resource has one. */
  props: Record<string, CliProp>;
  /** The Management API operations served. */
  ops: Partial<Record<CliOp, true>>;
}

/** A JSON Schema reduced to the members of {@link SchemaInfo}. */
export function reduceSchema(schema: unknown): SchemaInfo {
  const s = (schema ?? {}) as Record<string, unknown>;
  const out: SchemaInfo = {};
  if (typeof s.type === 'string') out.type = s.type;
  if (s.const !== undefined) out.const = s.const;
  if (Array.isArray(s.anyOf)) out.anyOf = s.anyOf.map(reduceSchema);
  if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) out.items = reduceSchema(s.items);
  if (s.properties && typeof s.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, unknown>).map(([k, v]) => [k, reduceSchema(v)]),
    );
  }
  return out;
}

/** The CLI's view of a model resource definition: what the generic verbs read (see crud.ts, resolve.ts). */
export function toCliResource(def: ResourceDef): CliResource {
  const props: Record<string, CliProp> = {};
  for (const [name, p] of Object.entries(def.props)) {
    // Read-only props give no flag; only `name` matters without being writable (records are found by it). Leaving
    // the others out keeps the snapshot stable when the model adds computed or internal fields.
    if (!p.create && !p.patch && name !== 'name') continue;
    const prop: CliProp = { schema: p.create || p.patch ? reduceSchema(p.schema) : {}, storage: p.storage };
    if (p.create) prop.create = p.create;
    if (p.patch) prop.patch = true;
    props[name] = prop;
  }
  const ops: Partial<Record<CliOp, true>> = {};
  for (const op of ['list', 'create', 'detail', 'update', 'patch', 'delete'] as const) if (def.ops[op]) ops[op] = true;
  return { name: def.name, label: def.label, props, ops };
}
