/**
 * The master key of the bench's controllers on PostgreSQL: the model's build seals the PKI and the token key in
 * the database under it (docs/decisions.md, "Shared controller secrets") and every replica is started with it.
 * A module of its own, so that the load generator does not load the model to know it.
 */
export const BENCH_MASTER_KEY = 'bench-master-key-0123456789-abcdefghijkl';
