import type { Metadata } from "next";
import Link from "next/link";
import { PROBLEM_CODES } from "@/lib/http/errors";

export const metadata: Metadata = { title: "Problem types" };

export default function ProblemsIndex() {
  return (
    <main className="mx-auto max-w-2xl px-4 py-12">
      <h1 className="text-2xl font-semibold">Problem types</h1>
      <p className="mt-2 text-sm text-slate-600">Every error the API answers carries one of these codes.</p>
      <table className="mt-6 w-full text-left text-sm">
        <thead>
          <tr className="border-b text-slate-500">
            <th className="py-2">Status</th>
            <th className="py-2">Code</th>
            <th className="py-2">Title</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(PROBLEM_CODES).map(([code, p]) => (
            <tr key={code} className="border-b border-slate-100">
              <td className="py-2">{p.status}</td>
              <td className="py-2">
                <Link href={`/problems/${code}`} className="font-mono text-brand-600 hover:underline">
                  {code}
                </Link>
              </td>
              <td className="py-2">{p.title}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
