/**
 * `edgectl controller list`: the controllers serving this network (each running controller records itself and
 * refreshes its row; docs/decisions.md, "Controllers and controller settings"). `edgectl controller-setting …`:
 * the generic verbs over controller settings, plus `effective`, the lists in force for one setting's controller.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { registerEntity, resolveEntityId } from '../crud.js';
import { controllerSettingSpec, controllerSpec } from '../entities/controller.js';
import type { CliIo } from '../io.js';
import { jsonOption } from '../options.js';
import { formatOf, isScriptFormat, printAnswerAs, writeOutputOption } from '../output.js';

export function registerControllers(program: Command, io: CliIo): void {
  registerEntity(program, io, controllerSpec).addHelpText(
    'after',
    '\nA controller is online while its heartbeat (every 15 s) is recent (45 s); one unseen for an hour is not listed.\n' +
      '\nExamples:\n  edgectl controller list\n  edgectl controller list \'name contains "10.0.0"\' -j',
  );
  const settings = registerEntity(program, io, controllerSettingSpec);
  settings.addHelpText(
    'after',
    '\nExamples:\n' +
      '  edgectl controller-setting create global --redirect-uris https://console.example/cb\n' +
      '  edgectl controller-setting create <controller-id> --post-logout-uris https://console.example/bye\n' +
      '  edgectl controller-setting effective global',
  );
  settings
    .command('effective')
    .description("a setting's own lists and, merged with the global ones, those in force for its controller")
    .argument('id|controllerId', "the setting's id, or its controller's id (`global` for the global setting)")
    .addOption(writeOutputOption())
    .addOption(jsonOption())
    .action(async (idOrController: string, opts: { json?: boolean; output?: string }) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, controllerSettingSpec, idOrController);
      const res = await api.call<{ data: Record<string, unknown> }>(
        'GET',
        `/controller-settings/${encodeURIComponent(id)}/effective`,
      );
      const format = formatOf(opts);
      if (isScriptFormat(format)) return printAnswerAs(io, format, res);
      const show = (label: string, v: unknown) => io.out(`${label}: ${((v as string[]) ?? []).join(' ') || '(none)'}`);
      const eff = (res.data.effective as { oidc?: Record<string, unknown> })?.oidc ?? {};
      const own = (res.data.instance as { oidc?: Record<string, unknown> })?.oidc ?? {};
      show('effective redirect URIs', eff.redirectUris);
      show('effective post-logout URIs', eff.postLogoutUris);
      show('own redirect URIs', own.redirectUris);
      show('own post-logout URIs', own.postLogoutUris);
    });
}
