/**
 * `OS`: the reported operating system type (case-insensitive) must be listed, and its version satisfy one of
 * that entry's semver ranges (none: any version) (docs/reference-notes.md §9.3).
 */
import { Type } from '../../schema-type.js';
import semver from 'semver';
import { fieldError } from '../../errors.js';
import { oneSlot, OS_TYPES, type PostureCheckType } from './type.js';

const OsEntry = Type.Object({
  type: Type.Union(OS_TYPES.map((t) => Type.Literal(t))),
  versions: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })),
});

interface OsCheck {
  type: string;
  versions?: string[];
}

/** A reported version as semver: `10.0.19041` is kept, `10` or `10.0` are completed, builds are cut off. */
export function coerceVersion(v: string): string | null {
  return semver.valid(v) ?? semver.coerce(v)?.version ?? null;
}

export function versionMatches(version: string, ranges: readonly string[] | undefined): boolean {
  if (!ranges || ranges.length === 0) return true;
  const v = coerceVersion(version);
  return v !== null && ranges.some((r) => semver.satisfies(v, r));
}

export const osType: PostureCheckType = {
  id: 'OS',
  name: 'Operating System Check',
  operatingSystems: [
    { type: 'Windows', versions: ['10.0.19041'] },
    { type: 'Linux', versions: [] },
    { type: 'Android', versions: ['11.0.0'] },
    { type: 'macOS', versions: ['11.0.0'] },
    { type: 'iOS', versions: ['14.0.0'] },
  ],
  fields: { operatingSystems: { schema: Type.Array(OsEntry, { minItems: 1, maxItems: 100 }), required: true } },
  validate(d) {
    (d.operatingSystems as OsCheck[]).forEach((os, i) =>
      (os.versions ?? []).forEach((r, j) => {
        if (semver.validRange(r) === null)
          throw fieldError(`operatingSystems.${i}.versions.${j}`, 'not a valid semver range', r);
      }),
    );
  },
  ...oneSlot('os'),
  evaluate(d, _id, { identity }) {
    const expected = d.operatingSystems as OsCheck[];
    const os = identity?.os;
    const isPassing =
      os !== undefined &&
      expected.some((e) => e.type.toLowerCase() === os.type.toLowerCase() && versionMatches(os.version, e.versions));
    return {
      isPassing,
      failure: { actualValue: { type: os?.type ?? '', version: os?.version ?? '' }, expectedValue: expected },
    };
  },
};
