/**
 * `edgectl edge-router …` and `edgectl router …` (transit routers): the generic verbs over their resource
 * definitions; `create … --jwt-out FILE` writes the new router's enrollment JWT (mode 0600; parity: `ziti edge
 * create edge-router -o FILE`), and `edge-router re-enroll ID|NAME [--jwt-out FILE]` drops the router's
 * certificate and prints (or writes) its new enrollment JWT (docs/reference-notes.md §7.2).
 */
import { Option, type Command } from 'commander';
import { requireApi, type Api } from '../api.js';
import { registerEntity, resolveEntityId, type EntitySpec } from '../crud.js';
import { edgeRouterSpec, routerSpec } from '../entities/router.js';
import { CliError, type CliIo } from '../io.js';
import { emitJwts } from '../jwt-output.js';
import { jsonOption, jwtOutOption } from '../options.js';
import { formatOf, isScriptFormat, printAnswerAs, writeOutputOption, type Rec } from '../output.js';

/** Reads a router's outstanding enrollment JWT and prints it or writes it to `out`. */
async function emitRouterJwt(
  api: Api,
  io: CliIo,
  spec: EntitySpec,
  method: string,
  id: string,
  out: string | undefined,
  quiet: boolean,
): Promise<void> {
  const r = (await api.call<{ data: Rec }>('GET', `/${spec.def.name}/${encodeURIComponent(id)}`)).data;
  if (typeof r.enrollmentJwt !== 'string')
    throw new CliError(`error: ${spec.def.label} ${id} has no outstanding enrollment JWT`, 1);
  emitJwts(
    io,
    [
      {
        method,
        jwt: r.enrollmentJwt,
        ...(typeof r.enrollmentExpiresAt === 'string' ? { expiresAt: r.enrollmentExpiresAt } : {}),
      },
    ],
    out,
    quiet,
  );
}

/** `--jwt-out FILE` on `create`: the enrollment created with the router, written for its operator. */
function withJwtOut(spec: EntitySpec, method: string): EntitySpec {
  return {
    ...spec,
    createExtras: {
      options(cmd) {
        cmd.addOption(new Option('--jwt-out <file>', "write the router's enrollment JWT to this file (mode 0600)"));
        cmd.addHelpText(
          'after',
          `\nThe router enrolls with its ${method} JWT: --jwt-out FILE writes it (mode 0600); \`edgectl ${spec.noun} show NAME -j\` has it too.`,
        );
      },
      async after({ api, io, id, opts }) {
        if (opts.jwtOut !== undefined)
          await emitRouterJwt(api, io, spec, method, id, opts.jwtOut as string, opts.json === true);
      },
    },
  };
}

export function registerRouters(program: Command, io: CliIo): void {
  const er = registerEntity(program, io, withJwtOut(edgeRouterSpec, 'erott'));
  registerEntity(program, io, withJwtOut(routerSpec, 'trott'));

  er.command('re-enroll')
    .description('re-enroll an edge router: its certificate stops working and a new enrollment JWT is issued')
    .argument('id|name', "the edge router's id or name")
    .addOption(jwtOutOption())
    .addOption(writeOutputOption())
    .addOption(jsonOption())
    .action(async (idOrName: string, opts: { jwtOut?: string; json?: boolean; output?: string }) => {
      const format = formatOf(opts);
      const script = isScriptFormat(format) ? format : undefined;
      const api = requireApi(io);
      const id = await resolveEntityId(api, edgeRouterSpec, idOrName);
      const res = await api.call('POST', `/edge-routers/${encodeURIComponent(id)}/re-enroll`);
      if (script) await printAnswerAs(io, script, res, [id]);
      else io.out(`re-enrolled edge router ${id}`);
      await emitRouterJwt(api, io, edgeRouterSpec, 'erott', id, opts.jwtOut, script !== undefined);
    });
}
