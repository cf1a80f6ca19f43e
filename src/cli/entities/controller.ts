/**
 * What the controller and controller-setting definitions cannot say for the CLI: columns, the `controllerId`
 * argument, and flag descriptions. Controllers are read-only (each running controller records itself); settings
 * hold the OIDC redirect and post-logout URI lists of one controller or (`global`) of all.
 */
import type { EntitySpec } from '../crud.js';
import { at, col, type Rec } from '../output.js';
import { controllers, controllerSettings } from '../resources.js';

const urls = (r: Rec) =>
  Object.values((r.apiAddresses as Record<string, { url: string }[]> | undefined) ?? {})
    .flat()
    .map((a) => a.url)
    .join(' ');

export const controllerSpec: EntitySpec = {
  def: controllers,
  noun: 'controller',
  aliases: ['controllers'],
  columns: [
    col('ID', 'id'),
    col('NAME', 'name'),
    col('ONLINE', 'isOnline'),
    col('JOINED', 'lastJoinedAt'),
    { header: 'API ADDRESSES', value: urls },
  ],
};

const list = (path: string) => (r: Rec) => ((at(r, path) as string[] | undefined) ?? []).join(' ');

export const controllerSettingSpec: EntitySpec = {
  def: controllerSettings,
  noun: 'controller-setting',
  aliases: ['controller-settings'],
  nameField: 'controllerId',
  columns: [
    col('ID', 'id'),
    col('CONTROLLER', 'controllerId'),
    { header: 'REDIRECT URIS', value: list('oidc.redirectUris') },
    { header: 'POST-LOGOUT URIS', value: list('oidc.postLogoutUris') },
  ],
  createArgs: ['controllerId'],
  flags: {
    // Set through its two lists' flags (or --data).
    oidc: { hidden: true },
    controllerId: { description: 'the controller (its id, from `edgectl controller list`), or `global` for all' },
    'oidc.redirectUris': { name: 'redirect-uris', description: 'OIDC redirect URIs (absolute)' },
    'oidc.postLogoutUris': {
      name: 'post-logout-uris',
      description: 'OIDC post-logout redirect URIs (absolute)',
    },
  },
  createHelp:
    "\nA controller's effective lists are the global setting's followed by its own (`edgectl controller-setting effective`).",
};
