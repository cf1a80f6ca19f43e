/**
 * `edgectl posture-check create TYPE NAME …` with each type's own flags (the type named in each flag's help;
 * a flag of another type is a usage error here, since the controller ignores other types' fields), and the
 * generic list/show/update/delete; plus
 * `edgectl identity posture-data ID` and `edgectl identity failed-service-requests ID` (docs/reference-notes.md
 * §9, §11).
 */
import { Option, type Command } from 'commander';
import { requireApi } from '../api.js';
import { registerEntity, resolveEntityId, type EntitySpec } from '../crud.js';
import { identitySpec } from '../entities/identity.js';
import { postureCheckSpec } from '../entities/policy.js';
import { CliError, type CliIo } from '../io.js';
import { ALL_TYPE_FIELDS } from '../../model/posture/types/index.js';
import { printAnswerAs } from '../output.js';

const TYPES = ['OS', 'PROCESS', 'PROCESS_MULTI', 'DOMAIN', 'MAC', 'MFA'];

const spec: EntitySpec = {
  ...postureCheckSpec,
  createArgs: ['typeId', 'name'],
  flags: {
    name: { description: 'name (unique)' },
    typeId: { choices: TYPES, description: 'posture check type' },
    roleAttributes: { description: 'role attributes (service policies select the check by them)' },
    operatingSystems: {
      description: 'OS: operating systems and semver ranges, e.g. \'[{"type":"Windows","versions":[">=10.0.19041"]}]\'',
    },
    process: { hidden: true },
    'process.osType': { name: 'os-type', description: 'PROCESS: operating system of the process' },
    'process.path': { name: 'path', description: 'PROCESS: path of the process' },
    'process.hashes': { name: 'hashes', description: 'PROCESS: accepted sha512 hashes of the binary' },
    'process.signerFingerprint': {
      name: 'signer-fingerprint',
      description: "PROCESS: sha1 fingerprint of the signer's certificate",
    },
    semantic: { description: 'PROCESS_MULTI: AllOf (every process) or AnyOf (at least one)' },
    processes: {
      description:
        'PROCESS_MULTI: processes, e.g. \'[{"osType":"Linux","path":"/usr/bin/agent","hashes":[],"signerFingerprints":[]}]\'',
    },
    domains: { description: 'DOMAIN: accepted Windows domains' },
    macAddresses: { description: 'MAC: accepted MAC addresses' },
    timeoutSeconds: { description: 'MFA: seconds an MFA pass counts (-1: no limit)' },
    promptOnWake: { description: 'MFA: ask for MFA again after the device wakes' },
    promptOnUnlock: { description: 'MFA: ask for MFA again after the device is unlocked' },
    ignoreLegacyEndpoints: { description: 'MFA: older clients are exempt from the timeout' },
  },
  createExtras: {
    options: () => {},
    check(_opts, body) {
      for (const field of Object.keys(body)) {
        const owner = ALL_TYPE_FIELDS.get(field);
        if (owner && owner.id !== body.typeId)
          throw new CliError(`error: ${field} is a field of ${owner.id} checks, not of ${String(body.typeId)}`, 2);
      }
    },
    after: async () => {},
  },
  createHelp:
    '\nTypes and their flags: OS --operating-systems; PROCESS --os-type --path [--hashes] [--signer-fingerprint];\n' +
    'PROCESS_MULTI --semantic --processes; DOMAIN --domains; MAC --mac-addresses;\n' +
    'MFA [--timeout-seconds] [--prompt-on-wake] [--prompt-on-unlock] [--ignore-legacy-endpoints].',
};

/** An identity sub-command printing one Management API answer about the identity. */
function identityView(noun: Command, io: CliIo, name: string, segment: string, description: string): void {
  noun
    .command(name)
    .description(description)
    .argument('id|name', "the identity's id or name")
    .addOption(
      new Option('-o, --output <format>', 'json (default) or yaml: the API answer as sent').choices(['json', 'yaml']),
    )
    .action(async (idOrName: string, opts: { output?: 'json' | 'yaml' }) => {
      const api = requireApi(io);
      const id = await resolveEntityId(api, identitySpec, idOrName);
      const res = await api.call('GET', `/identities/${encodeURIComponent(id)}/${segment}`);
      await printAnswerAs(io, opts.output ?? 'json', res, [id]);
    });
}

export function registerPostureChecks(program: Command, io: CliIo): void {
  registerEntity(program, io, spec);
  const identity = program.commands.find((c) => c.name() === 'identity');
  if (!identity) return;
  identityView(
    identity,
    io,
    'posture-data',
    'posture-data',
    'show the posture data the controller holds for an identity',
  );
  identityView(
    identity,
    io,
    'failed-service-requests',
    'failed-service-requests',
    "show an identity's most recent session requests refused for posture",
  );
}
