/** The duration parser lives in the model (identity trace durations use it too); re-exported for the daemon. */
export { parseDuration } from '../model/duration.js';
