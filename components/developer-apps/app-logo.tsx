"use client";

import { useState } from "react";

/** An app's logo from its own host, or its initial when it has none or it will not load. */
export function AppLogo({ name, url, size = 40 }: { name: string; url: string | null; size?: number }) {
  const [failed, setFailed] = useState<string | null>(null);
  const style = { width: size, height: size };
  if (url && failed !== url) {
    return (
      // eslint-disable-next-line @next/next/no-img-element -- an app's own logo, from any host
      <img
        src={url}
        alt=""
        width={size}
        height={size}
        style={style}
        referrerPolicy="no-referrer"
        onError={() => setFailed(url)}
        className="shrink-0 rounded-md border border-slate-200 bg-white object-cover"
      />
    );
  }
  return (
    <span aria-hidden="true" style={style} className="flex shrink-0 items-center justify-center rounded-md bg-brand-50 font-semibold text-brand-700">
      {name.trim().charAt(0).toUpperCase() || "?"}
    </span>
  );
}
