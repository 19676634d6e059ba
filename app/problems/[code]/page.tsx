import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { isProblemCode, PROBLEM_CODES } from "@/lib/http/errors";

type Props = { params: Promise<{ code: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { code } = await params;
  return { title: isProblemCode(code) ? PROBLEM_CODES[code].title : "Problem" };
}

// The page behind every problem document's `type` URL (RFC 9457 §3.1.1).
export default async function ProblemPage({ params }: Props) {
  const { code } = await params;
  if (!isProblemCode(code)) notFound();
  const p = PROBLEM_CODES[code];
  return (
    <main className="mx-auto max-w-2xl px-4 py-12">
      <p className="text-sm text-slate-500">
        <Link href="/problems" className="hover:underline">
          Problem types
        </Link>
      </p>
      <h1 className="mt-2 text-2xl font-semibold">{p.title}</h1>
      <dl className="mt-4 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="text-slate-500">code</dt>
        <dd>
          <code>{code}</code>
        </dd>
        <dt className="text-slate-500">status</dt>
        <dd>{p.status}</dd>
      </dl>
      <p className="mt-6 leading-relaxed text-slate-700">{p.about}</p>
      <p className="mt-6 text-sm text-slate-600">
        Errors are RFC 9457 problem documents (<code>application/problem+json</code>). Branch on <code>code</code>; <code>detail</code> is
        prose and may change. See the <Link href="/docs" className="text-brand-700 underline hover:text-brand-600">API reference</Link>.
      </p>
    </main>
  );
}
