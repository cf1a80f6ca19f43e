/**
 * Resource definitions are data and their behaviour is registered by name (docs/design.md, "One definition per
 * resource"): a hook table entry under a name no definition has would silently never run, and a subtype module
 * missing from its table would make its method unusable.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUTHENTICATOR_METHODS } from '../../../src/model/authenticators/index.js';
import { ENROLLMENT_METHODS } from '../../../src/model/enrollments/index.js';
import { hooksOf } from '../../../src/model/resource-hooks.js';
import { apiSessionCerts } from '../../../src/model/resources/api-session-cert.js';
import { IDENTITY_ENROLLMENT_METHODS } from '../../../src/model/resources/enrollment.js';
import { RESOURCES } from '../../../src/model/resources/index.js';
import { sessions } from '../../../src/model/resources/session.js';
import { terminators } from '../../../src/model/resources/terminator.js';
import { RESOURCE_HOOKS } from '../../../src/model/services/hooks/index.js';
import { controllers } from '../../../src/model/resources/controller.js';

const DEFINED = [...RESOURCES, sessions, terminators, apiSessionCerts, controllers];

describe('resource hooks', () => {
  it('registers hooks only under names of defined resources', () => {
    const names = new Set(DEFINED.map((d) => d.name));
    assert.deepEqual(
      Object.keys(RESOURCE_HOOKS).filter((n) => !names.has(n)),
      [],
    );
  });

  it('finds a resource’s hooks by its name in the context’s table, and none for a plain one', () => {
    const identities = DEFINED.find((d) => d.name === 'identities')!;
    const ctx = { hooks: RESOURCE_HOOKS };
    assert.equal(hooksOf(ctx, identities), RESOURCE_HOOKS.identities);
    assert.deepEqual(hooksOf(ctx, { name: 'identity-types' }), {});
  });

  it('keeps no behaviour on the definitions themselves', () => {
    for (const d of DEFINED) assert.equal('hooks' in d, false, d.name);
  });

  it('has one module per enrollment and authenticator method, under its own id', () => {
    assert.deepEqual(Object.keys(ENROLLMENT_METHODS).sort(), [...IDENTITY_ENROLLMENT_METHODS].sort());
    for (const [id, m] of Object.entries(ENROLLMENT_METHODS)) assert.equal(m.id, id);
    assert.deepEqual(Object.keys(AUTHENTICATOR_METHODS).sort(), ['cert', 'updb']);
    for (const [id, m] of Object.entries(AUTHENTICATOR_METHODS)) assert.equal(m.id, id);
    assert.equal(ENROLLMENT_METHODS.updb!.authenticator, 'updb');
    assert.equal(ENROLLMENT_METHODS.ott!.authenticator, 'cert');
    assert.equal(ENROLLMENT_METHODS.ottca!.authenticator, 'cert');
  });
});
