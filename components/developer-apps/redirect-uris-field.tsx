import { useId } from "react";
import { asSentence } from "@/components/ui/format";

/** Redirect URIs, one per line, with the rules stated under the box and the server's complaints below it. */
export function RedirectUrisField({
  value,
  onChange,
  errors,
  kind,
}: {
  value: string;
  onChange: (v: string) => void;
  errors: string[];
  kind: "confidential" | "public";
}) {
  const id = useId();
  const error = errors.length > 0;
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        Redirect URIs
      </label>
      <textarea
        id={id}
        rows={3}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
        placeholder={kind === "public" ? "com.example.app:/callback\nhttp://127.0.0.1/callback" : "https://app.example.com/oauth/callback"}
        className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-sm shadow-sm focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-500/30 aria-[invalid=true]:border-red-400"
      />
      <p id={`${id}-hint`} className="text-xs text-slate-500">
        One per line, up to 10, matched exactly. <code>https://</code>, or <code>http://127.0.0.1</code> for apps on the
        user&apos;s own machine
        {/* As checkRedirectUri decides: only a public app's loopback redirect may use any port (RFC 8252 §7.3). */}
        {kind === "public" ? (
          <>
            {" "}
            (any port). Native apps may use a private-use scheme such as <code>com.example.app:/callback</code>.
          </>
        ) : (
          " (the port too: the app must listen on the one registered)."
        )}
      </p>
      {error && (
        <ul id={`${id}-error`} className="space-y-0.5 text-sm text-red-700">
          {errors.map((e) => (
            <li key={e} className="break-words">
              {asSentence(e)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
