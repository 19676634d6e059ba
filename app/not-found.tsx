import type { Metadata } from "next";
import Link from "next/link";

export const metadata: Metadata = { title: "Page not found" };

// Any path no page answers (and notFound() from a page): the console's look, a main landmark,
// and a way back, instead of Next.js's bare default.
export default function NotFound() {
  return (
    <>
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto max-w-5xl px-4 py-3">
          <Link href="/activities" className="font-semibold text-brand-700">
            Athlete Activity Service
          </Link>
        </div>
      </header>
      <main className="mx-auto max-w-5xl px-4 py-12">
        <p className="text-sm font-medium text-slate-500">404</p>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">Page not found</h1>
        <p className="mt-2 text-sm text-slate-600">There is no page at this address. It may have moved, or the link may have a typo.</p>
        <p className="mt-6 flex flex-wrap gap-x-6 gap-y-2 text-sm">
          <Link href="/activities" className="font-medium text-brand-700 underline hover:text-brand-600">
            Go to your activities
          </Link>
          <Link href="/docs" className="font-medium text-brand-700 underline hover:text-brand-600">
            API reference
          </Link>
        </p>
      </main>
    </>
  );
}
