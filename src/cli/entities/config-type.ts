/**
 * What the config-type resource definition cannot say for the CLI: its columns and the schema given inline
 * (`--schema JSON`) or from a file (`-f, --schema-file FILE`), as `ziti edge create config-type NAME [-f file]`
 * does (docs/reference-notes.md §11). The generic body options are `--body`/`--body-file` here, so `-f` is free.
 */
import type { EntitySpec } from '../crud.js';
import { col } from '../output.js';
import { configTypes } from '../resources.js';

export const configTypeSpec: EntitySpec = {
  def: configTypes,
  noun: 'config-type',
  aliases: ['config-types'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    { header: 'SCHEMA', value: (r) => (r.schema && Object.keys(r.schema as object).length > 0 ? 'yes' : 'none') },
  ],
  createArgs: ['name'],
  bodyFlags: { data: 'body', file: 'body-file' },
  flags: {
    name: { description: 'name (unique)' },
    schema: {
      description: 'JSON Schema that the data of configs of this type must satisfy',
      fromFile: { name: 'schema-file', short: 'f' },
    },
  },
};
