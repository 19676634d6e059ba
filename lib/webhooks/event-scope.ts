/**
 * SPEC §6.2 (3): the scope an event's data sits behind, taken from the event catalog. Kinds
 * not listed go to no one through a grant.
 */
export { EVENT_SCOPES } from "../events/catalog";
