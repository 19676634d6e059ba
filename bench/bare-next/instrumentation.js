// Deliberately empty. Without it, Turbopack (rooted at the repository for its node_modules)
// picks up the service's instrumentation.ts, and the baseline would migrate and seed a database.
export function register() {}
