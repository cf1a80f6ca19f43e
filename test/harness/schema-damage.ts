/**
 * Foreign logic written into a store file the way an outside party with the file would: a
 * trigger no migration creates that makes every new identity an admin, a store trigger whose body was changed
 * to do the same, and a dropped index. The names and the descriptions the scan and the refusals give them.
 */
import type Database from 'better-sqlite3';

export const FOREIGN_TRIGGER = 'evil_admin';
/** A trigger of migration 0005 (marker bump on identity delete), its body extended. */
export const ALTERED_TRIGGER = 'access_identity_identities_delete';
/** An index of migration 0001. */
export const DROPPED_INDEX = 'identities_by_auth_policy';

export const FOREIGN_DESCRIPTION = `trigger ${FOREIGN_TRIGGER} on identities is not created by the store's migrations`;
export const ALTERED_DESCRIPTION = `trigger ${ALTERED_TRIGGER} on identities differs from what the store's migrations create`;
export const MISSING_DESCRIPTION = `index ${DROPPED_INDEX} on identities is missing`;

/** The foreign trigger alone. */
export function injectForeignTrigger(db: Database.Database): void {
  db.exec(
    `CREATE TRIGGER ${FOREIGN_TRIGGER} AFTER INSERT ON identities BEGIN UPDATE identities SET "isAdmin" = 1 WHERE id = new.id; END`,
  );
}

/** All three: the foreign trigger, the altered one and the dropped index. */
export function injectForeignLogic(db: Database.Database): void {
  injectForeignTrigger(db);
  db.exec(`DROP TRIGGER ${ALTERED_TRIGGER}`);
  db.exec(
    `CREATE TRIGGER "${ALTERED_TRIGGER}" AFTER DELETE ON "identities" FOR EACH ROW BEGIN
       UPDATE access_markers SET gen = gen + 1 WHERE name = 'identity';
       UPDATE identities SET "isAdmin" = 1;
     END`,
  );
  db.exec(`DROP INDEX ${DROPPED_INDEX}`);
}

/** PostgreSQL: a trigger of migration 0005 (marker bump on identity delete) whose function is changed. */
export const ALTERED_FUNCTION = 'access_identity_identities';
/** PostgreSQL: a rule no migration creates (rules rewrite writes as triggers can). */
export const FOREIGN_RULE = 'evil_rule';

/** What the scan says of the same damage on PostgreSQL, where a trigger's body is a function of its own. */
export const POSTGRES_DESCRIPTIONS = [
  FOREIGN_DESCRIPTION,
  `function ${FOREIGN_TRIGGER}() is not created by the store's migrations`,
  `function ${ALTERED_FUNCTION}() differs from what the store's migrations create`,
  `rule ${FOREIGN_RULE} on config_types is not created by the store's migrations`,
  MISSING_DESCRIPTION,
];

/**
 * The same foreign logic written into a PostgreSQL store: the foreign trigger (and its function), the store's
 * marker function extended to make every identity an admin, a foreign rule, and the dropped index.
 */
export const POSTGRES_FOREIGN_LOGIC = `
  create function ${FOREIGN_TRIGGER}() returns trigger language plpgsql as $body$ begin
    update identities set "isAdmin" = 1 where id = new.id; return null; end $body$;
  create trigger ${FOREIGN_TRIGGER} after insert on identities for each row execute function ${FOREIGN_TRIGGER}();
  create or replace function ${ALTERED_FUNCTION}() returns trigger language plpgsql as $body$ begin
    update access_markers set gen = gen + 1 where name = 'identity';
    update identities set "isAdmin" = 1;
    return null; end $body$;
  create rule ${FOREIGN_RULE} as on update to config_types do instead nothing;
  drop index ${DROPPED_INDEX};
`;
