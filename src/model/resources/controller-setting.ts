/**
 * Controller settings (`/controller-settings`): the OIDC redirect and post-logout URI lists of one controller
 * (`controllerId`), or of every controller (`controllerId: "global"`). A controller's effective lists are the
 * global ones followed by its own (services/controller/settings.ts; docs/decisions.md, "Controllers and
 * controller settings"). The spec puts update, patch and delete on `/{id}/effective`: routes/controllers.ts.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';

/** Every URI is absolute (checked by the hooks: the schema language here has no `format`). */
const UriList = Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 100 });

export const OidcSettingsSchema = Type.Object(
  { redirectUris: Type.Optional(UriList), postLogoutUris: Type.Optional(UriList) },
  { additionalProperties: false },
);

/** The `controllerId` of the settings every controller has. */
export const GLOBAL_CONTROLLER_ID = 'global';

export const controllerSettings = defineResource({
  name: 'controller-settings',
  label: 'controller setting',
  table: 'controller_settings',
  schemaName: 'controllerSetting',
  props: {
    controllerId: {
      schema: Type.String({ minLength: 1, maxLength: 255 }),
      storage: 'text',
      create: 'required',
      filter: true,
    },
    oidc: { schema: OidcSettingsSchema, storage: 'json', create: 'optional', update: 'optional', patch: true },
  },
  unique: ['controllerId'],
  writePath: '/effective',
  ops: {
    list: 'listControllerSettings',
    create: 'createControllerSetting',
    detail: 'detailControllerSetting',
    update: 'updateControllerSetting',
    patch: 'patchControllerSetting',
    delete: 'deleteControllerSetting',
  },
  envelopes: { list: 'listControllerSettingEnvelope', detail: 'detailControllerSettingEnvelope' },
});
