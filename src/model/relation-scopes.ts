/** The store scope of a related listing (relations.ts) for parent record `id`. */
import { configsOfService, configsOfType, servicesOfConfig, type Scope } from './listing-scopes.js';
import { policiesOf, reachableThrough, selectedByPolicy } from './policy/scopes.js';
import type { Relation } from './relations.js';

export function relationScope(r: Relation, id: string): Scope {
  const s = r.scope;
  switch (s.kind) {
    case 'selected':
      return selectedByPolicy(s.policy, s.target, id);
    case 'policies':
      return policiesOf(s.policy, s.target, id);
    case 'reachable':
      return reachableThrough(s.policy, s.from, id, s.to);
    case 'configsOfService':
      return configsOfService(id);
    case 'configsOfType':
      return configsOfType(id);
    case 'servicesOfConfig':
      return servicesOfConfig(id);
  }
}
