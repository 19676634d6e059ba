import Link from "next/link";

type ScopeLine = { name: string; plain: string };

/** The scopes that read an athlete's own data: a coach's token reads their athletes' with them. */
const ATHLETE_DATA_SCOPES = new Set(["athlete.read", "activities.read", "metrics.read", "location.read"]);

/**
 * An app's name in the service's own sentence: isolated, so that no character of it can turn
 * the words around it; set apart, so that a name imitating those words ("…, from claude.ai,
 * wants…") reads as the name it is; clipped by its heading, so that stacked marks stay inside the card.
 */
function AppNameShown({ name }: { name: string }) {
  // Inline (a block would put a space into the heading's accessible name); the heading clips.
  return <bdi className="rounded bg-slate-100 px-1 [box-decoration-break:clone] [overflow-wrap:anywhere]">{name}</bdi>;
}

function Shell({ children }: { children: React.ReactNode }) {
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-md rounded-lg border border-slate-200 bg-white p-6 shadow-sm">{children}</div>
    </main>
  );
}

export function AuthorizeError({ message }: { message: string }) {
  return (
    <Shell>
      <h1 className="text-xl font-semibold">This authorization link cannot be used</h1>
      <p className="mt-3 text-sm text-slate-700">{message}</p>
      <p className="mt-3 text-sm text-slate-600">
        Nothing was shared. If you followed a link from an app, tell its developer. <Link href="/activities" className="text-brand-700 underline hover:text-brand-600">Go to your activities</Link>.
      </p>
    </Shell>
  );
}

/**
 * An error in a request from a verified app that the athlete has not trusted: shown, with the
 * way back as a link the athlete chooses to follow, never an automatic redirect (RFC 9700 §4.11.2).
 */
export function ReturnToApp({ appName, message, returnUrl, returnHost }: { appName: string; message: string; returnUrl: string; returnHost: string }) {
  return (
    <Shell>
      <h1 className="overflow-hidden text-xl font-semibold">
        <AppNameShown name={appName} /> sent a request that cannot be used
      </h1>
      <p className="mt-3 text-sm text-slate-700">{message}</p>
      <p className="mt-3 text-sm text-slate-600">Nothing was shared. Only go back if you trust the site you came from.</p>
      <p className="mt-4 text-sm">
        <a href={returnUrl} rel="noreferrer" className="text-brand-600 hover:underline">
          Return to {returnHost}
        </a>
      </p>
    </Shell>
  );
}

export function ConsentScreen({
  app,
  account,
  askedScopes,
  newScopes,
  grantedScopes,
  redirectHost,
  forAssistant,
  coachedTeams,
  hidden,
  action,
}: {
  app: { name: string; logoUrl: string | null; homepageUrl: string | null; unreviewedFrom: string | null };
  /** The tokens are for the MCP server: the client is an assistant. */
  forAssistant: boolean;
  /** The teams the person coaches that have other members: a token of theirs reaches those members too. */
  coachedTeams: { id: string; name: string; members: number }[];
  account: string;
  /** What the request asks for: what its code carries, already allowed or not. */
  askedScopes: ScopeLine[];
  newScopes: ScopeLine[];
  /** The whole grant so far, which may hold more than is asked for now. */
  grantedScopes: ScopeLine[];
  redirectHost: string;
  hidden: Record<string, string>;
  action: (form: FormData) => Promise<void>;
}) {
  return (
    <Shell>
      <div className="flex items-center gap-3">
        {/* An unreviewed client's logo is not shown: it could wear any brand's. */}
        {app.logoUrl && !app.unreviewedFrom && (
          // eslint-disable-next-line @next/next/no-img-element -- an app's own logo, any host
          <img src={app.logoUrl} alt="" width={48} height={48} className="h-12 w-12 rounded-md border border-slate-200 object-cover" />
        )}
        <h1 className="overflow-hidden text-xl font-semibold">
          <AppNameShown name={app.name} />
          {app.unreviewedFrom && <span className="font-normal">, from {app.unreviewedFrom},</span>} wants to access your account
          {forAssistant && <span className="font-normal"> as an assistant</span>}
        </h1>
      </div>
      {app.unreviewedFrom && (
        <div role="note" className="mt-3 rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
          This app registered itself: Athlete Activity Service has not reviewed it. Allow only if you trust <strong className="break-all">{app.unreviewedFrom}</strong>{" "}
          and you started this connection yourself.
          {hostname(redirectHost) !== hostname(app.unreviewedFrom) && (
            <>
              {" "}
              It sends you back, with access to your account, to <strong className="break-all">{redirectHost}</strong>, not to {app.unreviewedFrom}: allow only if you
              trust that host too.
            </>
          )}
        </div>
      )}
      {forAssistant && (
        <p className="mt-2 text-sm text-slate-700">
          An AI assistant that speaks the Model Context Protocol will read your training through this service&apos;s MCP server, with the permissions below. It cannot change anything.
        </p>
      )}
      <p className="mt-2 text-sm text-slate-600">
        Signed in as <strong>{account}</strong>.{" "}
        {/* An unreviewed client's site is its own word, like its logo: not shown. */}
        {app.homepageUrl && !app.unreviewedFrom && (
          <>
            App site: <span className="[overflow-wrap:anywhere]">{app.homepageUrl}</span>.
          </>
        )}
      </p>
      <h2 className="mt-5 text-sm font-medium text-slate-700">
        {!newScopes.length ? "It asks again for what you already allowed:" : grantedScopes.length ? "It asks for more:" : "It will be able to:"}
      </h2>
      <ul className="mt-2 space-y-2" aria-label="Requested permissions">
        {/* Asking again for part of a grant lists that part: what this approval gives the app. */}
        {(newScopes.length ? newScopes : askedScopes).map((s) => (
          <li key={s.name} className="flex gap-2 rounded-md border border-slate-200 p-2 text-sm">
            <span aria-hidden className="text-brand-600">✓</span>
            <span>
              {s.plain} <span className="font-mono text-xs text-slate-500">({s.name})</span>
            </span>
          </li>
        ))}
      </ul>
      {coachedTeams.length > 0 && askedScopes.some((s) => ATHLETE_DATA_SCOPES.has(s.name)) && (
        <p role="note" className="mt-3 rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm text-slate-700 [overflow-wrap:anywhere]">
          You coach{" "}
          {coachedTeams.map((t, i) => (
            <span key={t.id}>
              {i > 0 && (i === coachedTeams.length - 1 ? " and " : ", ")}
              <strong>
                <bdi>{t.name}</bdi>
              </strong>{" "}
              ({t.members} {t.members === 1 ? "member" : "members"})
            </span>
          ))}
          . With these permissions {forAssistant ? "the assistant" : "the app"} can read the same of your teams&apos; members as of you, for as long as they are on your team.
        </p>
      )}
      {grantedScopes.length > 0 && newScopes.length > 0 && (
        <p className="mt-3 text-xs text-slate-500">Already allowed: {grantedScopes.map((s) => s.plain.toLowerCase()).join("; ")}.</p>
      )}
      <form action={action} className="mt-6 flex gap-3">
        {Object.entries(hidden).map(([k, v]) => (
          <input key={k} type="hidden" name={k} value={v} />
        ))}
        <button
          type="submit"
          name="decision"
          value="deny"
          className="flex-1 rounded-md border border-slate-300 bg-white px-3.5 py-2 text-sm font-medium hover:bg-slate-100"
        >
          Deny
        </button>
        <button type="submit" name="decision" value="allow" className="flex-1 rounded-md bg-brand-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-brand-700">
          Allow
        </button>
      </form>
      <p className="mt-4 text-xs text-slate-500">
        You will be sent back to <strong className="[overflow-wrap:anywhere]">{redirectHost}</strong>. You can disconnect the app at any time in{" "}
        <Link href="/settings/apps" className="text-brand-700 underline hover:text-brand-600">
          Settings → Apps
        </Link>
        .
      </p>
    </Shell>
  );
}

/** A host's name without its port: a loopback redirect may take any port (CONTRACT §6), and that is still the same host. */
function hostname(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return host;
  }
}
