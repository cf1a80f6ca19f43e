/**
 * The posture step of session creation (docs/reference-notes.md §4.5, step 3), left open for the posture
 * slice. The rule it will implement: among the service policies of the requested type that link the
 * identity and the service, at least one must pass (all its checks pass; a policy without checks passes),
 * else 409 INVALID_POSTURE naming the failing policies and checks. Posture checks cannot be defined yet, so
 * every policy passes and the granting policies are not even looked up.
 */
import type { Ctx } from '../ctx.js';

export interface PostureRequest {
  identityId: string;
  apiSessionId: string;
  serviceId: string;
  type: 'Dial' | 'Bind';
  /** The granting policies of `type`, looked up only when a check needs them. */
  policies(): Promise<{ id: string; name: string }[]>;
}

/** Throws 409 INVALID_POSTURE when no granting policy passes; resolves when the session may be created. */
export async function checkSessionPosture(_ctx: Ctx, _req: PostureRequest): Promise<void> {
  // Open hook: no posture checks exist, so every granting policy passes.
}
