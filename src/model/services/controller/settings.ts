/**
 * Controller settings (docs/decisions.md, "Controllers and controller settings"): OIDC redirect and post-logout
 * URI lists per controller, and global ones (`controllerId: "global"`) every controller has. A controller's
 * effective lists are the global ones followed by its own, without repeats; the OIDC service reads them through
 * {@link effectiveOidcSettings}.
 */
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import type { Input, ResourceHooks, Row } from '../../resource.js';
import { getEntity } from '../../crud.js';
import { renderRecord } from '../../render.js';
import { controllerSettings, GLOBAL_CONTROLLER_ID } from '../../resources/controller-setting.js';
import { oidcSettingsOf } from '../../../store/controllers.js';

export interface OidcSettings {
  redirectUris: string[];
  postLogoutUris: string[];
}

type StoredOidc = { redirectUris?: string[]; postLogoutUris?: string[] };

const LISTS = ['redirectUris', 'postLogoutUris'] as const;

/** The settings as the wire shows them (`controllerSettings`): both lists, empty when unset. */
function complete(oidc: StoredOidc | undefined | null): OidcSettings {
  return { redirectUris: [...(oidc?.redirectUris ?? [])], postLogoutUris: [...(oidc?.postLogoutUris ?? [])] };
}

/** The global lists followed by the instance's, each URI once. */
function merge(global: StoredOidc | undefined, instance: StoredOidc | undefined): OidcSettings {
  const out = complete(undefined);
  for (const key of LISTS) out[key] = [...new Set([...(global?.[key] ?? []), ...(instance?.[key] ?? [])])];
  return out;
}

/** The OIDC redirect and post-logout URIs in force for controller `controllerId` (global first, then its own). */
export async function effectiveOidcSettings(ctx: Ctx, controllerId: string): Promise<OidcSettings> {
  const stored = await oidcSettingsOf(ctx.db, [GLOBAL_CONTROLLER_ID, controllerId]);
  if (controllerId === GLOBAL_CONTROLLER_ID) return complete(stored.get(GLOBAL_CONTROLLER_ID));
  return merge(stored.get(GLOBAL_CONTROLLER_ID), stored.get(controllerId));
}

/** `controllerSettingEffective`: the record's base fields, its own settings and the merged ones (404 if absent). */
export async function effectiveSettingView(ctx: Ctx, id: string): Promise<Record<string, unknown>> {
  const row = await getEntity(ctx, controllerSettings, id);
  const rendered = renderRecord(controllerSettings, row);
  const effective = await effectiveOidcSettings(ctx, String(row.controllerId));
  const { oidc, controllerId: _c, ...base } = rendered;
  return {
    ...base,
    _links: { ...(base._links as object), self: { href: `./controller-settings/${id}/effective` } },
    instance: { oidc: complete(oidc as StoredOidc | undefined) },
    effective: { oidc: effective },
  };
}

/** Each URI must be absolute (a scheme and what follows it), as OIDC clients register them. */
function checkUris(oidc: unknown): void {
  if (!oidc || typeof oidc !== 'object') return;
  for (const key of LISTS) {
    const list = (oidc as StoredOidc)[key];
    list?.forEach((uri, i) => {
      let ok = false;
      try {
        ok = new URL(uri).protocol.length > 1;
      } catch {
        ok = false;
      }
      if (!ok) throw fieldError(`oidc.${key}[${i}]`, 'must be an absolute URI', uri);
    });
  }
}

/** Hooks: URIs checked; a PATCH of `oidc` changes only the lists it names. */
export const controllerSettingHooks: ResourceHooks = {
  prepare(_ctx: Ctx, input: Input, mode, existing?: Row): Input {
    checkUris(input.oidc);
    if (mode === 'patch' && input.oidc && typeof input.oidc === 'object')
      return { ...input, oidc: { ...((existing?.oidc as StoredOidc | null) ?? {}), ...(input.oidc as StoredOidc) } };
    return input;
  },
};
