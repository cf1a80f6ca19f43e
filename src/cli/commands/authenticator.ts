/**
 * `edgectl authenticator …`: the generic verbs over the authenticators resource definition, plus `re-enroll`:
 * the authenticator is replaced by an enrollment of the matching method (updb → updb with the same username,
 * cert → ott, or ottca for a certificate from a registered CA; docs/reference-notes.md §7.2), whose JWT is
 * printed or written to `--jwt-out FILE`; and `request-extend`, which asks the identity's clients to extend their
 * certificate (and roll its key) at their next login.
 */
import type { Command } from 'commander';
import { requireApi } from '../api.js';
import { registerEntity, resolveEntityId } from '../crud.js';
import { authenticatorSpec } from '../entities/authenticator.js';
import type { CliIo } from '../io.js';
import { durationOption, expiresIn, jsonOption, jwtOutOption } from '../options.js';
import { formatOf, isScriptFormat, printAnswerAs, writeOutputOption } from '../output.js';
import { emitEnrollmentJwt } from './enrollment.js';

export function registerAuthenticator(program: Command, io: CliIo): void {
  const noun = registerEntity(program, io, authenticatorSpec);
  noun
    .command('re-enroll')
    .description('replace an authenticator by a new enrollment of its method (the identity enrolls again with the JWT)')
    .argument('id|username', "the authenticator's id, or its username (updb)")
    .addOption(durationOption('the new enrollment'))
    .addOption(jwtOutOption())
    .addOption(writeOutputOption())
    .addOption(jsonOption())
    .action(
      async (
        idOrName: string,
        opts: { durationMinutes?: number; jwtOut?: string; json?: boolean; output?: string },
      ) => {
        const format = formatOf(opts);
        const script = isScriptFormat(format) ? format : undefined;
        const api = requireApi(io);
        const id = await resolveEntityId(api, authenticatorSpec, idOrName);
        const res = await api.call<{ data: { id: string } }>(
          'POST',
          `/authenticators/${encodeURIComponent(id)}/re-enroll`,
          { expiresAt: expiresIn(opts.durationMinutes) },
        );
        // `-o id`: the new enrollment's id (the answer's), the record a script follows up on.
        if (script) await printAnswerAs(io, script, res);
        else io.out(`re-enrolled authenticator ${id}: it is replaced by enrollment ${res.data.id}`);
        await emitEnrollmentJwt(api, io, res.data.id, opts.jwtOut, script !== undefined);
      },
    );
  noun
    .command('request-extend')
    .description(
      "ask the identity's clients to extend this certificate authenticator at their next login (and roll its key)",
    )
    .argument('id', "the certificate authenticator's id")
    .option('--roll-keys', 'ask for a new key pair as well (the next extension must bring a new public key)')
    .addHelpText('after', '\nExamples:\n  edgectl authenticator request-extend <id> --roll-keys')
    .action(async (id: string, opts: { rollKeys?: boolean }) => {
      const api = requireApi(io);
      await api.call('POST', `/authenticators/${encodeURIComponent(id)}/request-extend`, {
        rollKeys: opts.rollKeys === true,
      });
      io.out(`asked the clients of authenticator ${id} to extend it${opts.rollKeys ? ' with a new key' : ''}`);
    });
}
