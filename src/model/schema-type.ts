/**
 * JSON Schema builders for the resource definitions, with the call shapes of TypeBox's `Type` for the few kinds the
 * definitions use. They return plain JSON Schema objects (what Ajv, the only validator, reads), tagged with
 * TypeBox's global symbols so the daemon's own TypeBox schemas can embed them. Why not TypeBox itself: loading it
 * costs the CLI ~110-140 ms on every start (docs/design.md, "Cheap definitions"), and the definitions are imported
 * by every CLI command.
 */
import type { TSchema } from '@sinclair/typebox';

export type { TSchema };

const KIND = Symbol.for('TypeBox.Kind');
const OPTIONAL = Symbol.for('TypeBox.Optional');

type Options = Record<string, unknown>;

const make = (kind: string, options: Options | undefined, body: Options): TSchema =>
  ({ ...options, [KIND]: kind, ...body }) as unknown as TSchema;

const isOptional = (s: TSchema): boolean => (s as unknown as Record<symbol, unknown>)[OPTIONAL] === 'Optional';

const literalType = (v: string | number | boolean): string =>
  typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'boolean' : 'number';

export const Type = {
  String: (options?: Options): TSchema => make('String', options, { type: 'string' }),
  Boolean: (options?: Options): TSchema => make('Boolean', options, { type: 'boolean' }),
  Integer: (options?: Options): TSchema => make('Integer', options, { type: 'integer' }),
  Number: (options?: Options): TSchema => make('Number', options, { type: 'number' }),
  Null: (options?: Options): TSchema => make('Null', options, { type: 'null' }),
  /** Any value. */
  Unknown: (options?: Options): TSchema => make('Unknown', options, {}),
  Literal: (value: string | number | boolean, options?: Options): TSchema =>
    make('Literal', options, { const: value, type: literalType(value) }),
  Union: (anyOf: TSchema[], options?: Options): TSchema => make('Union', options, { anyOf }),
  Array: (items: TSchema, options?: Options): TSchema => make('Array', options, { type: 'array', items }),
  /** A map with string keys (TypeBox's `Record(String(), value)`). */
  Record: (_key: TSchema, value: TSchema, options?: Options): TSchema =>
    make('Record', options, { type: 'object', patternProperties: { '^(.*)$': value } }),
  Object: (properties: Record<string, TSchema>, options?: Options): TSchema => {
    const required = Object.keys(properties).filter((k) => !isOptional(properties[k]!));
    return make('Object', options, { type: 'object', ...(required.length > 0 && { required }), properties });
  },
  /** Marks an object member as optional (left out of the object's `required`). */
  Optional: (schema: TSchema): TSchema => ({ ...schema, [OPTIONAL]: 'Optional' }) as TSchema,
};
