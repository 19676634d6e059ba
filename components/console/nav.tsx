"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/activities", label: "Activities" },
  { href: "/teams", label: "Teams" },
  { href: "/settings/profile", label: "Profile" },
  { href: "/settings/teams", label: "Invitations" },
  { href: "/settings/tokens", label: "Tokens" },
  { href: "/settings/apps", label: "Apps" },
  { href: "/developers/apps", label: "Developers" },
  { href: "/docs", label: "API docs" },
];

export function ConsoleNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Console" className="-mx-1 flex flex-wrap gap-1 text-sm">
      {LINKS.map((l) => {
        const active = pathname === l.href || pathname.startsWith(`${l.href}/`);
        return (
          <Link
            key={l.href}
            href={l.href}
            aria-current={active ? "page" : undefined}
            className={`whitespace-nowrap rounded-md px-3 py-1.5 ${active ? "bg-brand-50 font-medium text-brand-700" : "text-slate-600 hover:bg-slate-100"}`}
          >
            {l.label}
          </Link>
        );
      })}
    </nav>
  );
}
