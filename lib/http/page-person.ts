/**
 * The header that names the person a console page was rendered for (their account id). The
 * console's routes refuse a request whose session is someone else's, as a session that ended:
 * a page left open acts for nobody but its own person after another account signed in in
 * another tab. A request without it (a script with a session cookie) is judged by the session alone.
 */
export const PAGE_PERSON_HEADER = "x-console-person";
