import Link from "next/link";
import { auth } from "@/lib/auth/next-auth";
import { ConsoleNav } from "@/components/console/nav";
import { SessionEndedBanner } from "@/components/console/session-ended-banner";
import { Providers } from "@/components/providers";
import { UploadQueueProvider } from "@/components/activities/upload-queue-provider";
import { signOutAction } from "../(auth)/actions";

export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const session = await auth();
  return (
    <Providers>
      <UploadQueueProvider>
        {/* The first stop of the keyboard: past the header and its navigation, to the page itself. */}
        <a
          href="#main"
          className="sr-only rounded-md bg-white px-3 py-2 text-sm font-medium text-brand-700 shadow focus:not-sr-only focus:absolute focus:left-4 focus:top-3 focus:z-50 focus:outline-none focus:ring-2 focus:ring-brand-500"
        >
          Skip to content
        </a>
        <header className="border-b border-slate-200 bg-white">
          <div className="mx-auto flex max-w-5xl flex-col gap-3 px-4 py-3">
            <div className="flex items-center justify-between gap-3">
              <Link href="/activities" className="font-semibold text-brand-700">
                Athlete Activity Service
              </Link>
              {session?.user && (
                <form action={signOutAction} className="flex items-center gap-3 text-sm">
                  <span className="hidden text-slate-600 sm:inline">{session.user.email}</span>
                  <button type="submit" className="rounded-md px-2 py-1 text-slate-700 hover:bg-slate-100">
                    Sign out
                  </button>
                </form>
              )}
            </div>
            {session?.user && <ConsoleNav />}
          </div>
        </header>
        {session?.user?.id && session.user.email && <SessionEndedBanner person={{ id: session.user.id, email: session.user.email }} />}
        {/* tabIndex -1: the skip link moves the focus here, not just the scroll position. */}
        <main id="main" tabIndex={-1} className="mx-auto max-w-5xl px-4 py-8 focus:outline-none">
          {children}
        </main>
      </UploadQueueProvider>
    </Providers>
  );
}
