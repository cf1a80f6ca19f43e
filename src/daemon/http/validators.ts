/**
 * The validators of request bodies: Fastify's own compiler (@fastify/ajv-compiler, with the server's `ajv`
 * options, so the same Ajv settings, formats and errors as Fastify's default), with two differences in *when*
 * a schema is compiled, never in what it accepts:
 *
 * - lazily, on a route's first validation: a start compiles nothing, and a route never called (most of them in
 *   an offline CLI command, which builds the whole app) costs nothing. Compiling every route at start took
 *   about 0.3 s of CPU, a large part of a start;
 * - once per {@link BodyValidators} for each option set and schema text: routes sharing a body schema share its
 *   validator. A controller has its own, made with its server; the test servers of one process share one, as
 *   their schemas and options are the same constants (compiling them for every test server cost about 4 % of
 *   the suite's CPU). Nothing is kept by the module, and the schemas are constants of the route declarations
 *   (src/daemon/routes, the resource definitions), so a set's size is fixed.
 *
 * test/unit/daemon/route-table.test.ts compiles every route's schema, as a start used to.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';
import type { ValidateFunction } from 'ajv';

/** What Fastify hands a validator compiler: the schema and the route it belongs to. */
type RouteSchema = Parameters<FastifySchemaCompiler<unknown>>[0];
type CompileRoute = (route: RouteSchema) => ValidateFunction;

interface Compiler {
  /** Fastify's compiler for one option set: one Ajv instance. */
  compile: CompileRoute;
  /** Its validators by schema text. */
  validators: Map<string, ValidateFunction>;
}

/** A server's compiler (one Ajv instance, as Fastify makes one for each server) with its validators. */
function compilerFor(externalSchemas: unknown, options: unknown): Compiler {
  const build = AjvCompiler() as unknown as (externalSchemas: unknown, options: unknown) => CompileRoute;
  return { compile: build(externalSchemas, options), validators: new Map() };
}

/** A validator that compiles its schema (or takes the process's compiled one) when it is first used. */
function lazyValidator(c: Compiler, route: RouteSchema): ValidateFunction {
  let fn: ValidateFunction | undefined;
  const compiled = (): ValidateFunction => {
    if (fn) return fn;
    const text = JSON.stringify(route.schema);
    fn = c.validators.get(text);
    if (!fn) {
      fn = c.compile(route);
      c.validators.set(text, fn);
    }
    return fn;
  };
  const validate = function (this: unknown, data: unknown, dataCxt?: unknown) {
    const f = compiled();
    const ok = f.call(this, data, dataCxt as Parameters<ValidateFunction>[1]);
    validate.errors = f.errors;
    return ok;
  } as ValidateFunction;
  // Fastify hands Ajv's validators the request as parent data (so Ajv may replace a root value): it looks for
  // `schemaEnv` before calling, and so gets the real one, compiled then.
  Object.defineProperty(validate, 'schemaEnv', { get: () => compiled().schemaEnv });
  return validate;
}

/** Compiled body validators, for the servers built with this object: one compiler per option set. */
export class BodyValidators {
  /** By the text of the external schemas and the Ajv options Fastify hands the factory (plugins by their source). */
  readonly #compilers = new Map<string, Compiler>();

  /** `schemaController.compilersFactory.buildValidator` for Fastify: lazy validators from this set. */
  readonly buildValidator = ((externalSchemas: unknown, options: unknown) => {
    const key = JSON.stringify([externalSchemas, options], (_k, v: unknown) =>
      typeof v === 'function' ? `function ${v.name} ${String(v)}` : v,
    );
    let c = this.#compilers.get(key);
    if (!c) {
      c = compilerFor(externalSchemas, options);
      this.#compilers.set(key, c);
    }
    const compiler = c;
    return (route: RouteSchema) => lazyValidator(compiler, route);
  }) as unknown as ValidatorFactory;
}
