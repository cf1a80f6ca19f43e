/**
 * What the service resource definition cannot say for the CLI: columns, the reference CLI's short flags
 * (`ziti edge create service NAME [-a attrs] [-c configs] [-e encryption]`, docs/reference-notes.md §11),
 * configs given by name or id, and encryption required by default (as the reference CLI).
 */
import type { EntitySpec } from '../crud.js';
import { col } from '../output.js';
import { configs, services } from '../resources.js';

export const serviceSpec: EntitySpec = {
  def: services,
  noun: 'service',
  aliases: ['services'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('ENCRYPTION', 'encryptionRequired'),
    col('TERMINATOR STRATEGY', 'terminatorStrategy'),
    col('ATTRIBUTES', 'roleAttributes'),
    col('CONFIGS', 'configs'),
  ],
  createArgs: ['name'],
  createDefaults: { encryptionRequired: true },
  flags: {
    name: { description: 'name (unique)' },
    encryptionRequired: { short: 'e', description: 'end-to-end encryption required (the default; fixed after create)' },
    terminatorStrategy: { description: 'terminator strategy (default smartrouting)' },
    roleAttributes: { short: 'a', description: 'role attributes' },
    configs: { short: 'c', ref: configs, description: 'configs (at most one per config type)' },
  },
};
