import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { CopyButton } from "@/components/ui/copy-button";
import { Notice } from "@/components/ui/notice";
import type { RevealedSecret } from "./shared";

/** A subscription's signing secret right after creation or rotation: it is never shown again. */
export function SigningSecretReveal({ revealed, onDone }: { revealed: RevealedSecret; onDone: () => void }) {
  return (
    <Card title={revealed.title}>
      <div className="space-y-3 text-sm">
        <Notice tone="warning">{revealed.note}</Notice>
        <p className="break-all text-slate-600">
          Endpoint: <span className="font-mono text-xs">{revealed.url}</span>
        </p>
        <div className="flex flex-wrap items-center gap-2">
          <code data-testid="signing-secret" className="break-all rounded bg-slate-100 px-2 py-1 font-mono text-sm">
            {revealed.secret}
          </code>
          <CopyButton text={revealed.secret} label="Copy secret" />
        </div>
        <Button variant="secondary" onClick={onDone}>
          Done
        </Button>
      </div>
    </Card>
  );
}
