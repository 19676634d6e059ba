import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { FocusedNotice } from "@/components/ui/focused-notice";

/**
 * A client's credentials right after registration or rotation: the secret is never shown again.
 * Its notice takes the focus (the registration form and its button are gone).
 */
export function SecretReveal({
  title,
  clientId,
  secret,
  onDone,
}: {
  title: string;
  clientId: string;
  secret: string | null;
  onDone: () => void;
}) {
  return (
    <Card title={title}>
      <div className="space-y-3">
        {secret ? (
          <FocusedNotice key={secret} tone="warning">
            Copy the client secret now. It is shown only once and cannot be recovered; if it is lost, rotate it.
          </FocusedNotice>
        ) : (
          <FocusedNotice key={clientId} tone="info">
            A public app has no client secret: it proves itself with PKCE (S256) on every authorization.
          </FocusedNotice>
        )}
        <dl className="space-y-3 text-sm">
          <div>
            <dt className="font-medium text-slate-700">client_id</dt>
            <dd className="mt-1 flex flex-wrap items-center gap-2">
              <code data-testid="client-id" className="break-all rounded bg-slate-100 px-2 py-1 font-mono text-sm">
                {clientId}
              </code>
              <CopyButton text={clientId} label="Copy client_id" />
            </dd>
          </div>
          {secret && (
            <div>
              <dt className="font-medium text-slate-700">client_secret</dt>
              <dd className="mt-1 flex flex-wrap items-center gap-2">
                <code data-testid="client-secret" className="break-all rounded bg-slate-100 px-2 py-1 font-mono text-sm">
                  {secret}
                </code>
                <CopyButton text={secret} label="Copy secret" />
              </dd>
            </div>
          )}
        </dl>
        <Button variant="secondary" onClick={onDone}>
          Done
        </Button>
      </div>
    </Card>
  );
}
