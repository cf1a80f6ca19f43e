/**
 * The master key of the test controllers on PostgreSQL (their PKI and token key are sealed under it in the
 * store), and the one the in-process CLI is given by default, as an operator of such a cluster would be.
 */
export const TEST_MASTER_KEY = 'test-master-key-0123456789abcdef-0123456789';
