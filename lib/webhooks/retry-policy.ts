// The console's import of the thresholds; the policy itself is lib/webhooks/policy.ts.
export { DISABLE_AFTER_FAILURES, FAILING_AFTER_FAILURES } from "./policy";
