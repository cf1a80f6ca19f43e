/**
 * What the config resource definition cannot say for the CLI: the config type as the second create argument
 * (by name or id), and the config's data as the optional third argument, `--data JSON` or `-f, --data-file FILE`
 * (as `ziti edge create config NAME TYPE [JSON] [-f file]`, docs/reference-notes.md §11). The generic body
 * options are `--body`/`--body-file` here.
 */
import type { EntitySpec } from '../crud.js';
import { at, col, type Rec } from '../output.js';
import { configs, configTypes } from '../resources.js';

/** Compact JSON, cut at `max` characters: a table cell, not the whole document (`show` has it all). */
export const shortJson = (v: unknown, max = 60): string => {
  if (v === undefined || v === null) return '';
  const s = JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

export const configSpec: EntitySpec = {
  def: configs,
  noun: 'config',
  aliases: ['configs'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    { header: 'CONFIG TYPE', value: (r: Rec) => at(r, 'configType.name') ?? r.configTypeId },
    { header: 'DATA', value: (r: Rec) => shortJson(r.data) },
  ],
  createArgs: ['name', 'configTypeId'],
  optionalCreateArgs: ['data'],
  bodyFlags: { data: 'body', file: 'body-file' },
  flags: {
    name: { description: 'name (unique)' },
    configTypeId: { name: 'type', ref: configTypes, description: 'config type' },
    data: {
      description: "the config's data (checked against the config type's schema)",
      fromFile: { name: 'data-file', short: 'f' },
    },
  },
};
