import type { Metadata } from "next";
import Link from "next/link";
import { ScrollRegion } from "@/components/ui/scroll-region";
import { PROBLEM_CODES } from "@/lib/http/errors";

export const metadata: Metadata = { title: "Problem types" };

export default function ProblemsIndex() {
  return (
    <main className="mx-auto max-w-2xl px-4 py-12">
      <h1 className="text-2xl font-semibold">Problem types</h1>
      <p className="mt-2 text-sm text-slate-600">Every error the API answers carries one of these codes.</p>
      {/* On a phone the codes (identifiers, not broken) make it wider than the screen: it scrolls in its box. */}
      <ScrollRegion label="Problem types" className="-mx-4 mt-6 overflow-x-auto px-4">
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Problem types</caption>
          <thead>
            <tr className="border-b text-slate-500">
              <th scope="col" className="py-2 pr-4">
                Status
              </th>
              <th scope="col" className="py-2 pr-4">
                Code
              </th>
              <th scope="col" className="py-2">
                Title
              </th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(PROBLEM_CODES).map(([code, p]) => (
              <tr key={code} className="border-b border-slate-100">
                <td className="py-2 pr-4">{p.status}</td>
                <td className="py-2 pr-4">
                  <Link href={`/problems/${code}`} className="font-mono text-brand-600 hover:underline">
                    {code}
                  </Link>
                </td>
                <td className="min-w-40 py-2">{p.title}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </main>
  );
}
