/**
 * A value already encoded as JSON text. Hot answers that repeat (a session create asked again) are encoded
 * once and kept; the HTTP layer writes the text into the envelope as is instead of serialising the value
 * again on every request (docs/policy-engine.md, "Per-request fixed cost").
 */
export class JsonText {
  constructor(readonly text: string) {}

  /** The value again, for callers that need the object (tests, non-HTTP callers). */
  value(): unknown {
    return JSON.parse(this.text);
  }
}
