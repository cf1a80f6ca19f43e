/**
 * What the edge-router and transit-router resource definitions cannot say for the CLI: columns, the reference
 * CLI's flags (`ziti edge create edge-router NAME [-a attrs] [-t tunneler] [-o jwtFile] [--cost] [--no-traversal]`,
 * docs/reference-notes.md §11), with `noTraversal` as `--no-traversal` (and `--traversal` to allow it again).
 */
import type { EntitySpec, FlagOverride } from '../crud.js';
import { col } from '../output.js';
import { edgeRouters, transitRouters } from '../resources.js';

const common: Record<string, FlagOverride> = {
  name: { description: 'name (unique across edge and transit routers)' },
  cost: { description: 'cost of routing through this router, 0..65535 (default 0)' },
  noTraversal: {
    name: 'traversal',
    invert: true,
    description: 'links may pass through this router (the default; --no-traversal: only as a path end)',
  },
};

export const edgeRouterSpec: EntitySpec = {
  def: edgeRouters,
  noun: 'edge-router',
  aliases: ['edge-routers', 'er', 'ers'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('ONLINE', 'isOnline'),
    col('VERIFIED', 'isVerified'),
    col('COST', 'cost'),
    col('NO TRAVERSAL', 'noTraversal'),
    col('TUNNELER', 'isTunnelerEnabled'),
    col('ATTRIBUTES', 'roleAttributes'),
  ],
  createArgs: ['name'],
  flags: {
    ...common,
    isTunnelerEnabled: {
      name: 'tunneler-enabled',
      short: 't',
      description: 'the router also tunnels (gets its own identity and system edge router policy)',
    },
    roleAttributes: { short: 'a', description: 'role attributes' },
    appData: { description: 'application data' },
  },
};

export const routerSpec: EntitySpec = {
  def: transitRouters,
  noun: 'router',
  aliases: ['routers', 'transit-router', 'transit-routers'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('ONLINE', 'isOnline'),
    col('VERIFIED', 'isVerified'),
    col('COST', 'cost'),
    col('NO TRAVERSAL', 'noTraversal'),
    col('FINGERPRINT', 'fingerprint'),
  ],
  createArgs: ['name'],
  flags: common,
};
