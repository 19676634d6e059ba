// The header that carries the socket's peer address from the server process (scripts/server.mjs,
// and the test server) to the route handlers. The server always overwrites it, so a client
// cannot choose it; lib/http/client-address.ts reads it.
export const PEER_ADDRESS_HEADER = "x-aas-peer-address";
